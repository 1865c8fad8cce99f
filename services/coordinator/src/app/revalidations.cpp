// Pipelines and jobs that check builds again: revalidations of a new GPU model or driver,
// and re-measures of suspected slowdowns.
#include <algorithm>
#include <cctype>

#include "claim_broker.h"
#include "codec.h"
#include "kport/common/log.h"
#include "pipelines.h"

namespace kport::coordinator::app {
namespace json = boost::json;

namespace {

bool version_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    long x = 0, y = 0;
    while (i < a.size() && a[i] != '.')
      x = x * 10 + (std::isdigit(static_cast<unsigned char>(a[i])) ? a[i] - '0' : 0), ++i;
    while (j < b.size() && b[j] != '.')
      y = y * 10 + (std::isdigit(static_cast<unsigned char>(b[j])) ? b[j] - '0' : 0), ++j;
    if (x != y) return x < y;
    ++i, ++j;
  }
  return false;
}

}  // namespace

Result<std::vector<TargetState>> target_states(Context& ctx, const std::optional<std::string>& repo) {
  auto targets = ctx.store->list_targets();
  if (!targets.ok()) return std::move(targets).error();
  std::vector<TargetState> out;
  for (auto& t : *targets) {
    TargetState s;
    auto arches = ctx.store->target_check_arches(t.name);
    if (!arches.ok()) return std::move(arches).error();
    s.registered_arches = std::move(*arches);
    db::JobFilter jf;
    jf.kind = db::JobKind::build;
    jf.status = db::JobStatus::succeeded;
    jf.target = t.name;
    jf.repo = repo;
    jf.limit = 1;
    auto built = ctx.store->list_jobs(jf);
    if (!built.ok()) return std::move(built).error();
    if (!built->items.empty()) s.latest_build = built->items.front();
    s.target = std::move(t);
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<LibraryBuilds>> library_builds(Context& ctx, const std::string& gpu_model) {
  auto repos = ctx.store->list_repositories();
  if (!repos.ok()) return std::move(repos).error();
  // Builds of no library (no pipeline repository, no recorded commit) first, then each
  // registered library's: every one with a build is checked again.
  std::vector<std::string> names{""};
  for (const auto& r : *repos) names.push_back(r.name);
  std::vector<LibraryBuilds> out;
  for (const auto& name : names) {
    auto targets = target_states(ctx, name);
    if (!targets.ok()) return std::move(targets).error();
    if (std::none_of(targets->begin(), targets->end(), [](const TargetState& t) { return t.latest_build; })) continue;
    auto best = ctx.store->best_instances(gpu_model, name);
    if (!best.ok()) return std::move(best).error();
    out.push_back(LibraryBuilds{name, std::move(*targets), std::move(*best)});
  }
  return out;
}

std::string previous_driver(const db::GpuModel& g, const std::string& driver) {
  std::string best;
  for (const auto& d : g.drivers)
    if (d != driver && version_less(d, driver) && (best.empty() || version_less(best, d))) best = d;
  return best;
}

Result<RevalidationOpened> open_revalidation(Context& ctx, const std::string& gpu_model, const std::string& driver) {
  auto models = ctx.store->list_gpu_models();
  if (!models.ok()) return std::move(models).error();
  auto g = std::find_if(models->begin(), models->end(), [&](const db::GpuModel& m) { return m.name == gpu_model; });
  if (g == models->end() || std::count(g->drivers.begin(), g->drivers.end(), driver) == 0)
    return make_error(Errc::not_found, "no runner has reported " + gpu_model + " with driver " + driver +
                                           "; GET /api/v1/gpus lists what registered");
  db::Revalidation rv;
  rv.gpu_model = gpu_model;
  rv.driver = driver;
  rv.arch = g->arch;
  rv.previous_driver = previous_driver(*g, driver);
  auto libraries = library_builds(ctx, rv.gpu_model);
  if (!libraries.ok()) return std::move(libraries).error();
  const db::NewPipeline np = plan_revalidation(rv, *libraries, ctx.config.max_attempts);
  auto opened = ctx.store->open_revalidation(rv, np);
  if (!opened.ok()) return std::move(opened).error();
  RevalidationOpened out{std::move(*opened), 0};
  if (!out.revalidation) return out;
  out.jobs = np.jobs.size();
  if (out.revalidation->pipeline_id) {
    ctx.broker->notify();
    auto p = ctx.store->get_pipeline(*out.revalidation->pipeline_id);
    if (p.ok() && *p) {
      out.jobs = static_cast<std::size_t>((*p)->jobs_total);  // a check split over GPUs is several
      ctx.events->publish("pipelines", "pipeline", json::serialize(to_json(**p)));
    }
  }
  log::info("revalidation opened",
            {{"gpu", rv.gpu_model}, {"driver", rv.driver}, {"previous", rv.previous_driver}, {"jobs", out.jobs}});
  return out;
}

std::size_t queue_remeasures(Context& ctx, const db::Job& measured, const std::vector<RemeasureAsk>& asks,
                             const std::vector<db::Job>& commit_jobs) {
  std::size_t queued_count = 0;
  for (const auto& ask : asks) {
    auto plan = plan_remeasure(measured, ask, commit_jobs, ctx.config.max_attempts);
    if (!plan) continue;
    auto queued = ctx.store->request_remeasure(plan->pipeline_id, plan->record, plan->job);
    if (!queued.ok()) {
      log::warn("re-measure not queued", {{"commit", measured.commit_sha}, {"error", queued.error().message}});
      continue;
    }
    if (!*queued) continue;
    ++queued_count;
    ctx.broker->notify();
    log::info("re-measure queued", {{"commit", measured.commit_sha},
                                    {"target", ask.target},
                                    {"gpu", ask.gpu_model},
                                    {"suspects", ask.instances.size()}});
  }
  return queued_count;
}

}  // namespace kport::coordinator::app
