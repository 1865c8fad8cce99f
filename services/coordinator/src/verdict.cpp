// Only what changed counts: a failure the baseline shares is the baseline's problem,
// and a slowdown inside the noise of the two measurements is not a regression. A
// slowdown that passes both tests is measured once more before it fails the commit,
// because one noisy run on a shared GPU must not block a merge.
#include "verdict.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace kport::coordinator {
namespace json = boost::json;

namespace {

using ResultKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;
using BuildKey = std::tuple<std::string, std::string, std::string>;

ResultKey key_of(const db::ResultRecord& r) { return {r.target, r.gpu_model, r.instance, r.dtype, r.shape}; }
BuildKey key_of(const db::BuildRecord& b) { return {b.target, b.family, b.variant}; }

std::string fmt(double v, int precision = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

bool failing(db::ResultStatus s) {
  return s == db::ResultStatus::failed || s == db::ResultStatus::crashed || s == db::ResultStatus::timeout;
}
bool failing(db::BuildStatus s) { return s == db::BuildStatus::compile_error || s == db::BuildStatus::timeout; }
bool unfinished(db::JobStatus s) {
  return s == db::JobStatus::queued || s == db::JobStatus::awaiting_runner || s == db::JobStatus::running;
}

std::string config_of(const db::ResultRecord& r) { return r.instance + " " + r.dtype + " " + r.shape; }

std::string numerics_text(const db::ResultRecord& r) {
  std::string s = std::string(db::to_string(r.status));
  if (r.max_rel_err) s += ", max rel err " + fmt(*r.max_rel_err, 6);
  if (r.tolerance) s += " (tolerance " + fmt(*r.tolerance, 6) + ")";
  if (r.nan_inf_count && *r.nan_inf_count > 0) s += ", " + std::to_string(*r.nan_inf_count) + " NaN/Inf";
  if (!r.message.empty()) s += ": " + r.message.substr(0, 200);
  return s;
}

// A numerics failure of `now` that `before` did not have; nullopt otherwise.
std::optional<VerdictReason> numerics_reason(const db::ResultRecord& now, const db::ResultRecord* before,
                                             const std::string& than) {
  if (!failing(now.status) || (before && failing(before->status))) return std::nullopt;
  VerdictReason r{"numerics_failure", now.family + "." + now.variant, now.target, now.gpu_model, "", {}};
  r.message = "numerics: " + config_of(now) + " on " + now.target + " / " + now.gpu_model + ": " + numerics_text(now) +
              (before ? " (passed " + than + ")" : " (no result " + than + ")");
  r.figures = {{"instance", now.instance}, {"dtype", now.dtype}, {"shape", now.shape}, {"status", db::to_string(now.status)},
               {"result", now.id}};
  if (now.max_rel_err) r.figures["max_rel_err"] = *now.max_rel_err;
  if (now.tolerance) r.figures["tolerance"] = *now.tolerance;
  return r;
}

// A slowdown of `now` against `before` beyond both the threshold and the noise.
std::optional<VerdictReason> perf_reason(const db::ResultRecord& now, const db::ResultRecord& before,
                                         const VerdictPolicy& policy, const std::string& than) {
  if (now.status != db::ResultStatus::passed || before.status != db::ResultStatus::passed) return std::nullopt;
  if (!now.median_us || !before.median_us || *before.median_us <= 0) return std::nullopt;
  const double delta = *now.median_us - *before.median_us;
  const double rel = delta / *before.median_us;
  const double sn = now.stddev_us.value_or(0), sb = before.stddev_us.value_or(0);
  const double noise = policy.noise_sigmas * std::sqrt(sn * sn + sb * sb);
  if (rel < policy.slowdown || delta <= noise) return std::nullopt;
  VerdictReason r{"perf_regression", now.family + "." + now.variant, now.target, now.gpu_model, "", {}};
  r.message = "performance: " + config_of(now) + " on " + now.target + " / " + now.gpu_model + ": median " +
              fmt(*before.median_us) + " us -> " + fmt(*now.median_us) + " us (+" + fmt(rel * 100, 1) +
              "%, noise +-" + fmt(noise) + " us) " + than;
  r.figures = {{"instance", now.instance}, {"dtype", now.dtype}, {"shape", now.shape}, {"median_us", *now.median_us},
               {"baseline_median_us", *before.median_us}, {"slowdown", rel}, {"noise_us", noise},
               {"result", now.id}, {"baseline_result", before.id}};
  return r;
}

std::optional<VerdictReason> resource_reason(const db::BuildRecord& now, const db::BuildRecord& before,
                                             const std::string& than) {
  if (now.status != db::BuildStatus::ok || before.status != db::BuildStatus::ok) return std::nullopt;
  std::vector<std::string> what;
  json::object figures;
  auto spills = [](const db::BuildRecord& b) { return b.spill_stores_bytes.value_or(0) + b.spill_loads_bytes.value_or(0); };
  if (spills(now) > spills(before)) {
    what.push_back((spills(before) == 0 ? "new register spills " : "more register spills ") + std::to_string(spills(before)) +
                   " -> " + std::to_string(spills(now)) + " B");
    figures["spill_bytes"] = spills(now);
    figures["baseline_spill_bytes"] = spills(before);
  }
  if (now.shared_mem_bytes && before.shared_mem_bytes && *now.shared_mem_bytes > *before.shared_mem_bytes) {
    what.push_back("shared memory " + std::to_string(*before.shared_mem_bytes) + " -> " + std::to_string(*now.shared_mem_bytes) + " B");
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

Verdict decide(const std::string& commit, const db::VerdictInputs& mine, const std::optional<std::string>& baseline_sha,
               const db::VerdictInputs& baseline, const VerdictPolicy& policy) {
  Verdict v;
  v.commit = commit;
  v.baseline = baseline_sha;
  v.builds = static_cast<int>(mine.builds.size());
  v.results = static_cast<int>(mine.results.size());
  const std::string than = baseline_sha ? "than " + baseline_sha->substr(0, 12) : "(no validated ancestor)";

  std::map<BuildKey, const db::BuildRecord*> base_builds;
  for (const auto& b : baseline.builds) base_builds[key_of(b)] = &b;
  std::map<ResultKey, const db::ResultRecord*> base_results;
  for (const auto& r : baseline.results) base_results[key_of(r)] = &r;

  // Builds: new compile failures and resource growth.
  std::set<std::string> targets_with_builds;
  for (const auto& b : mine.builds) {
    targets_with_builds.insert(b.target);
    auto it = base_builds.find(key_of(b));
    const db::BuildRecord* before = it == base_builds.end() ? nullptr : it->second;
    if (failing(b.status) && !(before && failing(before->status))) {
      VerdictReason r{"build_failure", b.family + "." + b.variant, b.target, "", "", {}};
      std::string first_line = b.message.substr(0, b.message.find('\n')).substr(0, 200);
      r.message = "build: " + r.variant + " on " + b.target + ": " + std::string(db::to_string(b.status)) +
                  (before ? " (built " + than + ")" : " (no build " + than + ")") +
                  (first_line.empty() ? "" : ": " + first_line);
      r.figures = {{"status", db::to_string(b.status)}, {"build", b.id}};
      v.reasons.push_back(std::move(r));
    } else if (before) {
      if (auto r = resource_reason(b, *before, than)) v.reasons.push_back(std::move(*r));
    }
  }

  // Results: numerics, then performance with its re-measure.
  std::map<std::pair<std::string, std::string>, const db::Remeasure*> remeasured;
  for (const auto& m : mine.remeasures) remeasured[{m.target, m.gpu_model}] = &m;
  std::map<std::int64_t, const db::Job*> jobs;
  for (const auto& j : mine.jobs) jobs[j.id] = &j;
  std::map<std::pair<std::string, std::string>, RemeasureRequest> requests;
  std::set<std::pair<std::string, std::string>> checked;  // (target, arch) with results
  for (const auto& r : mine.results) {
    checked.insert({r.target, r.arch});
    auto it = base_results.find(key_of(r));
    const db::ResultRecord* before = it == base_results.end() ? nullptr : it->second;
    if (auto reason = numerics_reason(r, before, than)) {
      v.reasons.push_back(std::move(*reason));
      continue;
    }
    if (!before) continue;
    auto reason = perf_reason(r, *before, policy, than);
    if (!reason) continue;
    auto m = remeasured.find({r.target, r.gpu_model});
    if (m == remeasured.end()) {
      auto& req = requests[{r.target, r.gpu_model}];
      req.target = r.target;
      req.gpu_model = r.gpu_model;
      req.arch = r.arch;
      req.instances.push_back(r.instance);
      continue;
    }
    auto job = jobs.find(m->second->job_id);
    if (job != jobs.end() && unfinished(job->second->status)) continue;  // listed below as an unfinished job
    // A re-measure that could not run leaves the first figures standing, and says so.
    const bool measured_again = job != jobs.end() && job->second->status == db::JobStatus::succeeded;
    reason->message += measured_again ? " (re-measured)"
                                  : " (re-measure job " + std::to_string(m->second->job_id) + " " +
                                        (job == jobs.end() ? std::string("missing") : std::string(db::to_string(job->second->status))) + ")";
    reason->figures["remeasure_job"] = m->second->job_id;
    v.reasons.push_back(std::move(*reason));
  }
  for (auto& [key, req] : requests) {
    v.waiting.push_back("re-measure of " + std::to_string(req.instances.size()) + " suspected regression(s) on " +
                        req.target + " / " + req.gpu_model);
    v.remeasure.push_back(std::move(req));
  }

  // Jobs: unfinished ones keep the verdict pending; failed ones with nothing to show count.
  for (const auto& j : mine.jobs) {
    const std::string what = std::string(db::to_string(j.kind)) + " job " + std::to_string(j.id) + " (" + j.target +
                             (j.arch ? ", arch " + *j.arch : "") + ")";
    if (unfinished(j.status)) {
      v.waiting.push_back(what + " is " + std::string(db::to_string(j.status)));
      continue;
    }
    if (j.status != db::JobStatus::failed) continue;
    const bool has_records = j.kind == db::JobKind::build ? targets_with_builds.count(j.target) > 0
                                                          : checked.count({j.target, j.arch.value_or("")}) > 0;
    if (has_records) continue;
    VerdictReason r{"job_failure", "", j.target, j.gpu_model.value_or(""), "", {}};
    r.message = what + " failed: " + j.failure_reason.value_or("no reason given").substr(0, 300);
    r.figures = {{"job", j.id}, {"kind", db::to_string(j.kind)}};
    v.reasons.push_back(std::move(r));
  }

  v.status = !v.reasons.empty() ? "fail" : !v.waiting.empty() || mine.jobs.empty() ? "pending" : "pass";
  if (mine.jobs.empty()) v.waiting.push_back("no pipeline has run for this commit");
  return v;
}

std::vector<VerdictReason> compare_drivers(const std::vector<db::ResultRecord>& now,
                                           const std::vector<db::ResultRecord>& before, const std::string& driver,
                                           const std::string& previous_driver, const VerdictPolicy& policy) {
  // Same configuration on the same GPU model: the target and instance decide, not the commit.
  auto key = [](const db::ResultRecord& r) { return std::make_tuple(r.target, r.instance, r.dtype, r.shape); };
  std::map<std::tuple<std::string, std::string, std::string, std::string>, const db::ResultRecord*> old;
  for (const auto& r : before) old[key(r)] = &r;
  const std::string than = "than driver " + previous_driver;
  std::vector<VerdictReason> out;
  for (const auto& r : now) {
    auto it = old.find(key(r));
    const db::ResultRecord* b = it == old.end() ? nullptr : it->second;
    std::optional<VerdictReason> reason = numerics_reason(r, b, than);
    if (!reason && b) reason = perf_reason(r, *b, policy, than);
    if (!reason) continue;
    reason->message += " (driver " + driver + ")";
    reason->figures["driver"] = driver;
    reason->figures["previous_driver"] = previous_driver;
    out.push_back(std::move(*reason));
  }
  return out;
}

json::value to_json(const VerdictReason& r) {
  return json::object{{"kind", r.kind}, {"variant", r.variant}, {"target", r.target}, {"gpu_model", r.gpu_model},
                      {"message", r.message}, {"figures", r.figures}};
}

json::value to_json(const Verdict& v) {
  json::array reasons, waiting;
  for (const auto& r : v.reasons) reasons.push_back(to_json(r));
  for (const auto& w : v.waiting) waiting.emplace_back(w);
  return json::object{{"commit", v.commit},
                      {"baseline", v.baseline ? json::value(*v.baseline) : json::value(nullptr)},
                      {"status", v.status},
                      {"reasons", std::move(reasons)},
                      {"waiting", std::move(waiting)},
                      {"compared", json::object{{"builds", v.builds}, {"results", v.results}}}};
}

}  // namespace kport::coordinator
