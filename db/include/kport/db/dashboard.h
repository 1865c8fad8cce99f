// Read models of the dashboard (kport::db::Store's dashboard queries, store_dashboard.cpp).
//
// They read the result_rollup summary (migration 0003, kept by a trigger on results),
// build_records and best_candidates, so each costs a few thousand rows whatever the
// size of the result history. Records are plain values; times are Unix milliseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kport/db/records.h"

namespace kport::db {

// One (family, variant) on a target: the facts its bring-up stage is decided from
// (porting's decide_stages), its figures and its evidence.
struct VariantBoard {
  std::string family, variant;
  // Declared features (JSON array text from kernel_variants); unset when unknown.
  std::optional<std::string> features_json;
  // Its latest build record at the stage commit; unset when it has none there.
  std::optional<std::int64_t> build_id, build_job_id;
  std::optional<std::string> build_status, build_commit;
  std::string build_message;
  std::optional<int> registers;
  std::optional<std::int64_t> spill_bytes, shared_mem_bytes;
  // The latest result per (GPU model, instance, dtype, shape) at the stage commit, on GPUs
  // whose arch checks the target (its arch or its check arches). failed: failed, crashed
  // or timed out (not unsupported).
  std::int64_t passed = 0, failed = 0, measured = 0;
  std::optional<double> max_ratio, max_tflops, max_gbps;
  std::optional<std::int64_t> pass_result_id, fail_result_id;  // latest of each
  // Shapes (gpu, dtype, shape) where one of its instances is the fastest passing one.
  std::int64_t selected = 0;
  // History, any commit: when each stage was first reached, as the author time of the
  // commit that reached it (the burndown); unset while never reached.
  std::optional<std::int64_t> built_ms, numerics_ms, measured_ms;
};

struct TargetBoard {
  Target target;
  std::vector<std::string> check_arches;  // the target's own arch first
  // The commit the stages are of: the one asked for, else the target's latest commit
  // that has a build (by author time, else build time); unset when never built.
  std::optional<std::string> stage_commit;
  // The library (repository) the board is of: the one asked for, else the stage commit's;
  // unset before the target's first build. Another library's variants, builds and
  // results never appear on it.
  std::optional<std::string> repo;
  std::vector<std::string> repositories;  // every library with a build of the target
  std::vector<VariantBoard> variants;     // the library's variants, by family then variant
};

// One kernel configuration on one GPU model at one commit (the kernel page's points).
struct KernelPoint {
  std::string gpu_model, commit_sha;
  // The commit's author time; when kport knows none (a commit queued by hand, never posted
  // nor pushed: time 0), when its first result of the point arrived.
  std::int64_t commit_time_ms = 0;
  std::int64_t results = 0;                   // passing results behind the point
  double median_us = 0;                       // mean of their medians
  double low_us = 0, high_us = 0;             // min(median - stddev), max(median + stddev)
  std::optional<double> tflops, gbps, ratio;  // means
  std::int64_t latest_result_id = 0;
};

// The best throughput measured on a GPU model for an op and dtype, by any kernel
// instance or by the vendor baseline measured beside it (baseline = figure / ratio).
struct GpuPeak {
  std::string gpu_model;
  std::optional<double> tflops, gbps;
};

}  // namespace kport::db
