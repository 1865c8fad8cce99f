// Record conversions are spelled out field by field so a new column never slips into
// the rule unseen, and the status mappings are total switches: a new db status fails to
// compile here instead of being judged as something it is not.
#include "verdict.h"

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

json::value figure_json(const porting::Figure& f) {
  return std::visit([](const auto& v) { return json::value(v); }, f);
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
  f.median_us = r.median_us;
  f.stddev_us = r.stddev_us;
  f.unstable = r.unstable;
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
  if (b.spill_stores_bytes || b.spill_loads_bytes) f.spill_bytes = b.spill_stores_bytes.value_or(0) + b.spill_loads_bytes.value_or(0);
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

Result<VerdictCase> verdict_case(db::Store& store, const std::string& sha, const db::VerdictInputs& mine) {
  VerdictCase c;
  c.commit = sha;
  c.mine = facts_of(mine);
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
  return porting::decide_verdict(c.commit, c.mine, c.baseline, c.base, policy);
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

json::value to_json(const VerdictReason& r) {
  json::object figures;
  for (const auto& [k, v] : r.figures) figures[k] = figure_json(v);
  return json::object{{"kind", r.kind}, {"variant", r.variant}, {"target", r.target}, {"gpu_model", r.gpu_model},
                      {"message", r.message}, {"figures", std::move(figures)}};
}

json::value to_json(const Verdict& v) {
  json::array reasons, waiting, notes;
  for (const auto& r : v.reasons) reasons.push_back(to_json(r));
  for (const auto& w : v.waiting) waiting.emplace_back(w);
  for (const auto& n : v.notes) notes.emplace_back(n);
  return json::object{{"commit", v.commit},
                      {"baseline", v.baseline ? json::value(*v.baseline) : json::value(nullptr)},
                      {"status", v.status},
                      {"reasons", std::move(reasons)},
                      {"waiting", std::move(waiting)},
                      {"notes", std::move(notes)},
                      {"compared", json::object{{"builds", v.builds}, {"results", v.results}}},
                      {"rule", porting::describe(v.policy)}};
}

}  // namespace kport::coordinator
