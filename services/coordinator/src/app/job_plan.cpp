#include "job_plan.h"

#include <boost/json.hpp>

#include <tuple>

#include "kport/api/job_payload.h"
#include "kport/porting/check_arches.h"

namespace kport::coordinator::app {
namespace json = boost::json;

void set_payload(db::JobSpec& spec, const api::JobPayload& payload) {
  spec.payload_json = json::serialize(api::to_json(payload));
  switch (payload.purpose) {
    case api::JobPurpose::check: spec.purpose = db::JobPurpose::check; break;
    case api::JobPurpose::revalidate: spec.purpose = db::JobPurpose::revalidate; break;
    case api::JobPurpose::remeasure: spec.purpose = db::JobPurpose::remeasure; break;
    case api::JobPurpose::measure_request: spec.purpose = db::JobPurpose::measure_request; break;
  }
}

bool builds_from_scratch(db::PipelineReason reason) noexcept {
  return reason == db::PipelineReason::push || reason == db::PipelineReason::new_target ||
         reason == db::PipelineReason::manual;
}

db::NewPipeline plan_builds(const PipelineOrigin& origin, const std::vector<std::string>& targets, int max_attempts,
                            const std::string& payload_json) {
  db::NewPipeline np;
  np.reason = origin.reason;
  np.repo = origin.repo;
  np.ref = origin.ref;
  np.commit_sha = origin.commit_sha;
  np.note = origin.note;
  // A commit is validated once, whichever way its push arrived; a manual or new-target
  // pipeline runs again on purpose.
  np.once_per_commit = origin.reason == db::PipelineReason::push;
  db::JobSpec shared;
  if (auto payload = api::parse_job_payload(payload_json); payload.ok()) set_payload(shared, *payload);
  // The text as sent: a field the typed payload does not know stays where it was.
  shared.payload_json = payload_json;
  for (const auto& t : targets) {
    db::JobSpec spec;
    spec.kind = db::JobKind::build;
    spec.commit_sha = origin.commit_sha;
    spec.target = t;
    spec.max_attempts = max_attempts;
    spec.payload_json = shared.payload_json;
    spec.purpose = shared.purpose;
    np.jobs.push_back(std::move(spec));
  }
  return np;
}

db::NewPipeline plan_revalidation(const db::Revalidation& rv, const std::vector<LibraryBuilds>& libraries,
                                  int max_attempts) {
  const bool new_gpu = rv.previous_driver.empty();
  db::NewPipeline np;
  np.reason = new_gpu ? db::PipelineReason::new_gpu : db::PipelineReason::new_driver;
  np.note = new_gpu ? "new GPU " + rv.gpu_model + " (arch " + rv.arch + ", driver " + rv.driver + ")"
                    : "new driver " + rv.driver + " on " + rv.gpu_model + " (was " + rv.previous_driver + ")";
  for (const auto& library : libraries) {
    api::JobPayload payload;
    payload.purpose = api::JobPurpose::revalidate;
    payload.revalidate = api::RevalidationAsk{rv.gpu_model, rv.driver, rv.previous_driver};
    // The GPU runner checks only the listed instances, the library's own best. A model
    // seen for the first time has no best yet, so everything is checked.
    if (!new_gpu) payload.instances = library.best_instances;
    db::JobSpec shared;
    set_payload(shared, payload);
    for (const auto& t : library.targets) {
      if (!t.latest_build || !porting::checks_target(rv.arch, t.target.arch, t.registered_arches)) continue;
      const db::Job& b = *t.latest_build;
      db::JobSpec spec;
      spec.kind = db::JobKind::check;
      spec.commit_sha = b.commit_sha;
      spec.target = t.target.name;
      spec.arch = rv.arch;
      spec.gpu_model = rv.gpu_model;
      spec.depends_on = b.id;
      spec.max_attempts = max_attempts;
      spec.payload_json = shared.payload_json;
      spec.purpose = shared.purpose;
      if (np.commit_sha.empty()) np.commit_sha = b.commit_sha;
      np.jobs.push_back(std::move(spec));
    }
  }
  return np;
}

db::NewPipeline plan_revalidation(const db::Revalidation& rv, const std::vector<TargetState>& targets,
                                  const std::vector<std::string>& best_instances, int max_attempts) {
  return plan_revalidation(rv, std::vector<LibraryBuilds>{{"", targets, best_instances}}, max_attempts);
}

std::optional<PlannedRemeasure> plan_remeasure(const db::Job& measured, const RemeasureAsk& ask,
                                               const std::vector<db::Job>& commit_jobs, int max_attempts) {
  // The re-measure consumes the same build as the first measurement: the latest one
  // that succeeded, as the commit's jobs are ordered by id.
  const db::Job* build = nullptr;
  for (const auto& j : commit_jobs)
    if (j.kind == db::JobKind::build && j.commit_sha == measured.commit_sha && j.target == ask.target &&
        j.status == db::JobStatus::succeeded)
      build = &j;
  if (!build) return std::nullopt;
  json::array instances;
  for (const auto& i : ask.instances) instances.emplace_back(i);
  api::JobPayload payload;
  payload.purpose = api::JobPurpose::remeasure;
  payload.instances = ask.instances;
  payload.paired = ask.paired;
  PlannedRemeasure out;
  out.pipeline_id = build->pipeline_id;
  out.job.kind = db::JobKind::check;
  out.job.commit_sha = measured.commit_sha;
  out.job.target = ask.target;
  out.job.arch = ask.arch.empty() ? measured.arch : std::optional<std::string>(ask.arch);
  out.job.gpu_model = ask.gpu_model;
  out.job.depends_on = build->id;
  out.job.max_attempts = max_attempts;
  set_payload(out.job, payload);
  out.record = db::Remeasure{measured.commit_sha, ask.target, ask.gpu_model, 0, json::serialize(instances), 0};
  return out;
}

std::optional<db::NewPipeline> plan_measure(const MeasureAsk& ask, const std::vector<TargetState>& targets,
                                            int max_attempts) {
  // Rank: own arch before a target that only checks on it, "a" before the rest, newer build.
  auto rank = [&](const TargetState& t) {
    const bool own = t.target.arch == ask.arch;
    const bool specific = !t.target.name.empty() && t.target.name.back() == 'a';
    return std::make_tuple(own, own && specific, t.latest_build->id);
  };
  const TargetState* pick = nullptr;
  for (const auto& t : targets) {
    if (!t.latest_build || !porting::checks_target(ask.arch, t.target.arch, t.registered_arches)) continue;
    if (!pick || rank(t) > rank(*pick)) pick = &t;
  }
  if (!pick) return std::nullopt;
  const db::Job& b = *pick->latest_build;
  api::JobPayload payload;
  payload.purpose = api::JobPurpose::measure_request;
  payload.cases = std::vector<api::CaseAsk>{{ask.family, ask.dtype, ask.shape_text}};
  payload.bench = true;
  payload.best_request = api::BestRequestRef{ask.gpu_model, ask.family, ask.dtype, ask.shape_key};
  db::NewPipeline np;
  np.reason = db::PipelineReason::manual;
  np.repo = ask.repo;
  np.commit_sha = b.commit_sha;
  np.note = "measure " + ask.family + " " + ask.dtype + " " + ask.shape_text + " on " + ask.gpu_model +
            " (requested through /api/v1/best/requests)";
  db::JobSpec spec;
  spec.kind = db::JobKind::check;
  spec.commit_sha = b.commit_sha;
  spec.target = pick->target.name;
  spec.arch = ask.arch;
  spec.gpu_model = ask.gpu_model;
  spec.depends_on = b.id;
  spec.max_attempts = max_attempts;
  set_payload(spec, payload);
  np.jobs.push_back(std::move(spec));
  return np;
}

}  // namespace kport::coordinator::app
