// Job-queue building blocks shared by the store's queue methods. Each runs on the
// writer connection inside the caller's transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kport/db/forge.h"
#include "kport/db/records.h"
#include "kport/db/retry.h"
#include "sqlite.h"

namespace kport::db::detail {

// Validates a spec (kind, target, arch, attempts, payload JSON) and inserts it queued.
Result<std::int64_t> insert_job(Connection& c, std::int64_t pipeline_id, const JobSpec& spec, std::int64_t now);
// Inserts specs in order; a depends_on of -(i+1) names the i-th job of this same call
// (resolved to its id), invalid_argument when it names no earlier job.
Result<std::vector<std::int64_t>> insert_jobs(Connection& c, std::int64_t pipeline_id, const std::vector<JobSpec>& jobs,
                                              std::int64_t now);
// The one path that creates a pipeline: the row and its jobs (insert_jobs), inside the
// caller's transaction so that whatever the caller records with it (a push delivery, a
// revalidation) commits with it or not at all. With once_per_commit and a commit that
// already has a pipeline, nothing is inserted and that (newest) pipeline is returned.
struct InsertedPipeline {
  std::int64_t id = 0;
  bool created = true;  // false: the commit's existing pipeline
};
Result<InsertedPipeline> insert_pipeline(Connection& c, const NewPipeline& pipeline, std::int64_t now);
// "commit 0123456789ab is already validated by pipeline 7"
std::string already_validated(const std::string& commit_sha, std::int64_t pipeline_id);
Result<std::optional<Pipeline>> load_pipeline(Connection& c, std::int64_t id);
// The outgoing delivery queue (store_forge.cpp): a delivery's fields checked, and one
// inserted pending, due now.
Status check_delivery(const NewDelivery& d);
Status insert_delivery(Connection& c, const NewDelivery& d, std::int64_t now);
// online_since empty: the stored status (awaiting_runner reads as queued), which is
// what state transitions must look at.
Result<std::optional<Job>> load_job(Connection& c, std::int64_t id,
                                    std::optional<std::int64_t> online_since = std::nullopt);
// Reports the stored status: awaiting_runner is only a view of queued.
inline Job stored(Job j) {
  if (j.status == JobStatus::awaiting_runner) j.status = JobStatus::queued;
  return j;
}
// Ends a running job's lease without a report from its runner (expired, abandoned,
// runner deregistered): cancelled if cancel was requested, failed with
// "<why> after N attempts" at the last attempt, else back to queued with `backoff`.
Result<JobStatus> release_lease(Connection& c, const Job& job, std::int64_t now, const std::string& why,
                                const RetryDelay& backoff);
// Returns a running job to the queue (attempt already counted), recording why; it is
// claimable from now + backoff.others_ms, by its last runner from now + backoff.same_ms.
Status requeue_job(Connection& c, const Job& job, const std::string& reason, std::int64_t now,
                   const RetryDelay& backoff);
// Moves a job to a final status, clears the runner's current job, and cancels queued
// jobs that depended on it when it did not succeed.
Status finish_job(Connection& c, const Job& job, JobStatus status, const std::optional<std::string>& reason,
                  std::int64_t now);
// Enqueues the check jobs of a finished build job in its pipeline: for each arch of
// porting::check_arches(target's arch, its registered check arches), one job, or, when
// several GPU runners of that arch (one GPU model) were heard from since `online_since`,
// one per shard of porting::plan_check_shards (payload "families" / "families_except"
// and "shard"); depends_on the build, same commit, target, attempts and payload. Nothing
// when the target is unknown. Call it in the transaction that ends the build; it does
// not look at the build's status.
Result<std::vector<std::int64_t>> spawn_checks(Connection& c, const Job& build, std::int64_t now,
                                               std::int64_t online_since);
// One check of `build` (arch set; gpu_model too when it asks for one model) as it is, or,
// when several GPU runners could take it (check_workers: online since `online_since`, of
// one model) and its payload does not already choose families, one spec per shard of
// porting::plan_check_shards, the families weighed by the library's latest plain check of
// the target and arch in a pipeline other than `weigh_excluding` (0: any). spawn_checks
// and a revalidation's checks both split here.
Result<std::vector<JobSpec>> split_check(Connection& c, const JobSpec& check, const Job& build,
                                         std::int64_t online_since, std::int64_t weigh_excluding);
// A runner with its targets; `online` is left false (the caller knows the clock).
Result<std::optional<Runner>> load_runner(Connection& c, std::int64_t id);
// The id of the repository registered as `name`; not_found (saying to register it) if none.
Result<std::int64_t> repository_id(Connection& c, const std::string& name);
Result<std::vector<std::int64_t>> dependents(Connection& c, std::int64_t job_id);

// The holder rule, the one check before anything is written into a job (heartbeat,
// build records, results, log, complete, fail): `runner_id` holds the job's live lease
// (not expired at `now`), for `attempt`, its current attempt. Errors, in this order:
// conflict when `attempt` is not the current one (stale, or never claimed);
// forbidden when another runner holds that attempt; conflict when the attempt ended
// (the job finished or went back to the queue) or its lease expired.
Status check_holder(const Job& job, std::int64_t runner_id, int attempt, std::int64_t now);
// Loads the job and applies check_holder; not_found when there is no such job.
Result<Job> holder_job(Connection& c, std::int64_t job_id, std::int64_t runner_id, int attempt, std::int64_t now);
// Provenance a row takes from its job (commit, target, GPU model, arch): an empty
// `value` takes `expected`; another value is a conflict naming `field` (the API's
// name). `what` names the row ("result 3 (gemm.simt.64x64)").
Status from_job(std::string& value, const std::string& expected, std::string_view field, const std::string& what,
                std::int64_t job_id);

}  // namespace kport::db::detail
