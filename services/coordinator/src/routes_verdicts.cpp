// Commit verdicts (GET /api/v1/commits/{sha}/verdict), the re-measures they ask for,
// and revalidations of a GPU model or driver seen for the first time
// (POST/GET /api/v1/revalidations, which kport-watcher's fleet watch calls).
#include <algorithm>

#include "claim_broker.h"
#include "codec.h"
#include "kport/common/log.h"
#include "watch.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

// Dotted driver versions compare by number: 580.65.06 > 580.9.
bool version_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    long x = 0, y = 0;
    while (i < a.size() && a[i] != '.') x = x * 10 + (std::isdigit(static_cast<unsigned char>(a[i])) ? a[i] - '0' : 0), ++i;
    while (j < b.size() && b[j] != '.') y = y * 10 + (std::isdigit(static_cast<unsigned char>(b[j])) ? b[j] - '0' : 0), ++j;
    if (x != y) return x < y;
    ++i, ++j;
  }
  return false;
}

// The newest driver seen with the model before `driver`.
std::string previous_driver(const db::GpuModel& g, const std::string& driver) {
  std::string best;
  for (const auto& d : g.drivers)
    if (d != driver && version_less(d, driver) && (best.empty() || version_less(best, d))) best = d;
  return best;
}

// One pinned check job per target the arch checks, at the latest commit that built it.
Result<db::NewPipeline> revalidation_pipeline(Context& ctx, const db::Revalidation& rv) {
  db::NewPipeline np;
  np.reason = rv.previous_driver.empty() ? db::PipelineReason::new_gpu : db::PipelineReason::new_driver;
  np.note = rv.previous_driver.empty() ? "new GPU " + rv.gpu_model + " (arch " + rv.arch + ", driver " + rv.driver + ")"
                                       : "new driver " + rv.driver + " on " + rv.gpu_model + " (was " + rv.previous_driver + ")";
  // A new driver on a known GPU model re-checks the instances that are best there now;
  // a GPU model never seen has no best yet, so everything is checked.
  json::array best;
  if (!rv.previous_driver.empty()) {
    auto names = ctx.store->best_instances(rv.gpu_model);
    if (!names.ok()) return std::move(names).error();
    for (const auto& n : *names) best.emplace_back(n);
  }
  auto targets = ctx.store->list_targets();
  if (!targets.ok()) return std::move(targets).error();
  for (const auto& t : *targets) {
    auto arches = ctx.store->target_check_arches(t.name);
    if (!arches.ok()) return std::move(arches).error();
    bool checks = arches->empty() ? t.arch == rv.arch : std::count(arches->begin(), arches->end(), rv.arch) > 0;
    if (!checks) continue;
    db::JobFilter jf;
    jf.kind = db::JobKind::build;
    jf.status = db::JobStatus::succeeded;
    jf.target = t.name;
    jf.limit = 1;
    auto built = ctx.store->list_jobs(jf);
    if (!built.ok()) return std::move(built).error();
    if (built->items.empty()) continue;
    const db::Job& b = built->items.front();
    db::JobSpec spec;
    spec.kind = db::JobKind::check;
    spec.commit_sha = b.commit_sha;
    spec.target = t.name;
    spec.arch = rv.arch;
    spec.gpu_model = rv.gpu_model;
    spec.depends_on = b.id;
    spec.max_attempts = ctx.config.max_attempts;
    json::object payload{
        {"revalidate", json::object{{"gpu_model", rv.gpu_model}, {"driver", rv.driver}, {"previous_driver", rv.previous_driver}}}};
    if (!best.empty()) payload["instances"] = best;  // the GPU runner checks only these
    spec.payload_json = json::serialize(payload);
    if (np.commit_sha.empty()) np.commit_sha = b.commit_sha;
    np.jobs.push_back(std::move(spec));
  }
  return np;
}

json::value revalidation_json(Context& ctx, const db::Revalidation& rv) {
  json::object out{{"gpu_model", rv.gpu_model}, {"driver", rv.driver}, {"arch", rv.arch},
                   {"previous_driver", rv.previous_driver.empty() ? json::value(nullptr) : json::value(rv.previous_driver)},
                   {"pipeline", rv.pipeline_id ? json::value(*rv.pipeline_id) : json::value(nullptr)}};
  std::string status = "pass";
  if (rv.pipeline_id) {
    auto p = ctx.store->get_pipeline(*rv.pipeline_id);
    if (p.ok() && *p && ((*p)->status == db::PipelineStatus::queued || (*p)->status == db::PipelineStatus::running))
      status = "pending";
  } else {
    status = "nothing_to_check";
  }
  json::array reasons;
  if (!rv.previous_driver.empty()) {
    auto now = ctx.store->driver_results(rv.gpu_model, rv.driver);
    auto before = ctx.store->driver_results(rv.gpu_model, rv.previous_driver);
    if (now.ok() && before.ok()) {
      for (const auto& r : compare_drivers(*now, *before, rv.driver, rv.previous_driver)) reasons.push_back(to_json(r));
      out["compared"] = json::object{{"results", now->size()}, {"previous_results", before->size()}};
    }
  }
  if (!reasons.empty()) status = "fail";
  out["status"] = status;
  out["reasons"] = std::move(reasons);
  return out;
}

}  // namespace

namespace {

// The verdict of `sha` from its own inputs, already read, against its validated ancestor.
Result<Verdict> verdict_of(Context& ctx, const std::string& sha, const db::VerdictInputs& mine) {
  auto c = verdict_case(*ctx.store, sha, mine);
  if (!c.ok()) return std::move(c).error();
  return decide(*c);
}

}  // namespace

Result<Verdict> commit_verdict(Context& ctx, const std::string& sha) {
  auto mine = ctx.store->verdict_inputs(sha);
  if (!mine.ok()) return std::move(mine).error();
  return verdict_of(ctx, sha, *mine);
}

void review_commit(Context& ctx, std::int64_t job_id) {
  auto job = ctx.store->get_job(job_id);
  if (!job.ok() || !*job || (*job)->kind != db::JobKind::check) return;
  // A revalidation measures an old commit on a new driver: compared with the previous
  // driver (GET /api/v1/revalidations), not a reason to re-measure the commit.
  if ((*job)->payload_json.find("\"revalidate\"") != std::string::npos) return;
  auto inputs = ctx.store->verdict_inputs((*job)->commit_sha);
  if (!inputs.ok()) return;
  auto v = verdict_of(ctx, (*job)->commit_sha, *inputs);
  if (!v.ok()) {
    log::warn("verdict failed", {{"commit", (*job)->commit_sha}, {"error", v.error().message}});
    return;
  }
  for (const auto& req : v->remeasure) {
    // The re-measure consumes the same build as the first measurement.
    const db::Job* build = nullptr;
    for (const auto& j : inputs->jobs)
      if (j.kind == db::JobKind::build && j.target == req.target && j.status == db::JobStatus::succeeded) build = &j;
    if (!build) continue;
    json::array instances;
    for (const auto& i : req.instances) instances.emplace_back(i);
    db::JobSpec spec;
    spec.kind = db::JobKind::check;
    spec.commit_sha = (*job)->commit_sha;
    spec.target = req.target;
    spec.arch = req.arch.empty() ? (*job)->arch : req.arch;
    spec.gpu_model = req.gpu_model;
    spec.depends_on = build->id;
    spec.max_attempts = ctx.config.max_attempts;
    spec.payload_json = json::serialize(json::object{{"remeasure", true}, {"instances", instances}});
    db::Remeasure what{(*job)->commit_sha, req.target, req.gpu_model, 0, json::serialize(instances), 0};
    auto queued = ctx.store->request_remeasure(build->pipeline_id, what, spec);
    if (!queued.ok()) {
      log::warn("re-measure not queued", {{"commit", what.commit_sha}, {"error", queued.error().message}});
      continue;
    }
    if (*queued) {
      ctx.broker->notify();
      log::info("re-measure queued", {{"commit", what.commit_sha}, {"target", req.target}, {"gpu", req.gpu_model},
                                      {"suspects", req.instances.size()}});
    }
  }
  ctx.events->publish("verdicts", "verdict", json::serialize(to_json(*v)));
}

void add_verdict_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "GET", "/api/v1/commits/{sha}/verdict", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    std::string rev(req.param("sha"));
    auto sha = ctx.store->resolve_commit(rev);
    if (!sha.ok()) return http::error_response(sha.error());
    if (!*sha)
      return http::error_response(make_error(Errc::not_found, "no pipeline or record for commit '" + rev + "'; push it or queue a pipeline"));
    auto v = commit_verdict(ctx, **sha);
    if (!v.ok()) return http::error_response(v.error());
    return http::json_ok(to_json(*v));
  });

  add_blocking(router, ctx, "GET", "/api/v1/revalidations", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto list = ctx.store->list_revalidations();
    if (!list.ok()) return http::error_response(list.error());
    json::array items;
    for (const auto& rv : *list) items.push_back(revalidation_json(ctx, rv));
    return http::json_ok(json::object{{"items", std::move(items)}});
  });

  // Opens the revalidation of a (GPU model, driver) a registered runner reported; the
  // same pair again answers 200 with opened=false.
  add_blocking(router, ctx, "POST", "/api/v1/revalidations", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    Fields f(*obj, "");
    db::Revalidation rv;
    rv.gpu_model = f.str("gpu_model", 128);
    rv.driver = f.str("driver", 64);
    if (!f.ok()) return http::error_response(f.error());
    auto models = ctx.store->list_gpu_models();
    if (!models.ok()) return http::error_response(models.error());
    auto g = std::find_if(models->begin(), models->end(), [&](const db::GpuModel& m) { return m.name == rv.gpu_model; });
    if (g == models->end() || std::count(g->drivers.begin(), g->drivers.end(), rv.driver) == 0)
      return http::error_response(make_error(Errc::not_found, "no runner has reported " + rv.gpu_model + " with driver " + rv.driver +
                                                                  "; GET /api/v1/gpus lists what registered"));
    rv.arch = g->arch;
    rv.previous_driver = previous_driver(*g, rv.driver);
    auto np = revalidation_pipeline(ctx, rv);
    if (!np.ok()) return http::error_response(np.error());
    auto opened = ctx.store->open_revalidation(rv, *np);
    if (!opened.ok()) return http::error_response(opened.error());
    if (!*opened) return http::json_ok(json::object{{"opened", false}, {"gpu_model", rv.gpu_model}, {"driver", rv.driver}});
    if ((*opened)->pipeline_id) ctx.broker->notify();
    log::info("revalidation opened", {{"gpu", rv.gpu_model}, {"driver", rv.driver}, {"previous", rv.previous_driver},
                                      {"jobs", np->jobs.size()}});
    json::object out = revalidation_json(ctx, **opened).as_object();
    out["opened"] = true;
    out["jobs"] = np->jobs.size();
    return http::json_response(201, out);
  });
}

}  // namespace kport::coordinator
