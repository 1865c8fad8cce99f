// Whether the GPUs of one model time the same cases alike. A host of several GPUs spreads a
// pipeline's cases over them, and an answer may rank figures timed on different GPUs (the
// answer names them: selection.h gpus_note); that is sound only while the GPUs agree. Two
// GPUs agree when the same case at the same commit takes the same time on both within the
// noise of its kind: 1 % for a compute-bound family, 2 % for a memory-bound one (their
// median difference over the cases both timed). Where they do not, the pair's clocks say
// whether one ran slower (a lower SM clock) or differs at the same clock.
//
// Pure functions; the standard library only (part of kport::porting).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kport/porting/op_shape.h"

namespace kport::porting {

inline constexpr double k_gpus_agree_compute = 0.01;  // median |t_b / t_a - 1|, compute-bound families
inline constexpr double k_gpus_agree_memory = 0.02;   // ... memory-bound families

// One case (instance, dtype, shape) timed at one commit on two GPUs of a model.
struct SameCase {
  std::string gpu_a, gpu_b;  // their UUIDs, gpu_a < gpu_b
  std::string family;
  double median_a = 0, median_b = 0;  // us, > 0
  double clock_a = 0, clock_b = 0;    // the SM clock each was timed at, MHz; 0: not known
};

struct GpuPairAgreement {
  std::string gpu_a, gpu_b;
  int cases = 0;
  double median_ratio = 1;          // median of t_b / t_a over every case
  double clock_a = 0, clock_b = 0;  // median SM clock over the cases that have one; 0: none known
  struct ByBound {
    Bound bound = Bound::compute;
    int cases = 0;
    double tolerance = 0;    // k_gpus_agree_compute or _memory
    double median_diff = 0;  // median |t_b / t_a - 1|
    double p90_diff = 0;
    int within = 0;      // cases whose difference is within the tolerance
    bool agree = false;  // median_diff <= tolerance
  };
  std::vector<ByBound> bounds;  // compute first, then memory; only those with cases
  bool agree = false;           // every bound agrees
};

// The agreement of every pair of GPUs in `cases`, in the order of their UUIDs; a family
// `bound_of` does not know counts as compute-bound.
std::vector<GpuPairAgreement> gpu_agreement(
    std::span<const SameCase> cases, const std::function<std::optional<Bound>(std::string_view family)>& bound_of);

// One line a person reads: "GPU-a and GPU-b agree: 40 cases, compute-bound 0.3 % apart at the
// median (within 1 %), ..., SM clocks 1980 and 1980 MHz".
std::string describe(const GpuPairAgreement& pair);

}  // namespace kport::porting
