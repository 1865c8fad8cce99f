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
//   perf_regression      median slower than the baseline's by more than its series'
//                        screen band (noise.h: learned from the series' A/A history) or,
//                        where no history is given, by >= policy.slowdown and more than
//                        policy.noise_sigmas combined standard deviations: a suspect, re-
//                        measured with the baseline's harness timed in rounds interleaved
//                        with this one's on one GPU (A/B/A/B), and counted only when that
//                        pair differs beyond the series' confirm band (noise.h; the fixed
//                        rule without history); never when a figure is unstable. A suspect
//                        whose re-measure could not time that pair (no result from it, or
//                        no baseline harness) is insufficient_data, not a regression
// A series whose history is too short to judge a change of at least the noise floor
// asks for the same re-measure (which is A/A history) and is then listed as
// insufficient_data: neither passed nor failed.
//   resource_regression  new register spills, or more shared memory per block
// A new failure of a case that is flaky (flake.h) is listed under `flaky`, not counted;
// an infrastructure failure (flake.h: a lost lease, a GPU that failed its health check,
// the crashes of a check job in which most cases crashed at once) is listed under
// `infrastructure` and never blamed on the commit. Cases of such a mass failure are
// checked once more (the re-measure job); failing en masse there too, they count.
// Status: fail when any reason counts; else pending while a job of the commit is
// unfinished or a suspected regression awaits its re-measure; else insufficient_data
// when a series could not be judged or an infrastructure failure left something
// unchecked; else pass.
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

#include "kport/porting/noise.h"

namespace kport::porting {

struct VerdictPolicy {
  // Without a noise history (decide_verdict's `noise` null, driver comparisons):
  double slowdown = 0.03;     // relative median change that can count
  double noise_sigmas = 2.0;  // ... when also beyond this many combined standard deviations
  NoisePolicy noise;          // with one: each series' own band
};
// The policy in one sentence, for the pages and reports that apply it; `calibrated` when
// the series' noise models decided.
std::string describe(const VerdictPolicy& policy, bool calibrated = false);

// The noise model of every series a verdict may compare, by series; a series missing
// from it has no A/A history at all.
using NoiseBook = std::map<SeriesKey, NoiseModel>;

// The flake state of the cases a verdict may find failing (flake.h); a case missing from
// it is not flaky.
struct CaseKey;
struct FlakeState;
using FlakeBook = std::map<CaseKey, FlakeState>;

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
  std::string driver;
  std::string repo;  // the library the figure is of; "" for none (one library's commit needs none)
  CheckOutcome status = CheckOutcome::passed;
  std::string message;
  std::optional<double> max_rel_err, tolerance;
  std::optional<std::int64_t> nan_inf_count;
  std::optional<double> median_us, stddev_us;
  std::optional<std::int64_t> samples;
  std::optional<std::int64_t> job_id, seed;
  bool unstable = false;  // its bench rounds disagreed beyond the noise, even re-measured
  // A re-measure's figure of the baseline's harness, timed in rounds interleaved with this
  // one's on the same GPU (A/B/A/B); a suspected slowdown counts only when this pair shows
  // it beyond the series' band too.
  std::optional<double> paired_median_us, paired_stddev_us;
  std::optional<std::int64_t> paired_samples;
  // The medians of the bench rounds each figure was made of (those it kept); empty when
  // not known. The pair's spread is today's noise of its machine (noise.h confirm_band).
  std::vector<double> round_medians_us, paired_round_medians_us;
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

// A timed series the verdict could not judge: its change is at least the noise floor and
// its A/A history too short to say whether that is noise.
struct UnjudgedSeries {
  std::string target;
  NoiseModel model;  // its series and how much history it has
  double rel = 0;    // the change seen, now / before - 1
  std::int64_t result = 0, baseline_result = 0;
};

// A new failure of a quarantined (flaky) case: listed, not counted.
struct FlakyFailure {
  std::string target, gpu_model, instance, dtype, shape;
  CheckOutcome status = CheckOutcome::failed;
  std::int64_t result = 0;
  std::optional<std::int64_t> seed;
  std::int64_t since_ms = 0;
  int runs = 0, failures = 0, to_release = 0;
};

// A failure that is the machine's: a job's (lease, runner, GPU health) or a result's (a
// mass failure of its check job).
struct InfrastructureFailure {
  std::string target, gpu_model;
  std::int64_t job = 0;
  std::optional<std::int64_t> result;
  std::string message;
};

struct Verdict {
  std::string commit;
  std::optional<std::string> baseline;  // the commit compared with
  std::string status = "pending";       // pending, pass, fail or insufficient_data
  std::vector<VerdictReason> reasons;
  std::vector<std::string> waiting;  // why it is not final: unfinished jobs, re-measures
  std::vector<std::string> notes;    // seen but not counted: unstable figures, old failures
  std::vector<UnjudgedSeries> insufficient_data;
  std::vector<FlakyFailure> flaky;
  std::vector<InfrastructureFailure> infrastructure;
  std::vector<RemeasureRequest> remeasure;
  int builds = 0, results = 0;  // records looked at
  VerdictPolicy policy;         // the thresholds it was decided with
  bool calibrated = false;      // timing judged by the series' noise models
};

// `noise`: the noise models of the series of `mine`'s results; null decides timing by
// the policy's fixed thresholds instead. `flakes`: the flake state of the cases of its
// failing results; null: none is flaky.
Verdict decide_verdict(const std::string& commit, const CommitFacts& mine,
                       const std::optional<std::string>& baseline_sha, const CommitFacts& baseline,
                       const VerdictPolicy& policy = {}, const NoiseBook* noise = nullptr,
                       const FlakeBook* flakes = nullptr);

// The series a result belongs to.
SeriesKey series_of(const ResultFact& r);

// How one result compares with the same key at the baseline (nullptr: no result there).
enum class Change {
  unchanged,
  added,
  fixed,
  new_failure,
  still_failing,
  regressed,
  improved,
  unstable,
  insufficient_data
};
const char* to_string(Change c);

// A timing comparison of two passing, timed figures.
struct TimingDelta {
  double rel = 0;                  // now / before - 1
  double delta_us = 0;             // now - before
  double noise_us = 0;             // the band in microseconds (fixed rule: noise_sigmas * sqrt(sd_now^2 + sd_before^2))
  std::optional<double> band_rel;  // calibrated: the series' screen band (noise.h), relative
  bool insufficient = false;       // calibrated, but the series has too little history to say
  bool beyond = false;             // |rel| beyond the band (fixed rule: >= policy.slowdown and |delta| > noise)
};
// `noise`: the series' model (calibrated rule); null: the policy's fixed thresholds.
std::optional<TimingDelta> compare_timing(const ResultFact& before, const ResultFact& now, const VerdictPolicy& policy,
                                          const NoiseModel* noise = nullptr);

// new_failure / still_failing / fixed by numerics; regressed / improved when the timing
// change is beyond the band; unstable when it would be but either figure is unstable;
// insufficient_data when a calibrated comparison has too little history and the change
// is at least the noise floor; added when there is no baseline result (new_failure if it
// fails).
Change classify(const ResultFact* before, const ResultFact& now, const VerdictPolicy& policy,
                const NoiseModel* noise = nullptr);

// Results measured with a new driver against the same configurations measured with the
// previous driver on the same GPU model (numerics and performance reasons). A
// configuration is of one library (`repo`): two libraries naming an instance alike are
// compared each with its own figures, and a reason of a library names it.
std::vector<VerdictReason> compare_drivers(const std::vector<ResultFact>& now, const std::vector<ResultFact>& before,
                                           const std::string& driver, const std::string& previous_driver,
                                           const VerdictPolicy& policy = {});

}  // namespace kport::porting
