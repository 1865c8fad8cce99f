// A commit's verdict: what it broke compared with its baseline, the closest validated
// ancestor, on the same targets and GPU models. The one rule behind
// GET /api/v1/commits/{sha}/verdict, `kport status` and the dashboard's commit page.
//
// Reasons, each naming the variant, target, GPU and figures:
//   build_failure        a variant that compiles at the baseline (or has no record there)
//                        fails to compile here, whether or not its build job succeeded
//   job_failure          a build or check job failed without records to show for it
//   numerics_failure     a check that passed at the baseline (or had no result there)
//                        fails, crashes or times out
//   perf_regression      median slower by >= policy.slowdown and by more than
//                        policy.noise_sigmas combined standard deviations; counted only
//                        after one re-measure, and never when either figure is unstable
//   resource_regression  new register spills, or more shared memory per block
// Status: fail when any reason counts; else pending while a job of the commit is
// unfinished or a suspected regression awaits its re-measure; else pass.
//
// The same per-result comparison (classify) drives the commit page's diff, so the page's
// "new failure" and "regressed" are the verdict's numerics failures and suspected slowdowns.
// Inputs are plain facts (the coordinator converts its records); pure and thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kport::porting {

struct VerdictPolicy {
  double slowdown = 0.03;     // relative median change that can count
  double noise_sigmas = 2.0;  // ... when also beyond this many combined standard deviations
};
// The policy in one sentence, for the pages and reports that apply it.
std::string describe(const VerdictPolicy& policy);

enum class BuildOutcome { ok, not_applicable, compile_error, timeout };
enum class CheckOutcome { passed, failed, crashed, timeout, unsupported };
enum class JobKind { build, check };
enum class JobState { queued, awaiting_runner, running, succeeded, failed, cancelled };

const char* to_string(BuildOutcome s);
const char* to_string(CheckOutcome s);
const char* to_string(JobKind k);
const char* to_string(JobState s);

// The latest build record of one (target, family, variant) at a commit.
struct BuildFact {
  std::int64_t id = 0;
  std::string target, family, variant;
  BuildOutcome status = BuildOutcome::ok;
  std::string message;                      // compiler diagnostics
  std::optional<std::int64_t> spill_bytes;  // stores + loads
  std::optional<std::int64_t> shared_mem_bytes;
};

// The latest result of one (target, GPU model, instance, dtype, shape) at a commit.
struct ResultFact {
  std::int64_t id = 0;
  std::string target, gpu_model, arch, family, variant, instance, dtype, shape;
  CheckOutcome status = CheckOutcome::passed;
  std::string message;
  std::optional<double> max_rel_err, tolerance;
  std::optional<std::int64_t> nan_inf_count;
  std::optional<double> median_us, stddev_us;
  bool unstable = false;  // its bench rounds disagreed beyond the noise, even re-measured
};

struct JobFact {
  std::int64_t id = 0;
  JobKind kind = JobKind::build;
  JobState status = JobState::queued;
  std::string target;
  std::optional<std::string> arch, gpu_model, failure_reason;
};

// A re-measure job queued for the suspected slowdowns of one (target, GPU model).
struct RemeasureFact {
  std::string target, gpu_model;
  std::int64_t job_id = 0;
};

struct CommitFacts {
  std::vector<JobFact> jobs;  // of every pipeline of the commit
  std::vector<BuildFact> builds;
  std::vector<ResultFact> results;
  std::vector<RemeasureFact> remeasures;
};

using Figure = std::variant<std::int64_t, double, std::string>;

struct VerdictReason {
  std::string kind;     // build_failure, job_failure, numerics_failure, perf_regression, resource_regression
  std::string variant;  // family.variant
  std::string target, gpu_model;
  std::string message;  // one line naming everything above and the figures
  std::map<std::string, Figure> figures;
};

// Suspected regressions of one (target, GPU model) that need their re-measure.
struct RemeasureRequest {
  std::string target, gpu_model, arch;
  std::vector<std::string> instances;
};

struct Verdict {
  std::string commit;
  std::optional<std::string> baseline;  // the commit compared with
  std::string status = "pending";       // pending, pass or fail
  std::vector<VerdictReason> reasons;
  std::vector<std::string> waiting;     // why it is not final: unfinished jobs, re-measures
  std::vector<std::string> notes;       // seen but not counted: unstable figures, old failures
  std::vector<RemeasureRequest> remeasure;
  int builds = 0, results = 0;          // records looked at
  VerdictPolicy policy;                 // the thresholds it was decided with
};

Verdict decide_verdict(const std::string& commit, const CommitFacts& mine, const std::optional<std::string>& baseline_sha,
                       const CommitFacts& baseline, const VerdictPolicy& policy = {});

// How one result compares with the same key at the baseline (nullptr: no result there).
enum class Change { unchanged, added, fixed, new_failure, still_failing, regressed, improved, unstable };
const char* to_string(Change c);

// A timing comparison of two passing, timed figures.
struct TimingDelta {
  double rel = 0;        // now / before - 1
  double delta_us = 0;   // now - before
  double noise_us = 0;   // policy.noise_sigmas * sqrt(sd_now^2 + sd_before^2)
  bool beyond = false;   // |rel| >= policy.slowdown and |delta| > noise
};
std::optional<TimingDelta> compare_timing(const ResultFact& before, const ResultFact& now, const VerdictPolicy& policy);

// new_failure / still_failing / fixed by numerics; regressed / improved when the timing
// change is beyond both thresholds; unstable when it would be but either figure is
// unstable; added when there is no baseline result (new_failure if it fails).
Change classify(const ResultFact* before, const ResultFact& now, const VerdictPolicy& policy);

// Results measured with a new driver against the same configurations measured with the
// previous driver on the same GPU model (numerics and performance reasons).
std::vector<VerdictReason> compare_drivers(const std::vector<ResultFact>& now, const std::vector<ResultFact>& before,
                                           const std::string& driver, const std::string& previous_driver,
                                           const VerdictPolicy& policy = {});

}  // namespace kport::porting
