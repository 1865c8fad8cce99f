// kport::db::Store: the coordinator's SQLite database.
//
// What: every persistent fact kport knows (catalog, commits, pipelines, the job queue,
// runners, artifacts, build records, results, logs) behind typed, thread-safe methods.
//
// Ownership: a Store owns one SQLite file (plus its WAL) and, when configured, an
// artifact directory. Only one process may open a database at a time (the coordinator);
// open() takes no lock for that, the deployment guarantees it. Destroying the Store
// drains queued writes, commits them and checkpoints the WAL.
//
// Threads: every public method may be called from any thread concurrently. Writes go to
// one writer thread that groups queued requests into one transaction (group commit);
// a write method returns only after its transaction committed, so an acknowledged write
// survives a process kill. A failing request inside a batch is rolled back alone (a
// savepoint each) and does not fail its neighbours. Reads run on a small pool of reader
// connections and see every write acknowledged before they started.
//
// Errors: no exception crosses this API. Errors carry kport::Errc: invalid_argument for
// bad input (the message names the field), not_found, conflict for a state that forbids
// the request (stale attempt, lease of another runner), unavailable when SQLite stays
// busy or the store is closing, internal for anything SQLite reports unexpectedly.
//
// Queue state machine (jobs):
//   queued --claim--> running --complete--> succeeded
//                        |  --fail(retry, attempts left)--> queued
//                        |  --fail / last attempt--> failed
//                        |  --lease expired, attempts left--> queued (attempt counted)
//                        |  --lease expired, last attempt--> failed
//                        |       ("lease expired after N attempts")
//                        `--cancel--> cancel_requested stays running until the runner
//                           completes/fails it (-> cancelled) or its lease expires
//                           (-> cancelled); the runner learns it from heartbeat().
//   queued --cancel--> cancelled at once.
//   failed | cancelled --rerun--> queued: the attempt count goes on (earlier attempts keep
//                           their logs and results), with `attempts` more allowed; its
//                           start, finish and reason are cleared. A succeeded, queued or
//                           running job is not re-run (conflict). A check whose build is
//                           not succeeded waits for it (re-run the build too). A re-run
//                           reopens the pipeline's forge report (a new check run).
//   A check job with depends_on is claimable only once that build job succeeded.
//   awaiting_runner is derived, not stored: queries report it for a queued check job
//   while no online gpu runner of its arch (and gpu_model, if pinned) exists.
//   claim() picks the oldest claimable queued job the runner matches: build jobs for
//   build runners whose targets include the job's target; check jobs for gpu runners
//   whose arch equals the job's arch (and gpu_model, if pinned).
//   When a build job succeeds, complete() enqueues in the same transaction one check
//   job per arch of porting::check_arches: the target's own arch plus those registered
//   with set_target_check_arches; depends_on = the build job, same pipeline, commit,
//   target and payload; their ids come back in CompleteReply::spawned. Coordinators
//   wanting a different fan-out pass spawn_checks=false and call enqueue().
//   Every pipeline is created by one insert path, with its jobs, in the transaction of
//   the method that creates it (create_pipeline, record_push, open_revalidation).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/env.h"
#include "kport/common/result.h"
#include "kport/db/best_requests.h"
#include "kport/db/bisections.h"
#include "kport/db/dashboard.h"
#include "kport/db/forge.h"
#include "kport/db/hooks.h"
#include "kport/db/queries.h"
#include "kport/db/records.h"
#include "kport/db/retry.h"
#include "kport/db/types.h"
#include "kport/porting/gpu_agreement.h"

namespace kport::db {

struct Options {
  std::string path;          // database file; created when missing
  std::string artifact_dir;  // content-addressed blobs; empty: artifacts disabled
  int readers = 4;           // reader connections
  int busy_timeout_ms = 5000;
  int max_batch = 512;                     // write requests per transaction at most
  std::int64_t lease_ms = 60'000;          // default lease claim() grants
  std::int64_t runner_online_ms = 90'000;  // a runner is online if heard from within this
  Env* env = nullptr;                      // the clock's seam; nullptr: Env::system() (tests inject their own)
  RetryPolicy retry;                       // backoff of a job sent back to the queue
  std::function<double()> jitter;          // draws in [0, 1) for it; default uniform random
  // false: synchronous=NORMAL, committed writes survive a process kill but the last
  // ones may roll back on power loss. true: synchronous=FULL, fsync on every commit.
  bool fsync_every_commit = false;
};

// The schema version this build of kport knows (highest migration number).
int schema_version() noexcept;

struct Claim {
  Job job;  // status running, attempt already incremented, lease set
  std::int64_t lease_expires_ms = 0;
  bool held = false;  // the runner already held this lease: the same attempt, unchanged
};

struct HeartbeatReply {
  std::int64_t lease_expires_ms = 0;
  bool cancel_requested = false;  // stop work and call fail(); the job ends cancelled
};

struct CompleteReply {
  JobStatus status = JobStatus::succeeded;  // the job's status afterwards
  bool duplicate = false;                   // this attempt was already reported
  std::vector<std::int64_t> spawned;        // check jobs enqueued by this completion
  RetryDelay retry_in;                      // status queued: when it is claimable again
};

struct ExpiredLease {
  std::int64_t job_id = 0;
  int attempt = 0;
  std::int64_t runner_id = 0;
  JobStatus status = JobStatus::queued;  // queued (retry), failed or cancelled
  RetryDelay retry_in;                   // status queued: when it is claimable again
};

class Store {
 public:
  // Opens (creating if needed) the database, applies pending migrations in one
  // transaction each, and starts the writer. Fails with `unavailable` when the file
  // cannot be opened and with `conflict` when it was written by a newer kport:
  // "database schema version 7 is newer than this kport (5); upgrade kport".
  static Result<std::unique_ptr<Store>> open(Options options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const Options& options() const noexcept;
  // Migration versions recorded in schema_migrations, ascending.
  Result<std::vector<int>> applied_migrations();
  // Checkpoints the WAL into the main file (TRUNCATE); safe at any time.
  Status checkpoint();
  // Write transactions committed since open; with concurrent writers it grows slower
  // than the number of write calls (group commit). For /metrics.
  std::uint64_t committed_batches() const;

  // ---- catalog ---------------------------------------------------------------------
  // Inserts or updates a target; returns true when it was not known before (it is then
  // flagged new). first_seen_ms and an existing is_new flag are kept on update.
  Result<bool> upsert_target(const Target& target);
  Status acknowledge_target(std::string_view name);  // clears is_new
  Result<std::optional<Target>> get_target(std::string_view name);
  Result<std::vector<Target>> list_targets();
  // Arches registered to check this target's builds besides its own arch (see the
  // state machine above); target_check_arches returns the registered list only.
  Status set_target_check_arches(std::string_view target, const std::vector<std::string>& arches);
  Result<std::vector<std::string>> target_check_arches(std::string_view target);
  // Records a GPU model and driver seen (register_runner does it for gpu runners);
  // returns true when the model is new, or the driver is new for it.
  Result<bool> record_gpu_model(std::string_view name, std::string_view arch, std::string_view driver);
  Result<std::vector<GpuModel>> list_gpu_models();
  // The SM count GPU runners of `gpu_model` registered (the most recently registered: a
  // registration changes it, a heartbeat never);
  // 0 when none said.
  Result<int> gpu_sm_count(const std::string& gpu_model);
  // Every case (instance, dtype, shape) timed at one commit on two GPUs of `gpu_model`
  // (passing, timed results of different gpu_uuids; a re-measure on one GPU pairs each
  // time), the pair's UUIDs in order: what porting::gpu_agreement judges. At most `limit`
  // pairs, the newest commits' first.
  Result<std::vector<porting::SameCase>> same_cases_on_gpus(std::string_view gpu_model, int limit = 20000);

  // Inserts or updates instances (and their families and variants) by name.
  Status upsert_kernel_instances(const std::vector<KernelInstance>& instances);
  // Records variants and their declared features (the planner's input for a target
  // never built); invalid_argument names the variant without a family or name.
  Status upsert_kernel_variants(const std::vector<KernelVariant>& variants);
  Result<std::vector<KernelInstance>> list_kernel_instances(std::optional<std::string> family = {});
  // Known variants with their declared features (a harness lists those it left out too).
  Result<std::vector<KernelVariant>> list_kernel_variants(std::optional<std::string> family = {});

  // Replaces the families `library` of `repo` declared (in their manifest's order) with
  // `families`; an empty list forgets them. invalid_argument for a record without a name
  // or whose definition is not valid JSON; nothing is stored then.
  Status put_families(const std::string& repo, const std::string& library, const std::vector<FamilyRecord>& families);
  // Every declared family, the earliest reported first, then by repository, library
  // and manifest order (a later declaration of a name is the one that counts).
  Result<std::vector<FamilyRecord>> list_families();

  Result<Repository> upsert_repository(std::string_view name, std::string_view url);
  Result<std::vector<Repository>> list_repositories();
  // Inserts a commit (its repository must exist); an existing sha is left unchanged.
  Status put_commit(const Commit& commit);
  Result<std::optional<Commit>> get_commit(std::string_view sha);

  // ---- pipelines and the job queue ---------------------------------------------------
  // Creates the pipeline and enqueues its jobs atomically (invalid_argument, and
  // nothing created, when any job is invalid or commit_sha is empty). A JobSpec's
  // depends_on may be -(i+1) to name the i-th job of this same pipeline (resolved to
  // its id); record_push and open_revalidation resolve it the same way. With
  // once_per_commit, conflict ("commit ... is already validated by pipeline N") when the
  // commit has a pipeline.
  Result<Pipeline> create_pipeline(const NewPipeline& pipeline);
  Result<std::vector<std::int64_t>> enqueue(std::int64_t pipeline_id, const std::vector<JobSpec>& jobs);
  Result<std::optional<Pipeline>> get_pipeline(std::int64_t id);
  Result<Page<Pipeline>> list_pipelines(const PipelineFilter& filter);
  Result<std::optional<Job>> get_job(std::int64_t id);
  Result<Page<Job>> list_jobs(const JobFilter& filter);

  // Leases the oldest matching queued job to the runner; nullopt when none matches.
  // lease_ms <= 0 uses Options::lease_ms. Refuses unknown runners (not_found) and
  // deregistered ones (gone). A runner token is one worker and holds at most one job:
  // while it holds a live lease, claim() answers that lease again (Claim::held, same
  // attempt, nothing changed), so a retried or duplicated claim never burns an attempt.
  // A job sent back to the queue after a failed or expired attempt is claimable only
  // once its backoff (Options::retry) passed, by the runner that held that attempt only
  // after twice that.
  Result<std::optional<Claim>> claim(std::int64_t runner_id, std::int64_t lease_ms = 0);
  // Records the runner as alive; with a job, extends its lease (gone when the job is not
  // running; otherwise the holder rule of the uploads below: conflict for a stale
  // attempt or an expired lease, forbidden when another runner holds it).
  Result<HeartbeatReply> heartbeat(std::int64_t runner_id, std::optional<std::int64_t> job_id = {}, int attempt = 0,
                                   std::int64_t lease_ms = 0);
  // Marks the attempt succeeded (or cancelled when cancel was requested). Repeating it
  // for the same attempt answers duplicate=true; otherwise the holder rule of the
  // uploads below (conflict: stale attempt or expired lease; forbidden: another runner).
  Result<CompleteReply> complete(std::int64_t job_id, std::int64_t runner_id, int attempt, bool spawn_checks = true);
  // Reports the attempt as failed. retry=true requeues while attempts remain; otherwise
  // (or at the last attempt) the job fails with `reason`. Idempotent like complete().
  Result<CompleteReply> fail(std::int64_t job_id, std::int64_t runner_id, int attempt, std::string_view reason,
                             bool retry = false);
  // Cancels a queued job at once, flags a running one (see heartbeat); a finished job
  // answers its final status unchanged.
  Result<JobStatus> cancel(std::int64_t job_id);
  Result<std::int64_t> cancel_pipeline(std::int64_t pipeline_id);  // jobs affected
  // Re-runs a failed or cancelled job (see the state machine); returns the job as queued.
  // not_found for no such job, conflict naming its status otherwise.
  Result<Job> rerun_job(std::int64_t job_id, int attempts);
  // Re-runs every failed and cancelled job of the pipeline, in one transaction; returns
  // their ids. not_found for no such pipeline, conflict when none failed or was cancelled.
  Result<std::vector<std::int64_t>> rerun_pipeline(std::int64_t pipeline_id, int attempts);
  // Why a queued job waits, from the queue's side: the claimable queued jobs a runner
  // able to take it would take first (same kind; a check of the same arch and GPU
  // model, or any; a build of the same target), and how many online runners could take
  // it and how many of those are busy. nullopt for a job that is not queued.
  Result<std::optional<QueuePlace>> queue_place(std::int64_t job_id);
  // Returns jobs whose lease expired at `now_ms` to the queue, or fails them at their
  // last attempt; returns what it changed.
  Result<std::vector<ExpiredLease>> expire_leases(std::int64_t now_ms);
  Result<QueueStats> queue_stats();

  // ---- runners ---------------------------------------------------------------------
  Result<RegisteredRunner> register_runner(const NewRunner& runner);
  // Finds the runner whose token hashes to the stored hash; unauthorized otherwise
  // (also for deregistered runners).
  Result<Runner> authenticate_runner(std::string_view token);
  Result<std::optional<Runner>> get_runner(std::int64_t id);
  // (runner id, SHA-256 of its token) of every runner not deregistered: what a caller
  // keeps in memory to recognise a valid token without asking the database.
  Result<std::vector<std::pair<std::int64_t, std::string>>> live_runner_tokens();
  Result<std::vector<Runner>> list_runners(bool include_deregistered = false);
  // Marks it deregistered; a job it holds goes back to the queue (attempt counted).
  // Returns when a job it held and gave back is claimable again (zero when none).
  Result<RetryDelay> deregister_runner(std::int64_t runner_id);

  // ---- artifacts ---------------------------------------------------------------------
  // Stores the blob under its SHA-256 after checking it equals expected_sha256
  // (unprocessable on mismatch). Storing known content again is a no-op. With a
  // `writer`, the upload is into that job and takes the holder rule of the uploads
  // below (not_found, conflict, forbidden), checked before the blob is written and again
  // in the transaction that records it; without one it is an operator's.
  Result<Artifact> put_artifact(std::string_view name, std::string_view kind, std::string_view expected_sha256,
                                std::string_view data, std::optional<JobWriter> writer = std::nullopt);
  // Same, streaming from a file the caller wrote (moved into the store on success).
  Result<Artifact> put_artifact_file(std::string_view name, std::string_view kind, std::string_view expected_sha256,
                                     const std::string& file);
  Result<std::optional<Artifact>> get_artifact(std::string_view sha256);

  // ---- build records, results, logs ---------------------------------------------------
  // A row with a job_id is written into that job, under one rule (the holder rule):
  // the writing runner holds the job's live lease, for the row's attempt, which is the
  // job's current one. not_found: no such job; conflict: a stale or never-claimed
  // attempt, an attempt that ended (the job finished or was requeued) or whose lease
  // expired; forbidden: another runner holds it. A job's row takes its commit and target
  // (results also GPU model and arch) from the job: empty fields are filled, another
  // value is a conflict naming the field. A row without a job_id (an operator's) names
  // its provenance itself. A call's rows commit together or none.
  //
  // Build records are idempotent per (job, attempt, target, family, variant); job rows
  // need `runner_id`, the writer.
  Result<std::vector<PutOutcome>> put_build_records(const std::vector<BuildRecord>& records,
                                                    std::optional<std::int64_t> runner_id = std::nullopt);
  Result<Page<BuildRecord>> list_build_records(const BuildRecordFilter& filter);
  Result<std::optional<BuildRecord>> get_build_record(std::int64_t id);
  // Idempotent per (job, attempt, instance, dtype, shape) while the attempt is live; a
  // job's result names its writer in runner_id, comes from a check job, and takes the
  // GPU model the job is pinned to, else the one its runner registered.
  Result<std::vector<PutOutcome>> put_results(const std::vector<ResultRecord>& results);
  Result<std::optional<ResultRecord>> get_result(std::int64_t id);
  Result<Page<ResultRecord>> list_results(const ResultFilter& filter);
  // Appends to the log of the runner's live attempt (the holder rule above); empty text
  // appends nothing but is checked all the same.
  Status append_job_log(std::int64_t job_id, std::int64_t runner_id, int attempt, std::string_view text);
  Result<std::vector<LogChunk>> job_log(std::int64_t job_id, std::int64_t after_seq = 0, int limit = 1000);

  // ---- aggregates --------------------------------------------------------------------
  Result<std::optional<CommitSummary>> commit_summary(std::string_view sha);
  // Per shape, the current figure of every instance on that GPU model (see
  // BestCandidate), failures included; ordered by shape, then median (rows without a
  // figure last). Empty gpu_model means every GPU model (provisional answers).
  Result<std::vector<BestCandidate>> best_candidates(std::string_view gpu_model, std::string_view family,
                                                     std::string_view dtype);
  // Every current figure on one GPU model, all families and dtypes (a dispatch
  // snapshot), ordered by family, dtype, shape, instance.
  Result<std::vector<BestCandidate>> gpu_best_candidates(std::string_view gpu_model);
  // The drivers that results of that GPU model, family and dtype came from, by driver.
  Result<std::vector<DriverCount>> result_drivers(std::string_view gpu_model, std::string_view family,
                                                  std::string_view dtype);
  // best_candidates(gpu_model, family, dtype) and result_drivers(...) of one GPU model
  // (not empty) in one read transaction.
  Result<BestEvidenceRows> best_evidence(std::string_view gpu_model, std::string_view family, std::string_view dtype);
  // The version of that evidence: bumped by the writer to an odd value before the COMMIT
  // of every transaction that changes a best_candidates or result_drivers row of the key
  // (results, a commit recorded after its results), and to the next even value once
  // that COMMIT returned, before the write is acknowledged. 0 for a key unchanged since
  // open. So evidence read by best_evidence() between two reads of one even version is
  // the key's committed state, and stays current for as long as the version reads the
  // same. From memory, no I/O: safe on any thread, including an HTTP I/O thread.
  std::uint64_t best_evidence_version(std::string_view gpu_model, std::string_view family,
                                      std::string_view dtype) const noexcept;
  // Keys whose version has changed since open (for /metrics).
  std::size_t best_evidence_keys() const;
  // The instances that are fastest for some (family, dtype, shape) on that GPU model;
  // `repo` set: among that library's rows and those of no library only ("": of none).
  Result<std::vector<std::string>> best_instances(std::string_view gpu_model,
                                                  const std::optional<std::string>& repo = std::nullopt);
  // Variants whose latest build record for the target is ok; `repo` set: that library's
  // build records (and those of no library).
  Result<std::vector<BuiltInstance>> built_variants(std::string_view target, std::string_view family,
                                                    const std::optional<std::string>& repo = std::nullopt);

  // ---- dashboard (store_dashboard.cpp; the records are in dashboard.h) --------------
  // Every known variant on a target with the facts of its bring-up stage at the stage
  // commit (`commit_sha`, else the target's latest commit with a build), its figures,
  // evidence ids and milestones (store_bringup.cpp). nullopt: the target is not known.
  Result<std::optional<TargetBoard>> target_board(std::string_view target, std::optional<std::string> commit_sha = {},
                                                  std::optional<std::string> repo = {});
  // Passing, timed results of one configuration per GPU model and commit, ordered by
  // GPU model, then commit time.
  // `repo` set: the results of that library and of none only (an instance is named within
  // its library: two libraries' instances of one name are two histories).
  Result<std::vector<KernelPoint>> kernel_history(std::string_view instance, std::string_view dtype,
                                                  std::string_view shape,
                                                  const std::optional<std::string>& repo = std::nullopt);
  Result<std::vector<GpuPeak>> gpu_peaks(std::string_view family, std::string_view dtype);
  // (dtype, shape) pairs an instance has a measurement for, ordered; `repo` as in
  // kernel_history.
  Result<std::vector<std::pair<std::string, std::string>>> measured_configs(
      std::string_view instance, const std::optional<std::string>& repo = std::nullopt);

  // ---- pushes, verdicts, revalidations (store_hooks.cpp, store_verdicts.cpp) --------
  // Records a verified push in one transaction: its commits, the pipeline (when given),
  // the branch head, and the delivery. A delivery id seen before changes nothing and
  // answers duplicate with the first delivery's pipeline. A pipeline with
  // once_per_commit whose commit already has one is not created: the delivery is
  // recorded as ignored, its note saying which pipeline validates the commit. A force
  // push or a delete cancels the queued jobs of the ref's other commits (they left the
  // branch).
  Result<PushOutcome> record_push(const PushDelivery& delivery, const std::optional<NewPipeline>& pipeline);
  // The full sha of a commit that has a pipeline or a commit row, from 7+ hex digits,
  // or the head a push last reported for a branch ("main", "refs/heads/main"); conflict
  // when ambiguous, invalid_argument for text that is neither.
  Result<std::optional<std::string>> resolve_commit(std::string_view rev);
  // The head a push last reported for (repo, ref); nullopt when none (or deleted).
  Result<std::optional<std::string>> ref_head(std::string_view repo, std::string_view ref);
  // The closest ancestor (parent first, up to max_depth steps through commits.parent_sha)
  // that has build records or results.
  Result<std::optional<std::string>> validated_ancestor(std::string_view sha, int max_depth = 64);
  Result<VerdictInputs> verdict_inputs(std::string_view sha);
  // Enqueues `job` in the pipeline and records it as the re-measure of (commit, target,
  // GPU model); false (and nothing enqueued) when one was already requested.
  Result<bool> request_remeasure(std::int64_t pipeline_id, const Remeasure& what, const JobSpec& job);
  // Records the revalidation and creates its pipeline (when it has jobs) atomically;
  // nullopt when this (GPU model, driver) was already revalidated.
  Result<std::optional<Revalidation>> open_revalidation(const Revalidation& what, const NewPipeline& pipeline);
  Result<std::vector<Revalidation>> list_revalidations();
  // The latest result per (library, target, instance, dtype, shape) measured on a GPU
  // model with a driver, each with its `repo`: two libraries may name an instance alike.
  Result<std::vector<ResultRecord>> driver_results(std::string_view gpu_model, std::string_view driver);

  // ---- series noise (store_noise.cpp) -----------------------------------------------
  // Every figure of every series a result of commit `sha` belongs to, from any commit,
  // among the newest 256 results of each (GPU model, family, dtype, shape): the A/A
  // history its verdict learns each series' noise from. Unstable figures and
  // failures are left out; a screen figure's code is its binary's screens.
  Result<std::vector<SeriesFigure>> commit_series_history(std::string_view sha);
  // The same figures for the series `filter` matches (its empty fields match anything;
  // naming the GPU model, family, dtype and shape reads one index range), ordered by
  // series.
  Result<std::vector<SeriesFigure>> series_history(const SeriesFilter& filter);
  // Every check (any commit, any status) of each case `filter` selects, oldest first: the
  // history flakes are decided from.
  Result<std::vector<CaseRunRecord>> case_runs(const CaseRunFilter& filter);

  // ---- measure requests (store_best_requests.cpp) ---------------------------------
  // Opens a request to measure `key` in library `repo` ("" for none) with `pipeline`
  // (exactly one check job), in one transaction: when a request of the key and library
  // is still open (its job queued or running), nothing is created, that request counts
  // one more ask and is answered (created false); otherwise the pipeline, its job and the
  // request are created together. invalid_argument when the pipeline has not exactly one
  // check job.
  Result<BestRequestOpened> open_best_request(const BestKey& key, const std::string& repo, const NewPipeline& pipeline);
  Result<std::optional<BestRequest>> get_best_request(std::int64_t id);
  // Newest first.
  Result<Page<BestRequest>> list_best_requests(const BestRequestFilter& filter);
  // ---- bisections (store_bisections.cpp, migration 0015) ------------------------------
  // Records the bisection and creates its first probe pipelines, atomically; nullopt
  // when one of the same (bad commit, target, GPU model, kind) exists (nothing created).
  Result<std::optional<Bisection>> open_bisection(const Bisection& what, const std::vector<NewPipeline>& probes);
  // Creates more probe pipelines of a running bisection; false (nothing created) once it ended.
  Result<bool> add_bisection_probes(std::int64_t bisection_id, const std::vector<NewPipeline>& probes);
  // Ends a running bisection (done, failed or cancelled) and enqueues `deliveries` (what
  // its end is told to the forge and the webhooks) in the same transaction; false, and
  // nothing enqueued, when it had already ended.
  Result<bool> finish_bisection(std::int64_t bisection_id, const BisectionEnd& end,
                                const std::vector<NewDelivery>& deliveries = {});
  // The running bisection's latest step, in words.
  Status note_bisection(std::int64_t bisection_id, const std::string& summary);
  Result<std::optional<Bisection>> get_bisection(std::int64_t id);
  // Newest first, probes included.
  Result<Page<Bisection>> list_bisections(const BisectionFilter& filter);
  // The bisection a probe pipeline belongs to, if it is one.
  Result<std::optional<std::int64_t>> bisection_of_pipeline(std::int64_t pipeline_id);
  // What a probe pipeline found: its jobs, its build records and its results (the same
  // shapes a verdict reads; remeasures empty).
  Result<VerdictInputs> probe_inputs(std::int64_t pipeline_id);

  // Adds counts of /api/v1/best answers without a measurement, per key and library, one
  // transaction for the batch; keeps the `keep` most recently asked (key, library) rows
  // and forgets the rest.
  Status record_best_asks(const std::vector<BestAsk>& asks, std::int64_t keep = 100'000);
  // Most asked first (then most recent); empty gpu_model: every GPU model; repo: only that
  // library's asks ("" those of no library), nullopt: every library's.
  Result<std::vector<BestAsk>> list_best_asks(std::string_view gpu_model, int limit = 100,
                                              const std::optional<std::string>& repo = std::nullopt);

  // ---- forge connections and outgoing deliveries (store_forge.cpp) -----------------
  // Creates or replaces a repository's connection (a broken one is repaired, and its
  // waiting deliveries go out again). not_found when the repository is not registered;
  // invalid_argument naming a bad kind, mode or an empty field.
  Result<ForgeConnection> put_forge_connection(const ForgeConnection& connection);
  Result<std::optional<ForgeConnection>> get_forge_connection(std::string_view repo);
  Result<std::vector<ForgeConnection>> list_forge_connections();
  // Marks the connection broken with `reason` (the forge refused its token).
  Status mark_forge_broken(std::string_view repo, std::string_view reason);
  // Push pipelines whose report has not reached completed, oldest first, each with its
  // repository's connection when it has one (kind empty otherwise).
  Result<std::vector<PendingReport>> pending_reports(int limit = 100);
  // The reports of a commit's pipelines, whatever their state, newest pipeline first
  // (what a bisection's end updates).
  Result<std::vector<PendingReport>> commit_reports(std::string_view commit_sha, int limit = 20);
  // Moves the report of the pipeline to `state` and enqueues `deliveries` with it, in one
  // transaction; false, and nothing enqueued, when the report already is in that state.
  Result<bool> advance_report(std::int64_t pipeline_id, std::string_view state,
                              const std::vector<NewDelivery>& deliveries);
  // Pending deliveries due at `now_ms`: per subject only the oldest pending one, none of
  // a broken connection; oldest first. A check_run delivery carries the id of the check
  // run its pipeline's report created, when there is one (check_run_id).
  Result<std::vector<std::pair<Delivery, std::optional<std::int64_t>>>> due_deliveries(std::int64_t now_ms,
                                                                                       int limit = 32);
  // Records an attempt (the attempt count grows by one; see DeliveryAttempt). A retry at
  // the delivery's last attempt gives up: failed, the reason in last_error.
  Status record_delivery_attempt(const DeliveryAttempt& attempt);
  Result<std::optional<Delivery>> get_delivery(std::int64_t id);
  Result<Page<Delivery>> list_deliveries(const DeliveryFilter& filter);
  Result<DeliveryStats> delivery_stats();
  // Removes delivered deliveries that finished before `finished_before_ms`, and the
  // oldest beyond the newest `keep` delivered ones, in one transaction; counted in
  // DeliveryStats::pruned (their attempts stay in DeliveryStats::attempts). Pending and
  // failed deliveries are never pruned. Returns how many were removed.
  Result<std::int64_t> prune_deliveries(std::int64_t finished_before_ms, std::int64_t keep);
  // The target's mark (counts_json empty when the webhooks were never told of it).
  Result<BringupMark> bringup_mark(std::string_view target, std::string_view repo = {});
  // Replaces the target's mark and enqueues `deliveries` (webhooks) with it, in one
  // transaction.
  Status put_bringup_mark(const BringupMark& mark, const std::vector<NewDelivery>& deliveries);

  class Impl;

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace kport::db
