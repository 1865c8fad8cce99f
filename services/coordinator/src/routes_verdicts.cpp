// Commit verdicts (GET /api/v1/commits/{sha}/verdict), the re-measures they ask for,
// the series' noise they are judged by (GET /api/v1/series), flaky cases
// (GET /api/v1/flakes), and revalidations of a GPU model or driver seen for the first time
// (POST/GET /api/v1/revalidations, which kport-watcher's fleet watch calls).
#include <map>

#include "app/bisections.h"
#include "app/pipelines.h"
#include "codec.h"
#include "kport/api/job_payload.h"
#include "kport/api/revalidation.h"
#include "kport/common/log.h"
#include "hooks_and_verdicts.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

// How a revalidation stands: its pipeline's state, and its reasons against the previous
// driver's figures.
api::Revalidation revalidation_of(Context& ctx, const db::Revalidation& rv) {
  api::Revalidation out;
  out.gpu_model = rv.gpu_model;
  out.driver = rv.driver;
  out.arch = rv.arch;
  if (!rv.previous_driver.empty()) out.previous_driver = rv.previous_driver;
  out.pipeline = rv.pipeline_id;
  out.status = "pass";
  if (rv.pipeline_id) {
    auto p = ctx.store->get_pipeline(*rv.pipeline_id);
    if (p.ok() && *p && ((*p)->status == db::PipelineStatus::queued || (*p)->status == db::PipelineStatus::running))
      out.status = "pending";
  } else {
    out.status = "nothing_to_check";
  }
  if (!rv.previous_driver.empty()) {
    auto now = ctx.store->driver_results(rv.gpu_model, rv.driver);
    auto before = ctx.store->driver_results(rv.gpu_model, rv.previous_driver);
    if (now.ok() && before.ok()) {
      for (const auto& r : compare_drivers(*now, *before, rv.driver, rv.previous_driver))
        out.reasons.push_back(to_api(r));
      out.compared_results = static_cast<std::int64_t>(now->size());
      out.compared_previous_results = static_cast<std::int64_t>(before->size());
    }
  }
  if (!out.reasons.empty()) out.status = "fail";
  return out;
}

}  // namespace

namespace {

porting::FlakePolicy flake_policy(const Context& ctx) {
  porting::FlakePolicy p;
  p.release_after = ctx.config.flake_release_after;
  return p;
}

// The verdict of `sha` from its own inputs, already read, against its validated ancestor.
Result<Verdict> verdict_of(Context& ctx, const std::string& sha, const db::VerdictInputs& mine) {
  auto c = verdict_case(*ctx.store, sha, mine, flake_policy(ctx));
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
  if (!job.ok() || !*job) return;
  // A bisection's probe is read by its search, not judged as the commit's own check.
  if (app::advance_probe(ctx, **job)) return;
  if ((*job)->kind == db::JobKind::build) {
    // A build that failed outright spawns no check to review it: its compile errors
    // are bisected from here.
    if ((*job)->status != db::JobStatus::failed) return;
    auto v = commit_verdict(ctx, (*job)->commit_sha);
    if (v.ok()) app::start_bisections(ctx, *v);
    return;
  }
  // A revalidation measures an old commit on a new driver: compared with the previous
  // driver (GET /api/v1/revalidations), not a reason to re-measure the commit. A measure
  // request times a new shape on an already judged build: it answers /api/v1/best and is
  // left out of the commit's verdict (Store::verdict_inputs). A payload the coordinator
  // cannot read (a manual pipeline's) is judged as a plain check.
  const auto payload = api::parse_job_payload((*job)->payload_json);
  if (!payload.ok())
    log::warn("job payload unreadable; judged as a check",
              {{"job", std::to_string(job_id)}, {"error", payload.error().message}});
  const api::JobPurpose purpose = payload.ok() ? payload->purpose : api::JobPurpose::check;
  if (purpose == api::JobPurpose::revalidate || purpose == api::JobPurpose::measure_request) return;
  auto inputs = ctx.store->verdict_inputs((*job)->commit_sha);
  if (!inputs.ok()) return;
  auto v = verdict_of(ctx, (*job)->commit_sha, *inputs);
  if (!v.ok()) {
    log::warn("verdict failed", {{"commit", (*job)->commit_sha}, {"error", v.error().message}});
    return;
  }
  // The baseline's harness of each target, for re-measures interleaved with it.
  std::map<std::string, api::PairedHarness> paired;
  if (v->baseline && !v->remeasure.empty())
    if (auto base = ctx.store->verdict_inputs(*v->baseline); base.ok())
      for (const auto& b : base->builds)
        if (b.artifact_sha256 && !paired.count(b.target)) paired[b.target] = {*v->baseline, *b.artifact_sha256};
  std::vector<app::RemeasureAsk> asks;
  for (const auto& r : v->remeasure) {
    app::RemeasureAsk ask{r.target, r.gpu_model, r.arch, r.instances, std::nullopt};
    if (auto p = paired.find(r.target); p != paired.end()) ask.paired = p->second;
    asks.push_back(std::move(ask));
  }
  app::queue_remeasures(ctx, **job, asks, inputs->jobs);
  // Counted reasons with commits between the baseline and this commit are searched for
  // the commit that caused them, without anyone asking.
  app::start_bisections(ctx, *v);
  ctx.events->publish("verdicts", "verdict", json::serialize(to_json(*v)));
}

void add_verdict_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "GET", "/api/v1/commits/{sha}/verdict", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    std::string rev(req.param("sha"));
    auto sha = ctx.store->resolve_commit(rev);
    if (!sha.ok()) return http::error_response(sha.error());
    if (!*sha)
      return http::error_response(
          make_error(Errc::not_found, "no pipeline or record for commit '" + rev + "'; push it or queue a pipeline"));
    auto v = commit_verdict(ctx, **sha);
    if (!v.ok()) return http::error_response(v.error());
    return http::json_ok(to_json(*v));
  });

  add_blocking(router, ctx, "GET", "/api/v1/series", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    db::SeriesFilter f;
    f.gpu_model = std::string(req.query_or("gpu"));
    f.driver = std::string(req.query_or("driver"));
    f.instance = std::string(req.query_or("instance"));
    f.dtype = std::string(req.query_or("dtype"));
    f.shape = std::string(req.query_or("shape"));
    if (f.gpu_model.empty())
      return http::error_response(
          make_error(Errc::invalid_argument,
                     "query 'gpu' is required (a GPU model, e.g. gpu=NVIDIA%20H200); GET /api/v1/gpus lists them"));
    auto figures = ctx.store->series_history(f);
    if (!figures.ok()) return http::error_response(figures.error());
    const porting::VerdictPolicy policy;
    api::SeriesList out;
    for (const auto& [key, model] : noise_book(*figures, policy.noise))
      out.items.push_back(to_api(model, policy.noise));
    out.rule = porting::describe(policy, true);
    return http::json_ok(api::to_json(out));
  });

  add_blocking(router, ctx, "GET", "/api/v1/flakes", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    const std::string state(req.query_or("state", "flaky"));
    if (state != "flaky" && state != "released" && state != "all")
      return http::error_response(
          make_error(Errc::invalid_argument, "query 'state' must be flaky, released or all, not '" + state + "'"));
    auto runs = ctx.store->case_runs(db::CaseRunFilter{"", std::string(req.query_or("gpu"))});
    if (!runs.ok()) return http::error_response(runs.error());
    const porting::FlakePolicy policy = flake_policy(ctx);
    api::FlakeList out;
    for (const auto& [key, f] : flake_book(*runs, policy)) {
      if (!f.flaky && !f.released) continue;
      if (state == "flaky" && !f.flaky) continue;
      if (state == "released" && !f.released) continue;
      out.items.push_back(to_api(f));
    }
    out.release_after = policy.release_after;
    return http::json_ok(api::to_json(out));
  });

  add_blocking(router, ctx, "GET", "/api/v1/revalidations", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto list = ctx.store->list_revalidations();
    if (!list.ok()) return http::error_response(list.error());
    api::RevalidationList out;
    for (const auto& rv : *list) out.items.push_back(revalidation_of(ctx, rv));
    return http::json_ok(api::to_json(out));
  });

  // Opens the revalidation of a (GPU model, driver) a registered runner reported; the
  // same pair again answers 200 with opened=false.
  add_blocking(router, ctx, "POST", "/api/v1/revalidations", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    auto rq = api::parse_revalidation_request(*obj);
    if (!rq.ok()) return http::error_response(rq.error());
    auto opened = app::open_revalidation(ctx, rq->gpu_model, rq->driver);
    if (!opened.ok()) return http::error_response(opened.error());
    api::RevalidationAnswer out;
    if (!opened->revalidation) {
      out.revalidation.gpu_model = rq->gpu_model;
      out.revalidation.driver = rq->driver;
      return http::json_ok(api::to_json(out));
    }
    out.opened = true;
    out.revalidation = revalidation_of(ctx, *opened->revalidation);
    out.jobs = static_cast<std::int64_t>(opened->jobs);
    return http::json_response(201, api::to_json(out));
  });
}

}  // namespace kport::coordinator
