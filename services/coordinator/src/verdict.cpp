// Record conversions are spelled out field by field so a new column never slips into
// the rule unseen, and the status mappings are total switches: a new db status fails to
// compile here instead of being judged as something it is not.
#include "verdict.h"

#include <map>

#include "kport/common/clock.h"

namespace kport::coordinator {
namespace json = boost::json;

namespace {

porting::BuildOutcome outcome_of(db::BuildStatus s) {
  switch (s) {
    case db::BuildStatus::ok: return porting::BuildOutcome::ok;
    case db::BuildStatus::not_applicable: return porting::BuildOutcome::not_applicable;
    case db::BuildStatus::compile_error: return porting::BuildOutcome::compile_error;
    case db::BuildStatus::timeout: return porting::BuildOutcome::timeout;
  }
  return porting::BuildOutcome::compile_error;
}

porting::CheckOutcome outcome_of(db::ResultStatus s) {
  switch (s) {
    case db::ResultStatus::passed: return porting::CheckOutcome::passed;
    case db::ResultStatus::failed: return porting::CheckOutcome::failed;
    case db::ResultStatus::crashed: return porting::CheckOutcome::crashed;
    case db::ResultStatus::timeout: return porting::CheckOutcome::timeout;
    case db::ResultStatus::unsupported: return porting::CheckOutcome::unsupported;
  }
  return porting::CheckOutcome::failed;
}

porting::JobState state_of(db::JobStatus s) {
  switch (s) {
    case db::JobStatus::queued: return porting::JobState::queued;
    case db::JobStatus::awaiting_runner: return porting::JobState::awaiting_runner;
    case db::JobStatus::running: return porting::JobState::running;
    case db::JobStatus::succeeded: return porting::JobState::succeeded;
    case db::JobStatus::failed: return porting::JobState::failed;
    case db::JobStatus::cancelled: return porting::JobState::cancelled;
  }
  return porting::JobState::failed;
}

porting::JobFact job_fact(const db::Job& j) {
  porting::JobFact f;
  f.id = j.id;
  f.kind = j.kind == db::JobKind::build ? porting::JobKind::build : porting::JobKind::check;
  f.status = state_of(j.status);
  f.target = j.target;
  f.arch = j.arch;
  f.gpu_model = j.gpu_model;
  f.failure_reason = j.failure_reason;
  return f;
}

std::vector<porting::ResultFact> result_facts(const std::vector<db::ResultRecord>& records) {
  std::vector<porting::ResultFact> out;
  out.reserve(records.size());
  for (const auto& r : records) out.push_back(kport::coordinator::fact_of(r));
  return out;
}

}  // namespace

porting::ResultFact fact_of(const db::ResultRecord& r) {
  porting::ResultFact f;
  f.id = r.id;
  f.target = r.target;
  f.gpu_model = r.gpu_model;
  f.arch = r.arch;
  f.family = r.family;
  f.variant = r.variant;
  f.instance = r.instance;
  f.dtype = r.dtype;
  f.shape = r.shape;
  f.status = outcome_of(r.status);
  f.message = r.message;
  f.max_rel_err = r.max_rel_err;
  f.tolerance = r.tolerance;
  f.nan_inf_count = r.nan_inf_count;
  f.driver = r.driver;
  f.repo = r.repo;
  f.median_us = r.median_us;
  f.stddev_us = r.stddev_us;
  f.samples = r.samples;
  f.job_id = r.job_id;
  f.seed = r.seed;
  f.unstable = r.unstable;
  // A re-measure's interleaved figure of the baseline's harness (env.timing.paired).
  boost::system::error_code ec;
  const json::value env = json::parse(r.env_json, ec);
  auto num = [](const json::object& o, const char* k) -> std::optional<double> {
    const auto* v = o.if_contains(k);
    return v && v->is_number() ? std::optional<double>(v->to_number<double>()) : std::nullopt;
  };
  // The medians of the rounds a figure kept, in microseconds.
  auto medians = [](const json::value* list, const char* key) {
    std::vector<double> out;
    if (!list || !list->is_array()) return out;
    for (const auto& x : list->as_array()) {
      if (x.is_number()) {
        out.push_back(x.to_number<double>() * 1000);
        continue;
      }
      if (!x.is_object()) continue;
      const auto& o = x.as_object();
      if (const auto* dropped = o.if_contains("outlier"); dropped && dropped->is_bool() && dropped->as_bool()) continue;
      if (const auto* m = o.if_contains(key); m && m->is_number()) out.push_back(m->to_number<double>() * 1000);
    }
    return out;
  };
  if (!ec && env.is_object())
    if (const auto* t = env.as_object().if_contains("timing"); t && t->is_object()) {
      f.round_medians_us = medians(t->as_object().if_contains("rounds"), "median_ms");
      if (const auto* p = t->as_object().if_contains("paired"); p && p->is_object()) {
        const auto& o = p->as_object();
        const auto* unstable = o.if_contains("unstable");
        if (auto m = num(o, "median_ms"); m && *m > 0 && !(unstable && unstable->is_bool() && unstable->as_bool())) {
          f.paired_median_us = *m * 1000;
          if (auto sd = num(o, "stddev_ms")) f.paired_stddev_us = *sd * 1000;
          if (auto n = num(o, "samples")) f.paired_samples = static_cast<std::int64_t>(*n);
          f.paired_round_medians_us = medians(o.if_contains("round_medians_ms"), "");
        }
      }
    }
  return f;
}

porting::BuildFact fact_of(const db::BuildRecord& b) {
  porting::BuildFact f;
  f.id = b.id;
  f.target = b.target;
  f.family = b.family;
  f.variant = b.variant;
  f.status = outcome_of(b.status);
  f.message = b.message;
  if (b.spill_stores_bytes || b.spill_loads_bytes)
    f.spill_bytes = b.spill_stores_bytes.value_or(0) + b.spill_loads_bytes.value_or(0);
  f.shared_mem_bytes = b.shared_mem_bytes;
  return f;
}

porting::CommitFacts facts_of(const db::VerdictInputs& in) {
  porting::CommitFacts f;
  for (const auto& j : in.jobs) f.jobs.push_back(job_fact(j));
  for (const auto& b : in.builds) f.builds.push_back(fact_of(b));
  f.results = result_facts(in.results);
  for (const auto& m : in.remeasures) f.remeasures.push_back({m.target, m.gpu_model, m.job_id});
  return f;
}

porting::NoiseBook noise_book(const std::vector<db::SeriesFigure>& figures, const porting::NoisePolicy& policy) {
  std::map<porting::SeriesKey, std::vector<porting::AaFigure>> by_series;
  for (const auto& f : figures)
    by_series[{f.gpu_model, f.driver, f.instance, f.dtype, f.shape}].push_back({f.code, f.median_us});
  porting::NoiseBook book;
  for (const auto& [key, history] : by_series) book.emplace(key, porting::learn_noise(key, history, policy));
  return book;
}

porting::FlakeBook flake_book(const std::vector<db::CaseRunRecord>& runs, const porting::FlakePolicy& policy) {
  std::map<porting::CaseKey, std::vector<porting::CaseRun>> by_case;
  for (const auto& r : runs) {
    porting::CaseRun run;
    run.code = r.code;
    run.commit = r.commit_sha;
    run.status = outcome_of(r.status);
    run.seed = r.seed;
    run.result = r.result_id;
    run.time_ms = r.created_ms;
    run.infrastructure = (r.status == db::ResultStatus::crashed || r.status == db::ResultStatus::timeout) &&
                         porting::mass_failure(r.job_results, r.job_broken, policy);
    by_case[{r.gpu_model, r.instance, r.dtype, r.shape}].push_back(std::move(run));
  }
  porting::FlakeBook book;
  for (auto& [key, list] : by_case) book.emplace(key, porting::decide_flake(key, std::move(list), policy));
  return book;
}

Result<VerdictCase> verdict_case(db::Store& store, const std::string& sha, const db::VerdictInputs& mine,
                                 const porting::FlakePolicy& flakes) {
  VerdictCase c;
  c.commit = sha;
  c.mine = facts_of(mine);
  auto history = store.commit_series_history(sha);
  if (!history.ok()) return std::move(history).error();
  c.noise = noise_book(*history);
  auto runs = store.case_runs(db::CaseRunFilter{sha, ""});
  if (!runs.ok()) return std::move(runs).error();
  c.flakes = flake_book(*runs, flakes);
  auto ancestor = store.validated_ancestor(sha);
  if (!ancestor.ok()) return std::move(ancestor).error();
  c.baseline = *ancestor;
  if (c.baseline) {
    auto b = store.verdict_inputs(*c.baseline);
    if (!b.ok()) return std::move(b).error();
    c.base = facts_of(*b);
  }
  return c;
}

Verdict decide(const VerdictCase& c, const VerdictPolicy& policy) {
  return porting::decide_verdict(c.commit, c.mine, c.baseline, c.base, policy, &c.noise, &c.flakes);
}

Verdict decide(const std::string& commit, const db::VerdictInputs& mine, const std::optional<std::string>& baseline_sha,
               const db::VerdictInputs& baseline, const VerdictPolicy& policy) {
  return porting::decide_verdict(commit, facts_of(mine), baseline_sha, facts_of(baseline), policy);
}

std::vector<VerdictReason> compare_drivers(const std::vector<db::ResultRecord>& now,
                                           const std::vector<db::ResultRecord>& before, const std::string& driver,
                                           const std::string& previous_driver, const VerdictPolicy& policy) {
  return porting::compare_drivers(result_facts(now), result_facts(before), driver, previous_driver, policy);
}

// The answers' forms are kport::api's (verdict.h there); these fill them from the rule's
// decisions, field by field.
api::VerdictReason to_api(const VerdictReason& r) {
  api::VerdictReason out{r.kind, r.variant, r.target, r.gpu_model, r.message, {}};
  for (const auto& [k, v] : r.figures) out.figures[k] = std::visit([](const auto& x) { return api::Figure(x); }, v);
  return out;
}

api::SeriesNoise to_api(const porting::NoiseModel& m, const porting::NoisePolicy& policy) {
  const auto& k = m.series;
  api::SeriesNoise out;
  out.gpu_model = k.gpu_model;
  out.driver = k.driver;
  out.instance = k.instance;
  out.dtype = k.dtype;
  out.shape = k.shape;
  out.calibrated = m.enough;
  out.figures = m.figures;
  out.codes = m.codes;
  out.degrees = m.degrees;
  out.needed = m.needed;
  if (m.enough) {
    out.sigma = m.sigma_rel;
    out.mde = m.mde_rel;
  }
  out.summary = porting::describe(m, policy);
  return out;
}

api::FlakeCase to_api(const porting::FlakeState& f) {
  api::FlakeCase out;
  out.gpu_model = f.key.gpu_model;
  out.instance = f.key.instance;
  out.dtype = f.key.dtype;
  out.shape = f.key.shape;
  out.state = f.flaky ? "flaky" : f.released ? "released" : "stable";
  if (f.since_ms) out.since = iso8601_utc(f.since_ms);
  out.first_commit = f.first_commit;
  out.runs = f.runs;
  out.failures = f.failures;
  out.clean_runs = f.clean_runs;
  out.to_release = f.to_release;
  for (const auto& e : f.failed) out.failed.push_back({e.result, e.seed, e.commit, porting::to_string(e.status)});
  return out;
}

api::CommitVerdict to_api(const Verdict& v) {
  api::CommitVerdict out;
  out.commit = v.commit;
  out.baseline = v.baseline;
  // porting's statuses are the wire's four names; anything else would be a broken invariant.
  out.status = api::parse_verdict_status(v.status).value_or(api::VerdictStatus::pending);
  for (const auto& r : v.reasons) out.reasons.push_back(to_api(r));
  out.waiting = v.waiting;
  out.notes = v.notes;
  for (const auto& u : v.insufficient_data)
    out.insufficient_data.push_back({to_api(u.model, v.policy.noise), u.target, u.rel, u.result, u.baseline_result});
  for (const auto& f : v.flaky)
    out.flaky.push_back({f.target, f.gpu_model, f.instance, f.dtype, f.shape, porting::to_string(f.status), f.result,
                         f.seed, iso8601_utc(f.since_ms), f.runs, f.failures, f.to_release});
  for (const auto& i : v.infrastructure)
    out.infrastructure.push_back({i.target, i.gpu_model, i.job, i.result, i.message});
  out.compared_builds = v.builds;
  out.compared_results = v.results;
  out.rule = porting::describe(v.policy, v.calibrated);
  return out;
}

json::value to_json(const VerdictReason& r) { return api::to_json(to_api(r)); }

json::object to_json(const porting::NoiseModel& m, const porting::NoisePolicy& policy) {
  return api::to_json(to_api(m, policy));
}

json::object to_json(const porting::FlakeState& f) { return api::to_json(to_api(f)); }

json::value to_json(const Verdict& v) { return api::to_json(to_api(v)); }

}  // namespace kport::coordinator
