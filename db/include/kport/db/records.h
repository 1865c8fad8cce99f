// Plain records that go into and come out of kport::db::Store.
//
// Conventions: times are Unix milliseconds (int64); fields named *_json hold one JSON
// document as text (the store checks that it parses and stores it verbatim; an empty
// string is stored as "{}"); ids are database row ids (> 0). A std::optional field that
// is empty is SQL NULL. Records are values: copy them freely, no thread affinity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kport/db/types.h"

namespace kport::db {

// ---- catalog -------------------------------------------------------------------

struct Target {
  std::string name;                // "sm_90a"
  std::string arch;                // "9.0": the compute capability its SASS runs on
  std::string features_json;       // {"wgmma":true,"max_dyn_smem":232448,...}
  std::string toolkit;             // CUDA toolkit version that first listed it, "12.8"
  std::int64_t first_seen_ms = 0;  // set by the store on first upsert
  bool is_new = false;             // flagged new until acknowledged
};

struct GpuModel {
  std::string name;  // "NVIDIA H200"
  std::string arch;  // "9.0"
  std::int64_t first_seen_ms = 0;
  std::int64_t last_seen_ms = 0;
  std::vector<std::string> drivers;  // driver versions seen with it, ascending
};

struct KernelInstance {
  std::string name;           // unique, "gemm.wgmma_tma.128x256x64_s4"
  std::string family;         // "gemm"
  std::string variant;        // "wgmma_tma"
  std::string features_json;  // features the variant needs: ["wgmma","tma"]
  std::string config_json;    // {"tile_m":128,...}
  // The dtypes it runs, as the harness lists them ("bf16", "fp16", "fp32"); nullopt when
  // the publisher did not say (then only a passing result shows that it runs a dtype).
  std::optional<std::vector<std::string>> dtypes = std::nullopt;
  // The library (repository) that published it: an instance is named within its library,
  // so two libraries' instances of one name are two rows. "" for an operator's upload.
  std::string repo = {};
};

// A variant of the kernel library with the features it declares, whether or not any
// target built it yet (a harness lists the variants it left out, too).
struct KernelVariant {
  std::string family;         // "gemm"
  std::string variant;        // "tcgen05"
  std::string features_json;  // ["tcgen05","tmem","tma","mbarrier"]
};

// An op family a library declared (migration 0019): who declared it and its declaration
// as GET /api/v1/families answers it.
struct FamilyRecord {
  std::string repo;             // the repository whose build reported it
  std::string library;          // the manifest's name
  std::string name;             // "layernorm"
  std::string definition_json;  // {"name": ..., "dims": [...], "dtypes": [...], ...}
  std::int64_t updated_ms = 0;
};

struct Repository {
  std::int64_t id = 0;
  std::string name;  // "kport-kernels"
  std::string url;   // clone URL or local path
  std::int64_t created_ms = 0;
};

struct Commit {
  std::string sha;   // 40 hex digits
  std::string repo;  // Repository::name
  std::optional<std::string> parent_sha;
  std::string message;
  std::string author;
  std::int64_t time_ms = 0;  // author time
};

// ---- pipelines and jobs --------------------------------------------------------

// What to enqueue. A build job needs target; a check job needs target and arch (the GPU
// class it must run on) and may pin gpu_model. depends_on names the build job a check
// job consumes the artifact of.
struct JobSpec {
  JobKind kind = JobKind::build;
  std::string commit_sha;
  std::string target;
  std::optional<std::string> arch;       // check: required runner arch
  std::optional<std::string> gpu_model;  // check: optional exact GPU model
  std::optional<std::int64_t> depends_on;
  int max_attempts = 3;
  std::string payload_json;                          // free-form instructions for the runner (variants, shapes)
  JobPurpose purpose = JobPurpose::check;            // the payload's purpose; checks a build spawns inherit it
  std::optional<std::string> driver = std::nullopt;  // check: optional exact driver (migration 0024)
};

struct NewPipeline {
  PipelineReason reason = PipelineReason::push;
  std::string repo;  // Repository::name
  std::string ref;   // "refs/heads/main"
  std::string commit_sha;
  std::string note;           // "new target sm_120f listed by nvcc 13.0"
  std::vector<JobSpec> jobs;  // enqueued atomically with the pipeline
  // true: nothing is created when the commit already has a pipeline, decided in the
  // creating transaction, so a pushed commit is validated once however its pushes race.
  bool once_per_commit = false;
};

struct Pipeline {
  std::int64_t id = 0;
  PipelineReason reason = PipelineReason::push;
  std::string repo, ref, commit_sha, note;
  std::int64_t created_ms = 0;
  PipelineStatus status = PipelineStatus::queued;  // derived from its jobs
  std::int64_t jobs_total = 0, jobs_done = 0;      // done: succeeded|failed|cancelled
};

struct Job {
  std::int64_t id = 0;
  std::int64_t pipeline_id = 0;
  JobKind kind = JobKind::build;
  JobStatus status = JobStatus::queued;  // awaiting_runner is derived, see store.h
  std::string commit_sha;
  std::string target;
  std::optional<std::string> arch;
  std::optional<std::string> gpu_model;
  std::optional<std::string> driver;  // only a runner reporting this driver claims it
  std::optional<std::int64_t> depends_on;
  int attempt = 0;  // number of claims so far; the current attempt while running
  int max_attempts = 3;
  std::optional<std::int64_t> runner_id;  // lease holder while running
  std::optional<std::int64_t> lease_expires_ms;
  bool cancel_requested = false;
  std::string payload_json;
  JobPurpose purpose = JobPurpose::check;
  std::optional<std::string> failure_reason;
  std::int64_t created_ms = 0;
  std::optional<std::int64_t> started_ms;     // first claim
  std::optional<std::int64_t> finished_ms;    // reached a final status
  std::optional<std::int64_t> not_before_ms;  // queued after a failed attempt: claimable from then
};

// Where a queued job stands (Store::queue_place).
struct QueuePlace {
  std::int64_t ahead = 0;         // claimable queued jobs the same runners take first
  std::int64_t runners = 0;       // online runners that could take it
  std::int64_t runners_busy = 0;  // of those, holding a job now
};

// ---- runners -------------------------------------------------------------------

struct RunnerCapabilities {
  std::string toolkit;               // build: CUDA toolkit version
  std::vector<std::string> targets;  // build: targets it can compile for
  int cores = 0;
  std::string gpu_model;  // gpu role
  std::string gpu_uuid;
  std::string arch;  // gpu role: "9.0"
  std::string driver;
  std::string extra_json;  // anything else the runner reports
};

struct NewRunner {
  std::string name;
  RunnerRole role = RunnerRole::build;
  RunnerCapabilities caps;
};

struct Runner {
  std::int64_t id = 0;
  std::string name;
  RunnerRole role = RunnerRole::build;
  RunnerCapabilities caps;
  std::int64_t registered_ms = 0;
  std::int64_t last_heartbeat_ms = 0;
  std::optional<std::int64_t> deregistered_ms;
  std::optional<std::int64_t> current_job;
  bool online = false;  // not deregistered and heard from within Options::runner_online_ms
};

// register_runner's answer: the plain token is returned once and stored only hashed.
struct RegisteredRunner {
  Runner runner;
  std::string token;
};

// ---- artifacts, build records, results, logs ------------------------------------

struct Artifact {
  std::string sha256;  // 64 lowercase hex digits, primary key
  std::int64_t size = 0;
  std::string name;  // "gemm_sm_90a.cubin"
  std::string kind;  // "cubin", "fatbin", "log", "tarball"
  std::string path;  // absolute path of the blob in the store's artifact directory
  std::int64_t created_ms = 0;
};

struct BuildRecord {
  std::int64_t id = 0;  // set by the store
  std::optional<std::int64_t> job_id;
  int attempt = 0;
  std::string commit_sha;
  std::string target;
  std::string family;
  std::string variant;
  BuildStatus status = BuildStatus::ok;
  std::string message;  // compiler diagnostics or why not applicable
  std::optional<int> registers;
  std::optional<std::int64_t> spill_stores_bytes, spill_loads_bytes;
  std::optional<std::int64_t> shared_mem_bytes, stack_frame_bytes, constant_mem_bytes;
  std::string instruction_audit_json;  // {"wgmma":12,"hmma":0,...}
  std::optional<std::string> artifact_sha256;
  // The variant's kernel in the repository ("kernels/gemm/simt/gemm_simt.cu", line of its
  // first __global__), when the build runner found it (migration 0016).
  std::optional<std::string> source_path;
  std::optional<int> source_line;
  // The environment the library's harness runs with, {"NAME": "value"} with its
  // placeholders unexpanded (the manifest's `env`; migration 0021); "{}" when none.
  std::string harness_env_json = "{}";
  std::int64_t created_ms = 0;  // set by the store
};

struct ResultRecord {
  std::int64_t id = 0;  // set by the store
  // provenance
  std::optional<std::int64_t> job_id;
  int attempt = 0;
  std::string commit_sha, target, family, variant, instance, dtype;
  std::string shape;  // canonical "m=4096,n=4096,k=4096" (keys in the kernel's order)
  std::string toolkit;
  std::optional<std::int64_t> runner_id;
  std::string gpu_model, gpu_uuid, arch, driver;
  std::optional<double> sm_clock_mhz;
  std::string env_json;
  ResultStatus status = ResultStatus::passed;
  std::string message;  // why it failed/crashed, empty when passed
  // numerics
  std::optional<double> max_abs_err, max_rel_err, normwise_rel_err, tolerance;
  std::optional<std::int64_t> nan_inf_count, seed;
  // timing
  std::optional<double> median_us, stddev_us;
  std::optional<std::int64_t> samples;
  std::optional<std::int64_t> samples_dropped;  // timed samples dropped at a throttled SM clock (migration 0011)
  std::optional<double> tflops, gbps;
  std::string baseline_name;
  std::optional<double> baseline_median_us, ratio;
  // The bench rounds disagreed beyond the measured noise even after a re-measure: the
  // figure is kept but never wins a tie or counts as a regression on its own.
  bool unstable = false;
  // The metrics beyond these columns, by name (a JSON object, migration 0014): what the
  // coordinator's metric table names; the store keeps it as given.
  std::string metrics_json = "{}";
  std::int64_t created_ms = 0;  // set by the store
  // The library (repository) the result is of, set by the store from its job's pipeline,
  // the build that job checks, or its commit (migration 0020); "" for none.
  std::string repo;
};

// One answer of put_results / put_build_records, in input order.
// Who writes into a job, for the holder rule: the runner and the attempt it claims.
struct JobWriter {
  std::int64_t job_id = 0;
  std::int64_t runner_id = 0;
  int attempt = 0;
};

struct PutOutcome {
  std::int64_t id = 0;     // the stored row (the earlier one for a duplicate)
  bool duplicate = false;  // the same (job, attempt, key) was already stored
};

struct LogChunk {
  std::int64_t seq = 0;  // increasing per job; pass the last one back to page on
  int attempt = 0;
  std::int64_t created_ms = 0;
  std::string text;
};

}  // namespace kport::db
