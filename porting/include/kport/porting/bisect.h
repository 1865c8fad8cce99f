// Bisection: which commit between a good and a bad one broke a case, and why.
//
// A bisection starts from a verdict's counted reason (a confirmed slowdown, a new
// numerics failure, a new build failure) between a good commit (the verdict's baseline)
// and a bad one with commits in between. It probes commits: each probe builds the
// affected variants of one commit and, for timing and numerics, checks the affected
// cases on the GPU model that saw the reason. The rule here is pure: given the commits,
// the reference figures and the probes so far, it says what to probe next, or that it is
// done, with the first bad commit, the effect and its uncertainty, and a cause class.
//
// The rule, in order:
//  1. Both ends are probed first, in today's environment. The bad end not reproducing
//     (passing, or timed within noise of the good end) is noise; the good end failing too
//     means the environment moved, not the code: toolkit, driver or runner by what
//     differs between the good end's first evidence and its probe (nothing differs:
//     noise, the first evidence was the outlier).
//  2. Then binary search over the commits in between: a probe is good or bad by its
//     cases (any bad case makes it bad); a timed case is bad when its figure sits nearer
//     the bad end's than the good end's by more than its noise, ambiguous inside that
//     band (probed again, up to BisectPolicy::max_repeats, the figures averaged), and a
//     commit whose probe has no figure for a case (the variant did not build there, the
//     job failed) is skipped, as `git bisect skip` does.
//  3. Done when the last good and first bad commit are adjacent among the commits that
//     could be judged: the first bad is the first bad commit (with the skipped or
//     ambiguous commits before it that could also be it), the effect its figure over the
//     last good one's, minus one, +- z combined relative standard errors.
//
// A probe that did not measure anything is not evidence about its commit: one whose
// jobs were cancelled stops the bisection at once (stop, cancelled: someone stopped its
// work; the other open probes are the caller's to cancel),
// one that failed on the machine (a lost lease, an unhealthy GPU, a runner gone:
// flake.h infrastructure_failure) is probed again, BisectPolicy::infrastructure_retries
// times, and stops it (stop, failed) when that fails too. Either names the probe.
//
// Driver and toolkit: when the verdict's figures at the two ends were taken with
// different drivers (or toolkits) and the ends probed again on one environment no
// longer differ, the slowdown came with the environment, not the code: the cause is
// driver (or toolkit), said with both versions. The coordinator pins every probe of a
// bisection to the bad end's driver where a runner of the GPU model reports it (db
// migration 0024), so the probes share one environment; the good end slow there too is
// then the driver's move, said with both versions.
//
// Thread-safe; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kport::porting {

enum class BisectKind { perf_regression, numerics_failure, build_failure };
enum class BisectCause { code, toolkit, driver, runner, noise };
enum class ProbeOutcome { pending, good, bad, ambiguous, skipped };
// How a probe's pipeline ended: completed (its jobs ran; what they measured counts, a job
// failing for the code included), cancelled, or failed on the machine.
enum class ProbeEnd { completed, cancelled, infrastructure };

const char* to_string(BisectKind k);
const char* to_string(BisectCause c);
const char* to_string(ProbeOutcome o);
std::optional<BisectKind> bisect_kind_from(const std::string& text);
std::optional<BisectCause> bisect_cause_from(const std::string& text);

struct BisectPolicy {
  int max_repeats = 2;             // further probes of a commit whose figure is ambiguous
  double z = 1.96;                 // the effect's uncertainty, in combined standard errors (95 %)
  double min_sigma_rel = 0.002;    // a figure is never taken as more precise than this (0.2 %)
  int max_cases = 16;              // cases checked per probe; a reason with more keeps the first
  int max_commits = 1024;          // commits between good and bad that can be searched
  int infrastructure_retries = 1;  // probes of a commit again after one failed on the machine
};

// Where a figure or outcome was produced: what the cause class compares.
struct ProbeEnv {
  std::string toolkit, driver, runner;
};

// What a probe saw of one case: a timed case's figure, a checked case's numerics, a
// variant's build. `present` false: the probe has nothing for it (not built, not run).
struct CaseObservation {
  std::string key;  // "instance dtype shape", or "family.variant" for builds
  bool present = false;
  bool failing = false;                // numerics failed, crashed or timed out; compile error or timeout
  std::optional<double> median_us;     // timed cases, passing only
  std::optional<double> se_rel;        // the figure's own relative standard error
  std::optional<std::int64_t> result;  // the record it came from
};

// One probe: one commit built and checked once (a commit may be probed more than once).
struct ProbeFact {
  std::string commit;
  bool finished = false;  // its jobs ended (succeeded, failed or cancelled)
  std::vector<CaseObservation> cases;
  ProbeEnv env;
  ProbeEnd end = ProbeEnd::completed;  // finished only
  std::string end_reason;              // cancelled or infrastructure: why, in words
  std::int64_t pipeline = 0;           // the probe's pipeline, to name it
};

// A case the bisection follows, with the figures the verdict saw at each end.
struct BisectCase {
  std::string key;
  std::optional<double> good_us, bad_us;  // perf: the verdict's baseline and current figures
  double sigma_rel = 0;                   // the series' A/A noise of one figure, relative (0: unknown)
};

struct BisectInput {
  BisectKind kind = BisectKind::perf_regression;
  // The good commit first, then every commit after it up to the bad one, oldest first
  // (first parents): commits.front() is good, commits.back() is bad.
  std::vector<std::string> commits;
  std::vector<BisectCase> cases;
  ProbeEnv good_env;  // where the good end's first evidence came from
  ProbeEnv bad_env;   // where the bad end's evidence came from (empty fields: unknown)
  std::vector<ProbeFact> probes;
};

// A case's effect at the boundary, perf only.
struct CaseEffect {
  std::string key;
  double good_us = 0, bad_us = 0;
  double effect = 0;       // bad / good - 1
  double uncertainty = 0;  // +- z combined relative standard errors
};

struct BisectStep {
  // stop: the bisection ends without an answer (a probe cancelled, or failing on the
  // machine again); `cancelled` says which, `why` names the probe.
  enum class Action { probe, wait, done, stop } action = Action::wait;
  bool cancelled = false;
  std::vector<std::string> probe;  // probe: the commits to probe now (each once)
  std::string why;                 // one line: what the step decided and from what
  // done:
  BisectCause cause = BisectCause::code;
  std::optional<std::string> first_bad, last_good;
  std::vector<std::string> suspects;          // the first bad and the unjudged commits that could be it instead
  std::vector<CaseEffect> effects;            // perf: per case, largest effect first
  std::optional<double> effect, uncertainty;  // the largest effect and its uncertainty
  // Every commit that was judged, in commit order, with its outcome (all probes of it).
  std::vector<std::pair<std::string, ProbeOutcome>> judged;
};

// What the probes of one commit say, given the ends' figures (perf: the fresh probes of
// the ends when there are some, else the verdict's figures).
ProbeOutcome judge(const BisectInput& in, const std::vector<const ProbeFact*>& probes_of_commit,
                   const BisectPolicy& policy = {});

// The next step of a bisection from everything known so far.
BisectStep next_step(const BisectInput& in, const BisectPolicy& policy = {});

}  // namespace kport::porting
