// Filters, pages and aggregate rows for kport::db::Store's read queries.
//
// Pagination is keyset: a page holds at most `limit` items (1..1000, default 100; a
// limit outside that range is refused with invalid_argument) ordered newest first by
// id, and `next_cursor` is set when more rows may follow; pass it back as `before_id`
// to get the next page. Keyset pages stay fast and stable while rows are inserted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kport/db/records.h"

namespace kport::db {

inline constexpr int k_max_page_limit = 1000;

template <typename T>
struct Page {
  std::vector<T> items;
  std::optional<std::int64_t> next_cursor;  // before_id for the next page
};

// Every set field narrows the query (AND).
struct ResultFilter {
  std::optional<std::string> commit_sha, target, gpu_model, family, variant, instance;
  std::optional<std::string> dtype, shape;
  std::optional<ResultStatus> status;
  std::optional<std::int64_t> job_id;
  std::optional<std::int64_t> since_ms;  // created_ms >= since_ms
  std::optional<std::int64_t> before_id;
  int limit = 100;
};

struct BuildRecordFilter {
  std::optional<std::string> commit_sha, target, family, variant;
  std::optional<BuildStatus> status;
  std::optional<std::int64_t> job_id;
  std::optional<std::int64_t> before_id;
  int limit = 100;
};

struct JobFilter {
  std::optional<std::int64_t> pipeline_id;
  std::optional<JobStatus> status;  // awaiting_runner selects queued checks with no runner
  std::optional<JobKind> kind;
  std::optional<std::string> commit_sha, target;
  std::optional<std::int64_t> before_id;
  int limit = 100;
  // The library the job belongs to: its pipeline's repository, else its commit's ("": neither).
  std::optional<std::string> repo = std::nullopt;
};

struct PipelineFilter {
  std::optional<std::string> commit_sha, repo;
  std::optional<PipelineReason> reason;
  std::optional<std::int64_t> before_id;
  int limit = 50;
};

// Counts for a commit: what ran and what came out of it.
struct CommitSummary {
  Commit commit;
  std::vector<std::int64_t> pipeline_ids;
  std::map<JobStatus, std::int64_t> jobs_by_status;
  std::map<BuildStatus, std::int64_t> builds_by_status;
  std::map<ResultStatus, std::int64_t> results_by_status;
  std::vector<std::string> targets;  // targets that have build records or results
};

// The current figure of one kernel instance on one GPU model, dtype and shape: the
// latest result of the newest commit measured there (summary table best_candidates,
// migration 0008). A row whose result did not pass (or was not timed) has no figures:
// that instance is out of the ranking until a newer result passes.
struct BestCandidate {
  std::string gpu_model, arch, family, dtype, shape;
  std::vector<std::pair<std::string, std::int64_t>> dims;  // parsed from shape, in order
  std::string instance, variant, target, commit_sha;
  std::int64_t commit_ms = 0;  // the commit's time, else the arrival of its first figure here
  ResultStatus status = ResultStatus::passed;
  std::string driver;
  std::optional<double> median_us, stddev_us;  // set only for a passing, timed result
  std::optional<std::int64_t> samples;
  std::optional<double> tflops, gbps, ratio, baseline_median_us;
  bool unstable = false;
  std::int64_t result_id = 0;          // the result the row shows
  std::int64_t passed_count = 0;       // passing results of commit_sha behind this row
  std::int64_t results_count = 0;      // all results of commit_sha behind it (> 1: re-measured)
  std::int64_t measured_ms = 0;        // created_ms of result_id
  std::string repo;                    // the library (repository) the instance belongs to
  std::string gpu_uuid;                // of result_id: the GPU that measured it ("" when unknown)
  std::optional<double> sm_clock_mhz;  // of result_id: the SM clock it was timed at
};

// How many results of a GPU model, family and dtype came from one driver.
struct DriverCount {
  std::string driver;
  std::int64_t results = 0;
  std::int64_t last_ms = 0;  // the newest of them
};

// What /api/v1/best reads of one (GPU model, family, dtype), from one snapshot: its
// best_candidates rows (ordered as Store::best_candidates orders them) and the drivers
// its results came from (as Store::result_drivers).
struct BestEvidenceRows {
  std::vector<BestCandidate> rows;
  std::vector<DriverCount> drivers;
};

// An instance whose build record is ok for a target (for provisional answers).
struct BuiltInstance {
  std::string target, family, variant, commit_sha;
  std::int64_t build_record_id = 0;
  std::int64_t created_ms = 0;
};

struct QueueStats {
  std::map<JobStatus, std::int64_t> jobs_by_status;  // awaiting_runner split out of queued
  std::int64_t runners_online = 0;
  std::map<RunnerRole, std::int64_t> runners_online_by_role;
};

}  // namespace kport::db
