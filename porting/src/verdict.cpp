// Only what changed counts: a failure the baseline shares is the baseline's problem,
// and a slowdown inside the noise of the two measurements is not a regression. That
// noise is what the series showed from run to run of unchanged code where its history
// says (the figures' own spread underestimates it: it misses what changes between
// processes), and nothing is decided where it cannot say. A slowdown beyond it is
// measured once more before it fails the commit, because one noisy run on a shared GPU
// must not block a merge, and the re-measure times the baseline's harness beside this
// one (A/B/A/B on one GPU), because figures of unchanged code taken on two machines or
// two boots of one differ by more than either shows: that pair alone decides. A figure
// whose bench rounds disagreed (unstable) is too imprecise to accuse anything by itself.
#include "kport/porting/verdict.h"

#include "kport/porting/flake.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

namespace kport::porting {

std::string describe(const VerdictPolicy& policy, bool calibrated) {
  char buf[600];
  if (calibrated) {
    std::snprintf(
        buf, sizeof buf,
        "against the closest validated ancestor; a slowdown beyond %g A/A standard deviations of its series (of"
        " the series' history of the same code, and of each figure's own median) and at least %g%% is suspected"
        " and re-measured against the baseline's harness in interleaved rounds on one GPU, and counts only when"
        " that pair differs by more than %g standard deviations and at least %g%%; a series with fewer than %d"
        " A/A degrees of freedom, or a suspect that could not be timed beside the baseline's harness, is"
        " insufficient data; an unstable figure never counts",
        policy.noise.screen_k, policy.noise.floor * 100, policy.noise.confirm_k, policy.noise.confirm_floor * 100,
        policy.noise.min_degrees);
    return buf;
  }
  std::snprintf(buf, sizeof buf,
                "against the closest validated ancestor; a time change counts at %g%% or more and beyond %g combined"
                " standard deviations, a slowdown only when its re-measure against the baseline's harness in"
                " interleaved rounds on one GPU shows it too (without that pair it is insufficient data); an unstable"
                " figure never counts",
                policy.slowdown * 100, policy.noise_sigmas);
  return buf;
}

const char* to_string(BuildOutcome s) {
  switch (s) {
    case BuildOutcome::ok: return "ok";
    case BuildOutcome::not_applicable: return "not_applicable";
    case BuildOutcome::compile_error: return "compile_error";
    case BuildOutcome::timeout: return "timeout";
  }
  return "?";
}

const char* to_string(CheckOutcome s) {
  switch (s) {
    case CheckOutcome::passed: return "passed";
    case CheckOutcome::failed: return "failed";
    case CheckOutcome::crashed: return "crashed";
    case CheckOutcome::timeout: return "timeout";
    case CheckOutcome::unsupported: return "unsupported";
  }
  return "?";
}

const char* to_string(JobKind k) { return k == JobKind::build ? "build" : "check"; }

const char* to_string(JobState s) {
  switch (s) {
    case JobState::queued: return "queued";
    case JobState::awaiting_runner: return "awaiting_runner";
    case JobState::running: return "running";
    case JobState::succeeded: return "succeeded";
    case JobState::failed: return "failed";
    case JobState::cancelled: return "cancelled";
  }
  return "?";
}

const char* to_string(Change c) {
  switch (c) {
    case Change::unchanged: return "unchanged";
    case Change::added: return "added";
    case Change::fixed: return "fixed";
    case Change::new_failure: return "new_failure";
    case Change::still_failing: return "still_failing";
    case Change::regressed: return "regressed";
    case Change::improved: return "improved";
    case Change::unstable: return "unstable";
    case Change::insufficient_data: return "insufficient_data";
  }
  return "?";
}

namespace {

using ResultKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;
using BuildKey = std::tuple<std::string, std::string, std::string>;

ResultKey key_of(const ResultFact& r) { return {r.target, r.gpu_model, r.instance, r.dtype, r.shape}; }
BuildKey key_of(const BuildFact& b) { return {b.target, b.family, b.variant}; }

std::string fmt(double v, int precision = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

bool failing(CheckOutcome s) {
  return s == CheckOutcome::failed || s == CheckOutcome::crashed || s == CheckOutcome::timeout;
}
bool failing(BuildOutcome s) { return s == BuildOutcome::compile_error || s == BuildOutcome::timeout; }
bool unfinished(JobState s) {
  return s == JobState::queued || s == JobState::awaiting_runner || s == JobState::running;
}

std::string config_of(const ResultFact& r) { return r.instance + " " + r.dtype + " " + r.shape; }

std::string numerics_text(const ResultFact& r) {
  std::string s = to_string(r.status);
  if (r.max_rel_err) s += ", max rel err " + fmt(*r.max_rel_err, 6);
  if (r.tolerance) s += " (tolerance " + fmt(*r.tolerance, 6) + ")";
  if (r.nan_inf_count && *r.nan_inf_count > 0) s += ", " + std::to_string(*r.nan_inf_count) + " NaN/Inf";
  if (!r.message.empty()) s += ": " + r.message.substr(0, 200);
  return s;
}

// `at` says where the comparison was made: "at <sha>" or "with driver <version>"; empty
// when there is nothing to compare with.
VerdictReason numerics_reason(const ResultFact& now, const ResultFact* before, const std::string& at) {
  VerdictReason r{"numerics_failure", now.family + "." + now.variant, now.target, now.gpu_model, "", {}};
  r.message = "numerics: " + config_of(now) + " on " + now.target + " / " + now.gpu_model + ": " + numerics_text(now) +
              (at.empty() ? " (no validated ancestor to compare with)"
               : before   ? " (passed " + at + ")"
                          : " (no result " + at + ")");
  r.figures = {{"instance", now.instance},
               {"dtype", now.dtype},
               {"shape", now.shape},
               {"status", std::string(to_string(now.status))},
               {"result", now.id}};
  if (now.max_rel_err) r.figures["max_rel_err"] = *now.max_rel_err;
  if (now.tolerance) r.figures["tolerance"] = *now.tolerance;
  return r;
}

VerdictReason perf_reason(const ResultFact& now, const ResultFact& before, const TimingDelta& d,
                          const std::string& than) {
  VerdictReason r{"perf_regression", now.family + "." + now.variant, now.target, now.gpu_model, "", {}};
  r.message = "performance: " + config_of(now) + " on " + now.target + " / " + now.gpu_model + ": median " +
              fmt(*before.median_us) + " us -> " + fmt(*now.median_us) + " us (+" + fmt(d.rel * 100, 1) +
              "%, noise +-" + fmt(d.noise_us) + " us) " + than;
  r.figures = {{"instance", now.instance},
               {"dtype", now.dtype},
               {"shape", now.shape},
               {"median_us", *now.median_us},
               {"baseline_median_us", *before.median_us},
               {"slowdown", d.rel},
               {"noise_us", d.noise_us},
               {"result", now.id},
               {"baseline_result", before.id}};
  if (d.band_rel) r.figures["band"] = *d.band_rel;
  return r;
}

std::optional<VerdictReason> resource_reason(const BuildFact& now, const BuildFact& before, const std::string& than) {
  if (now.status != BuildOutcome::ok || before.status != BuildOutcome::ok) return std::nullopt;
  std::vector<std::string> what;
  std::map<std::string, Figure> figures;
  const std::int64_t sn = now.spill_bytes.value_or(0), sb = before.spill_bytes.value_or(0);
  if (sn > sb) {
    what.push_back((sb == 0 ? "new register spills " : "more register spills ") + std::to_string(sb) + " -> " +
                   std::to_string(sn) + " B");
    figures["spill_bytes"] = sn;
    figures["baseline_spill_bytes"] = sb;
  }
  if (now.shared_mem_bytes && before.shared_mem_bytes && *now.shared_mem_bytes > *before.shared_mem_bytes) {
    what.push_back("shared memory " + std::to_string(*before.shared_mem_bytes) + " -> " +
                   std::to_string(*now.shared_mem_bytes) + " B");
    figures["shared_mem_bytes"] = *now.shared_mem_bytes;
    figures["baseline_shared_mem_bytes"] = *before.shared_mem_bytes;
  }
  if (what.empty()) return std::nullopt;
  VerdictReason r{"resource_regression", now.family + "." + now.variant, now.target, "", "", std::move(figures)};
  r.message = "resources: " + r.variant + " on " + now.target + ": ";
  for (std::size_t i = 0; i < what.size(); ++i) r.message += (i ? ", " : "") + what[i];
  r.message += " " + than;
  return r;
}

}  // namespace

SeriesKey series_of(const ResultFact& r) { return {r.gpu_model, r.driver, r.instance, r.dtype, r.shape}; }

std::optional<TimingDelta> compare_timing(const ResultFact& before, const ResultFact& now, const VerdictPolicy& policy,
                                          const NoiseModel* noise) {
  if (now.status != CheckOutcome::passed || before.status != CheckOutcome::passed) return std::nullopt;
  if (!now.median_us || !before.median_us || *before.median_us <= 0) return std::nullopt;
  TimingDelta d;
  d.delta_us = *now.median_us - *before.median_us;
  d.rel = d.delta_us / *before.median_us;
  if (noise) {
    d.band_rel = change_band(*noise, median_standard_error(before.median_us, before.stddev_us, before.samples),
                             median_standard_error(now.median_us, now.stddev_us, now.samples), policy.noise);
    d.insufficient = !d.band_rel;
    d.noise_us = d.band_rel.value_or(0) * *before.median_us;
    d.beyond = d.band_rel && std::abs(d.rel) > *d.band_rel;
    return d;
  }
  const double sn = now.stddev_us.value_or(0), sb = before.stddev_us.value_or(0);
  d.noise_us = policy.noise_sigmas * std::sqrt(sn * sn + sb * sb);
  d.beyond = std::abs(d.rel) >= policy.slowdown && std::abs(d.delta_us) > d.noise_us;
  return d;
}

Change classify(const ResultFact* before, const ResultFact& now, const VerdictPolicy& policy, const NoiseModel* noise) {
  const bool is_failing = failing(now.status);
  if (!before) return is_failing ? Change::new_failure : Change::added;
  const bool was_failing = failing(before->status);
  if (is_failing) return was_failing ? Change::still_failing : Change::new_failure;
  if (was_failing) return now.status == CheckOutcome::passed ? Change::fixed : Change::unchanged;
  auto d = compare_timing(*before, now, policy, noise);
  // Below the floor nothing could count whatever the history says: no guess is needed.
  if (d && d->insufficient) {
    if (std::abs(d->rel) < policy.noise.floor) return Change::unchanged;
    // An unstable figure could not count with any history: that is the stronger answer.
    return now.unstable || before->unstable ? Change::unstable : Change::insufficient_data;
  }
  if (!d || !d->beyond) return Change::unchanged;
  if (now.unstable || before->unstable) return Change::unstable;
  return d->delta_us > 0 ? Change::regressed : Change::improved;
}

Verdict decide_verdict(const std::string& commit, const CommitFacts& mine,
                       const std::optional<std::string>& baseline_sha, const CommitFacts& baseline,
                       const VerdictPolicy& policy, const NoiseBook* noise, const FlakeBook* flakes) {
  Verdict v;
  v.commit = commit;
  v.baseline = baseline_sha;
  v.policy = policy;
  v.calibrated = noise != nullptr;
  v.builds = static_cast<int>(mine.builds.size());
  v.results = static_cast<int>(mine.results.size());
  const std::string than = baseline_sha ? "than " + baseline_sha->substr(0, 12) : "(no validated ancestor)";
  const std::string at = baseline_sha ? "at " + baseline_sha->substr(0, 12) : "";

  std::map<BuildKey, const BuildFact*> base_builds;
  for (const auto& b : baseline.builds) base_builds[key_of(b)] = &b;
  std::map<ResultKey, const ResultFact*> base_results;
  for (const auto& r : baseline.results) base_results[key_of(r)] = &r;

  // Builds: compile failures (also inside a build job that succeeded for the variants
  // that built) and resource growth.
  std::set<std::string> targets_with_builds;
  for (const auto& b : mine.builds) {
    targets_with_builds.insert(b.target);
    auto it = base_builds.find(key_of(b));
    const BuildFact* before = it == base_builds.end() ? nullptr : it->second;
    const std::string first_line = b.message.substr(0, b.message.find('\n')).substr(0, 200);
    if (failing(b.status) && before && failing(before->status)) {
      v.notes.push_back("build: " + b.family + "." + b.variant + " on " + b.target + " still fails to compile (" +
                        to_string(b.status) + "), as at " + baseline_sha.value_or("the baseline").substr(0, 12));
    } else if (failing(b.status)) {
      VerdictReason r{"build_failure", b.family + "." + b.variant, b.target, "", "", {}};
      r.message = "build: " + r.variant + " on " + b.target + ": " + to_string(b.status) +
                  (at.empty() ? " (no validated ancestor to compare with)"
                   : before   ? " (built " + at + ")"
                              : " (no build " + at + ")") +
                  (first_line.empty() ? "" : ": " + first_line);
      r.figures = {{"status", std::string(to_string(b.status))}, {"build", b.id}};
      v.reasons.push_back(std::move(r));
    } else if (before) {
      if (auto r = resource_reason(b, *before, than)) v.reasons.push_back(std::move(*r));
    }
  }

  // Results: numerics, then performance with its re-measure.
  std::map<std::pair<std::string, std::string>, const RemeasureFact*> remeasured;
  for (const auto& m : mine.remeasures) remeasured[{m.target, m.gpu_model}] = &m;
  std::map<std::int64_t, const JobFact*> jobs;
  for (const auto& j : mine.jobs) jobs[j.id] = &j;
  std::map<std::pair<std::string, std::string>, RemeasureRequest> requests;
  // Check jobs with results: by id, as one arch's check may be split over several GPUs
  // (porting/check_shards.h), each part answering for itself; a result that names no job
  // answers for its (target, arch).
  std::set<std::int64_t> checked;
  std::set<std::pair<std::string, std::string>> checked_unnamed;
  auto ask_remeasure = [&](const ResultFact& r) {
    auto& req = requests[{r.target, r.gpu_model}];
    req.target = r.target;
    req.gpu_model = r.gpu_model;
    req.arch = r.arch;
    if (std::find(req.instances.begin(), req.instances.end(), r.instance) == req.instances.end())
      req.instances.push_back(r.instance);
  };
  std::set<std::int64_t> mass_failures;
  for (std::int64_t job : mass_failure_jobs(mine.results)) mass_failures.insert(job);
  for (const auto& r : mine.results) {
    if (r.job_id)
      checked.insert(*r.job_id);
    else
      checked_unnamed.insert({r.target, r.arch});
    if ((r.status == CheckOutcome::crashed || r.status == CheckOutcome::timeout) && r.job_id &&
        mass_failures.count(*r.job_id)) {
      // Checked once more on the same build: a machine that fell over does not fall over
      // the same way twice, a commit that breaks every kernel does. The re-check failing
      // en masse as well makes these the code's failures.
      auto m = remeasured.find({r.target, r.gpu_model});
      const bool again = m != remeasured.end() && *r.job_id == m->second->job_id;
      if (!again) {
        v.infrastructure.push_back({r.target, r.gpu_model, *r.job_id, r.id,
                                    config_of(r) + " " + to_string(r.status) + " in check job " +
                                        std::to_string(*r.job_id) + ", where most cases crashed or timed out at once"});
        if (m == remeasured.end()) ask_remeasure(r);
        continue;
      }
    }
    auto it = base_results.find(key_of(r));
    const ResultFact* before = it == base_results.end() ? nullptr : it->second;
    std::optional<NoiseModel> model;
    if (noise) {
      auto found = noise->find(series_of(r));
      model = found != noise->end() ? found->second : learn_noise(series_of(r), {}, policy.noise);
    }
    const NoiseModel* m_ptr = model ? &*model : nullptr;
    const Change change = classify(before, r, policy, m_ptr);
    if (change == Change::insufficient_data) {
      // Measured again on the same build, the series gains the A/A history it lacks.
      auto m = remeasured.find({r.target, r.gpu_model});
      if (m == remeasured.end()) {
        ask_remeasure(r);
        continue;
      }
      auto job = jobs.find(m->second->job_id);
      if (job != jobs.end() && unfinished(job->second->status)) continue;
      v.insufficient_data.push_back(
          UnjudgedSeries{r.target, *model, compare_timing(*before, r, policy, m_ptr)->rel, r.id, before->id});
      continue;
    }
    if (change == Change::new_failure) {
      const auto flake =
          flakes ? flakes->find(CaseKey{r.gpu_model, r.instance, r.dtype, r.shape}) : FlakeBook::const_iterator{};
      if (flakes && flake != flakes->end() && flake->second.flaky) {
        const FlakeState& f = flake->second;
        v.flaky.push_back({r.target, r.gpu_model, r.instance, r.dtype, r.shape, r.status, r.id, r.seed, f.since_ms,
                           f.runs, f.failures, f.to_release});
        continue;
      }
      v.reasons.push_back(numerics_reason(r, before, at));
      continue;
    }
    if (change == Change::unstable) {
      const auto d = compare_timing(*before, r, policy, m_ptr);
      if (d && d->delta_us > 0)
        v.notes.push_back("performance: " + config_of(r) + " on " + r.target + " / " + r.gpu_model + ": +" +
                          fmt(d->rel * 100, 1) + "% " + than +
                          ", not counted: " + (r.unstable ? "this figure" : "the baseline figure") + " is unstable");
      continue;
    }
    // The re-measure of this (target, GPU model), and whether this figure is its.
    const auto m = remeasured.find({r.target, r.gpu_model});
    const bool from_remeasure = m != remeasured.end() && r.job_id && *r.job_id == m->second->job_id;
    const bool has_pair = from_remeasure && r.paired_median_us && *r.paired_median_us > 0;
    if (change != Change::regressed && !has_pair) continue;
    // A re-measure times every case of the instance, also cases the baseline never
    // measured, failed or did not time: with no baseline figure there is nothing to compare.
    const auto timed = before ? compare_timing(*before, r, policy, m_ptr) : std::nullopt;
    if (!timed) continue;
    const TimingDelta delta = *timed;
    if (m == remeasured.end()) {
      ask_remeasure(r);  // a suspect: confirmed or cleared by its re-measure
      continue;
    }
    auto job = jobs.find(m->second->job_id);
    if (job != jobs.end() && unfinished(job->second->status)) continue;  // listed below as an unfinished job
    const std::string what = "performance: " + config_of(r) + " on " + r.target + " / " + r.gpu_model + ": ";
    const std::string seen = fmt(delta.rel * 100, 1) + "% " + than;
    if (!has_pair) {
      // Figures of one harness on different machines or days differ by more than their
      // noise says (each boot has its own offset): without the baseline's harness timed
      // beside this one, a slowdown is a suspicion kport cannot settle.
      const std::string why = !from_remeasure ? "its re-measure job " + std::to_string(m->second->job_id) + " (" +
                                                    (job == jobs.end() ? std::string("missing")
                                                                       : std::string(to_string(job->second->status))) +
                                                    ") did not time it"
                                              : "its re-measure could not time the baseline's harness beside it";
      v.notes.push_back(what + "+" + seen + ", not judged: " + why +
                        "; a slowdown counts only when confirmed against the baseline's harness in interleaved "
                        "rounds on one GPU");
      NoiseModel unjudged = model ? *model : learn_noise(series_of(r), {}, policy.noise);
      v.insufficient_data.push_back(UnjudgedSeries{r.target, unjudged, delta.rel, r.id, before->id});
      continue;
    }
    // The interleaved pair shares the GPU, its clocks and its day: the difference that
    // remains is the code's. It alone decides.
    ResultFact base = r;
    base.median_us = r.paired_median_us;
    base.stddev_us = r.paired_stddev_us;
    base.samples = r.paired_samples;
    base.unstable = false;
    const auto pair = compare_timing(base, r, policy, m_ptr);
    std::optional<double> band;
    bool counts = false;
    if (pair && m_ptr) {
      band = confirm_band(*m_ptr, r.paired_round_medians_us, r.round_medians_us, policy.noise);
      counts = band && pair->rel > *band;
    } else if (pair) {
      counts = pair->beyond && pair->delta_us > 0;  // the fixed rule, without a noise model
    }
    if (counts && r.unstable) {
      v.notes.push_back(what + "+" + fmt(pair->rel * 100, 2) +
                        "% against the baseline's harness interleaved on one GPU, not counted: this figure is "
                        "unstable");
      continue;
    }
    if (!counts) {
      // Both harnesses ran under one driver in the pair; a first figure taken under
      // another driver than the baseline's puts the rest of the gap on the driver.
      const bool across_drivers = !before->driver.empty() && !r.driver.empty() && before->driver != r.driver;
      if (change == Change::regressed)
        v.notes.push_back(what + "+" + seen + ", not confirmed: timed against the baseline's harness in interleaved " +
                          "rounds on the same GPU it differs by " +
                          (pair ? fmt(pair->rel * 100, 2) + "%" : std::string("nothing comparable")) +
                          (band ? ", inside the band +" + fmt(*band * 100, 1) + "%" : "") +
                          (across_drivers
                               ? "; the baseline's figure was taken with driver " + before->driver +
                                     " and this one with " + r.driver + ": the gap is the driver's, not the code's"
                               : std::string()));
      continue;
    }
    VerdictReason reason = perf_reason(r, *before, delta, than);
    reason.message += ", confirmed against the baseline's harness in interleaved rounds on the same GPU: +" +
                      fmt(pair->rel * 100, 2) + "%";
    if (band) {
      reason.message += ", beyond the band +" + fmt(*band * 100, 1) + "% (" + describe(*model, policy.noise) + ")";
      reason.figures["band"] = *band;
      reason.figures["sigma_aa"] = model->sigma_rel;
      reason.figures["mde"] = model->mde_rel;
      reason.figures["aa_degrees"] = static_cast<std::int64_t>(model->degrees);
    }
    reason.figures["paired_slowdown"] = pair->rel;
    reason.figures["paired_baseline_median_us"] = *r.paired_median_us;
    reason.figures["remeasure_job"] = m->second->job_id;
    v.reasons.push_back(std::move(reason));
  }
  for (auto& [key, req] : requests) {
    v.waiting.push_back("re-measure of " + std::to_string(req.instances.size()) + " suspected regression(s) on " +
                        req.target + " / " + req.gpu_model);
    v.remeasure.push_back(std::move(req));
  }

  // Jobs: unfinished ones keep the verdict pending; failed ones with nothing to show count.
  for (const auto& j : mine.jobs) {
    const std::string what = std::string(to_string(j.kind)) + " job " + std::to_string(j.id) + " (" + j.target +
                             (j.arch ? ", arch " + *j.arch : "") + ")";
    if (unfinished(j.status)) {
      v.waiting.push_back(what + " is " + to_string(j.status));
      continue;
    }
    if (j.status != JobState::failed) continue;
    if (j.failure_reason && infrastructure_failure(*j.failure_reason)) {
      v.infrastructure.push_back({j.target, j.gpu_model.value_or(""), j.id, std::nullopt,
                                  what + " failed on its machine, not its code: " + j.failure_reason->substr(0, 300)});
      continue;
    }
    const bool has_records = j.kind == JobKind::build ? targets_with_builds.count(j.target) > 0
                                                      : checked.count(j.id) > 0 ||
                                                            checked_unnamed.count({j.target, j.arch.value_or("")}) > 0;
    if (has_records) continue;
    VerdictReason r{"job_failure", "", j.target, j.gpu_model.value_or(""), "", {}};
    r.message = what + " failed: " + j.failure_reason.value_or("no reason given").substr(0, 300);
    r.figures = {{"job", j.id}, {"kind", std::string(to_string(j.kind))}};
    v.reasons.push_back(std::move(r));
  }

  v.status = !v.reasons.empty()                                          ? "fail"
             : !v.waiting.empty() || mine.jobs.empty()                   ? "pending"
             : !v.insufficient_data.empty() || !v.infrastructure.empty() ? "insufficient_data"
                                                                         : "pass";
  if (mine.jobs.empty()) v.waiting.emplace_back("no pipeline has run for this commit");
  return v;
}

std::vector<VerdictReason> compare_drivers(const std::vector<ResultFact>& now, const std::vector<ResultFact>& before,
                                           const std::string& driver, const std::string& previous_driver,
                                           const VerdictPolicy& policy) {
  // Same configuration on the same GPU model: the library, target and instance decide, not
  // the commit. Without the library a figure of one would be measured against another's.
  auto key = [](const ResultFact& r) { return std::make_tuple(r.repo, r.target, r.instance, r.dtype, r.shape); };
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, const ResultFact*> old;
  for (const auto& r : before) old[key(r)] = &r;
  const std::string than = "than driver " + previous_driver;
  std::vector<VerdictReason> out;
  for (const auto& r : now) {
    auto it = old.find(key(r));
    const ResultFact* b = it == old.end() ? nullptr : it->second;
    const Change change = classify(b, r, policy);
    std::optional<VerdictReason> reason;
    if (change == Change::new_failure) reason = numerics_reason(r, b, "with driver " + previous_driver);
    if (change == Change::regressed) reason = perf_reason(r, *b, *compare_timing(*b, r, policy), than);
    if (!reason) continue;
    reason->message += " (" + (r.repo.empty() ? std::string() : "library " + r.repo + ", ") + "driver " + driver + ")";
    if (!r.repo.empty()) reason->figures["library"] = r.repo;
    reason->figures["driver"] = driver;
    reason->figures["previous_driver"] = previous_driver;
    out.push_back(std::move(*reason));
  }
  return out;
}

}  // namespace kport::porting
