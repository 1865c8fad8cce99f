// Best-kernel selection: for (GPU model, op family, dtype, shape), which instance to
// use, how sure we are, and the evidence.
//
// Rules (DESIGN.md, "Best kernel per GPU"):
//  - Among instances whose numerics passed on that GPU model, the fastest by median.
//  - Instances whose medians lie within measured noise of the best are reported as a
//    tie (see is_tie()).
//  - The query shape maps to the nearest measured shape (Shape::distance); the answer
//    says whether the match was exact.
//  - With no comparable measurement on that GPU model the answer is *provisional*:
//    instances that build for the GPU's target, ranked by their measurements on the
//    nearest measured arch, with the reason spelled out.
// Pure functions over the rows given: no I/O, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kport/porting/shape.h"

namespace kport::porting {

struct Measurement {  // one result whose numerics passed and that was timed
  std::int64_t result_id = 0;
  std::string instance;   // "gemm.wgmma_tma.128x256x64_s4"
  std::string variant;    // "wgmma_tma"
  std::string target;     // "sm_90a"
  std::string gpu_model;  // "NVIDIA H200"
  std::string arch;       // "9.0"
  std::string commit;
  Shape shape;
  double median_us = 0;
  double stddev_us = 0;
  std::int64_t samples = 0;
  std::int64_t measured_at_ms = 0;
};

struct BuildCandidate {  // an instance that built for the query's target
  std::string instance;
  std::string variant;
};

struct SelectionQuery {
  std::string gpu_model;  // may be a model never seen (then only provisional answers)
  std::string arch;       // "10.0"; needed for provisional ranking
  std::string target;     // "sm_100a"
  Shape shape;
};

struct Ranked {
  std::string instance;
  std::string variant;
  std::optional<Measurement> evidence;  // absent for a provisional candidate never measured
  bool tie_with_best = false;
  double slowdown = 1.0;  // median / best median (1.0 for the best and unmeasured ones)
};

struct Selection {
  enum class Kind { measured, provisional, none };
  Kind kind = Kind::none;
  std::string reason;  // why provisional or none; empty for a plain measured answer
  std::optional<Shape> matched_shape;
  bool exact_shape = false;
  std::string evidence_gpu_model;  // whose measurements ranked the answer
  std::string evidence_arch;
  std::vector<Ranked> ranking;  // best first
};

const char* kind_name(Selection::Kind k);

// Two medians tie when they differ by no more than the larger of 1% of the faster
// one and twice their combined standard deviation: run-to-run noise on a GPU is a
// percent or so even when one run's spread is tighter.
bool is_tie(const Measurement& best, const Measurement& other);

// `on_gpu`: passing, timed results on query.gpu_model for the family and dtype.
// `elsewhere`: the same from other GPU models (used only for provisional answers).
// `builds`: instances that built for query.target (provisional candidates).
// Several results of one instance at one shape: the most recent one counts, so a
// regression shows up in the answer rather than hiding behind an old fast run.
Selection select_best(const SelectionQuery& query, std::span<const Measurement> on_gpu,
                      std::span<const Measurement> elsewhere,
                      std::span<const BuildCandidate> builds);

}  // namespace kport::porting
