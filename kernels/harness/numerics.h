// Error statistics of an output against its reference, and the pass/fail rule of `check`
// (tolerances in tolerance.h). Host-only.
#pragma once

#include <cstddef>
#include <string>

#include "tolerance.h"
#ifndef __CUDACC__
#include "json_out.h"
#endif

namespace kport::harness {

struct CompareStats {
  double sum_sq_diff = 0;  // over finite outputs
  double sum_sq_ref = 0;
  double max_abs_diff = 0;
  double max_abs_ref = 0;
  // The largest magnitude an element is judged against: max|ref|, or above it where a floor
  // raised an element's (compare_host); 0 when no floor was given (then max_abs_ref).
  double max_abs_scale = 0;
  unsigned long long nonfinite = 0;  // NaN or Inf in the output (poison left unwritten, too)
  std::size_t compared = 0;
};

// Accumulates out[i] vs ref[i] into `stats` (so several row samples add up). With `floor`,
// each element's magnitude in the normwise error's denominator and in the largest error's
// bound is at least floor[i]: an element whose exact value is a sum that cancels far below
// the size of its terms is judged against the terms' size, not against what cancellation
// left (see tolerance.h).
void compare_host(const float* out, const double* ref, std::size_t n, CompareStats& stats,
                  const double* floor = nullptr);

// Adds the statistics of another part of an output (a group's valid rows) into `total`.
void add_stats(CompareStats& total, const CompareStats& part);

// ||out - ref|| / ||ref||, or the absolute norm of the difference when ref is all zero.
double normwise_error(const CompareStats& s);

struct Verdict {
  bool passed = false;
  std::string reason;  // the first rule broken, empty when passed
};

// lse_max_abs < 0 means "no lse to judge".
Verdict judge(const CompareStats& s, const Tolerance& tol, double lse_max_abs = -1.0,
              unsigned long long lse_nonfinite = 0);

#ifndef __CUDACC__
Json stats_json(const CompareStats& s);
#endif

}  // namespace kport::harness
