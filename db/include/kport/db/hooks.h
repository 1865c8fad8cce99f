// Records of push deliveries, commit verdict inputs, re-measures and revalidations
// (migration 0005). Conventions as in records.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kport/db/records.h"

namespace kport::db {

// One push as a webhook or the post-receive hook reported it, already verified.
struct PushDelivery {
  std::string delivery_id;            // X-GitHub-Delivery, X-Gitea-Delivery, X-Gitlab-Event-UUID, ...
  std::string source;                 // github, gitea, gitlab or git
  std::string repo;                   // Repository::name it resolved to
  std::string ref;                    // "refs/heads/main"
  std::string before_sha, after_sha;  // after is all zeros (or empty) when deleted
  bool deleted = false;
  bool forced = false;
  // A pull or merge request closed without being merged: every queued and running job of
  // the ref is cancelled (a running one at its runner's next heartbeat), the ref counts
  // as deleted (recorded outcome `deleted`). Stale when kport recorded another head.
  bool closed = false;
  std::string note;
  std::vector<Commit> commits;  // recorded (an existing sha is kept) before the pipeline
};

// What record_push did.
struct PushOutcome {
  bool duplicate = false;            // the delivery id was seen before: nothing changed
  std::string outcome;               // pipeline, deleted or ignored
  std::optional<Pipeline> pipeline;  // the delivery's pipeline (the first one's for a duplicate)
  std::int64_t superseded_jobs = 0;  // jobs of the ref cancelled (force push, delete: queued; closed: running too)
  bool stale = false;                // older than the ref's recorded head: recorded as ignored, nothing else changed
  std::string note;                  // as recorded: the delivery's, or why the store created no pipeline
};

// A re-measure of suspected performance regressions of one commit, target and GPU model.
struct Remeasure {
  std::string commit_sha, target, gpu_model;
  std::int64_t job_id = 0;
  std::string instances_json;  // ["gemm.tiny_mma.default", ...]
  std::int64_t created_ms = 0;
};

// Everything a commit's verdict is decided from.
struct VerdictInputs {
  std::vector<Job> jobs;              // of every pipeline of the commit
  std::vector<BuildRecord> builds;    // latest per (target, family, variant)
  std::vector<ResultRecord> results;  // latest per (target, GPU model, instance, dtype, shape)
  std::vector<Remeasure> remeasures;
};

// One passing, stable, timed figure of a series (GPU model, driver, instance, dtype,
// shape) and the code that produced it: the harness sha256 the result names, else
// "<commit>:<target>" (a re-measure runs the build its first measurement ran), and
// "/precise" or "/screen" (env.timing.precision: two ways of measuring are not A/A).
struct SeriesFigure {
  std::string gpu_model, driver, instance, dtype, shape;
  std::string code;
  double median_us = 0;
};

// Which series to read; an empty field matches any value.
struct SeriesFilter {
  std::string gpu_model, driver, instance, dtype, shape;
  std::string family;  // with gpu_model, dtype and shape: one index range
  // Set: the results of that library and of none only ("": of none).
  std::optional<std::string> repo = std::nullopt;
};

// One check of a case (GPU model, instance, dtype, shape), with the code it ran (as in
// SeriesFigure) and how its check job went as a whole.
struct CaseRunRecord {
  std::string gpu_model, instance, dtype, shape;
  std::string code, commit_sha, target;
  ResultStatus status = ResultStatus::passed;
  std::optional<std::int64_t> seed;
  std::int64_t result_id = 0, created_ms = 0;
  std::optional<std::int64_t> job_id;
  int job_results = 0, job_broken = 0;  // the job's results, and those crashed or timed out
};

// Which cases to read the runs of: those that failed, crashed or timed out at least
// once (on `commit_sha` when given), on `gpu_model` when given.
struct CaseRunFilter {
  std::string commit_sha, gpu_model;
};

// A GPU model or driver seen for the first time and the pipeline it opened.
struct Revalidation {
  std::string gpu_model, driver, arch;
  std::string previous_driver;  // the newest driver seen before for the model; empty if new
  std::optional<std::int64_t> pipeline_id;
  std::int64_t created_ms = 0;
};

}  // namespace kport::db
