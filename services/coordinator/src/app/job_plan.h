// Which jobs a pipeline gets, by the reason it exists: the one home of that rule.
//
//   reason                 jobs it is created with
//   push, new_target,      one build job per target (plan_builds). Each build that
//   manual                 succeeds spawns its checks in the same transaction, one per
//                          arch of porting::check_arches (db: spawn_checks). A push of a
//                          commit that already has a pipeline gets none (once_per_commit).
//   new_gpu, new_driver    one check job per library and target the GPU's arch checks
//                          (porting::checks_target), pinned to the GPU model, on that
//                          library's latest successful build of the target
//                          (plan_revalidation): every library with a build is checked
//                          again, not only the one that built last. A new driver
//                          re-checks only the instances best on the model now (each
//                          library's own best); a new GPU model (no best yet) checks
//                          everything.
//   re-measure             no pipeline of its own: one check job pinned to the GPU
//                          model, of the suspect instances only, on the build the first
//                          measurement used, in that build's pipeline (plan_remeasure),
//                          timing the baseline's harness in interleaved rounds ("paired").
//   measure request        a manual pipeline of one library (its repository) with one
//                          check job pinned to the GPU model, on that library's latest
//                          successful build of a target the GPU's arch checks, of every
//                          instance of the family on the one asked case only
//                          (plan_measure).
//
// Pure functions over plain data: the caller reads the store and writes the result with
// one store call. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kport/api/job_payload.h"
#include "kport/db/hooks.h"
#include "kport/db/records.h"

namespace kport::coordinator::app {

// Where a pipeline comes from: copied onto the pipeline as given.
struct PipelineOrigin {
  db::PipelineReason reason = db::PipelineReason::manual;
  std::string repo, ref, commit_sha, note;
};

// A job's payload and the purpose the store keeps beside it (the jobs.purpose column its
// queries read), set together so they cannot disagree.
void set_payload(db::JobSpec& spec, const api::JobPayload& payload);

// True for the reasons plan_builds serves (push, new_target, manual).
bool builds_from_scratch(db::PipelineReason reason) noexcept;

// One build job per target, in the order given, each carrying `payload_json` (which the
// checks it spawns inherit, with its purpose); once_per_commit for a push. A payload its
// runner cannot read keeps the check purpose: the runner fails the job, saying why.
db::NewPipeline plan_builds(const PipelineOrigin& origin, const std::vector<std::string>& targets, int max_attempts,
                            const std::string& payload_json = "");

// A known target with what a revalidation needs to know about it.
struct TargetState {
  db::Target target;
  std::vector<std::string> registered_arches;  // Store::target_check_arches
  std::optional<db::Job> latest_build;         // its newest succeeded build job, if any
};

// One library's side of a revalidation: its builds and its instances best on the GPU
// model now.
struct LibraryBuilds {
  std::string repo;                         // the library (repository); "" for builds of none
  std::vector<TargetState> targets;         // target_states(ctx, repo)
  std::vector<std::string> best_instances;  // Store::best_instances(gpu_model, repo)
};

// The revalidation pipeline of `rv` (gpu_model, driver, arch, previous_driver set): the
// checks of every library in `libraries`, in the order given, each on that library's
// builds and, for a new driver, of that library's best instances. The pipeline is of no
// repository (its checks' rows are each of their build's library); its commit is the
// first check's. No jobs when nothing the arch checks was ever built (the caller records
// the revalidation without a pipeline).
db::NewPipeline plan_revalidation(const db::Revalidation& rv, const std::vector<LibraryBuilds>& libraries,
                                  int max_attempts);
// The same for builds of one library (or of none).
db::NewPipeline plan_revalidation(const db::Revalidation& rv, const std::vector<TargetState>& targets,
                                  const std::vector<std::string>& best_instances, int max_attempts);

// A verdict's request to measure suspected slowdowns again.
struct RemeasureAsk {
  std::string target, gpu_model;
  std::string arch;  // empty: the arch of the check job that measured them
  std::vector<std::string> instances;
  // The baseline commit's harness for the target: timed in rounds interleaved with the
  // commit's own (A/B/A/B) when set.
  std::optional<api::PairedHarness> paired{};
};

// The re-measure job and the record that keeps it from being queued twice.
struct PlannedRemeasure {
  std::int64_t pipeline_id = 0;  // the build's pipeline
  db::Remeasure record;
  db::JobSpec job;
};

// Plans the re-measure of `ask` after check job `measured` of the same commit;
// `commit_jobs` are the commit's jobs (to find the succeeded build of ask.target).
// nullopt when no build of that target succeeded for the commit.
std::optional<PlannedRemeasure> plan_remeasure(const db::Job& measured, const RemeasureAsk& ask,
                                               const std::vector<db::Job>& commit_jobs, int max_attempts);

// A request to measure one (GPU model, op family, dtype, shape), already validated.
struct MeasureAsk {
  std::string gpu_model, arch;  // the GPU model and its arch
  std::string family, dtype;
  std::string shape_text;  // in the family's own order (porting::OpShape::text)
  std::string shape_key;   // canonical (porting::Shape::canonical)
  // The library measured: the pipeline's repository, so its results are that library's.
  // `targets` must hold that library's builds only (target_states(ctx, repo)). Empty:
  // no library (the results' library is then their commit's).
  std::string repo = {};
};

// The pipeline of a measure request (of repository ask.repo): one check job pinned to
// ask.gpu_model and arch, depending on the latest successful build in `targets` of the
// target it checks. Of the targets the
// arch checks (porting::checks_target) with a build, one of the arch's own is preferred,
// the arch-specific "a" target first (the build that uses all its features), then the
// newest build. Payload:
//   {"cases": [{"family", "dtype", "shape"}], "bench": true,
//    "best_request": {"gpu_model", "op", "dtype", "shape"}}
// (no "instances": every instance of the family is checked and timed on those cases
// only). nullopt when nothing the arch checks was built.
std::optional<db::NewPipeline> plan_measure(const MeasureAsk& ask, const std::vector<TargetState>& targets,
                                            int max_attempts);

}  // namespace kport::coordinator::app
