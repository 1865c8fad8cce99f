// /api/v1/pipelines and /api/v1/jobs: what kport was asked to validate and how far it got.
#include "app/bisections.h"
#include "app/pipelines.h"
#include "claim_broker.h"
#include "codec.h"
#include "context.h"
#include "kport/api/job_report.h"
#include "kport/api/pipeline.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

// A pipeline with its jobs (kport::api::PipelineAnswer); no jobs when they cannot be read.
api::PipelineAnswer pipeline_with_jobs(Context& ctx, const db::Pipeline& p) {
  api::PipelineAnswer out{to_pipeline_info(p), {}};
  db::JobFilter jf;
  jf.pipeline_id = p.id;
  jf.limit = db::k_max_page_limit;
  auto jobs = ctx.store->list_jobs(jf);
  if (jobs.ok())
    for (const auto& j : jobs->items) out.jobs.push_back(to_job_info(j));
  return out;
}

Result<app::TriggerRequest> trigger_from_body(const std::string& body) {
  auto obj = parse_object(body);
  if (!obj.ok()) return std::move(obj).error();
  auto t = api::parse_trigger_request(*obj);
  if (!t.ok()) return std::move(t).error();
  app::TriggerRequest rq;
  rq.origin.commit_sha = std::move(t->commit);
  rq.origin.repo = std::move(t->repo);
  rq.origin.ref = std::move(t->ref);
  rq.origin.note = std::move(t->note);
  // The wire's reasons and the store's are the same five names.
  rq.origin.reason = db::parse_pipeline_reason(api::to_string(t->reason)).value_or(db::PipelineReason::manual);
  rq.targets = std::move(t->targets);
  rq.payload_json = json::serialize(t->payload);
  return rq;
}

// Pages and watchers learn of a job's new state from the event hub, as they do of a
// runner's completion.
void announce_job(Context& ctx, std::int64_t job, std::string_view status) {
  ctx.events->publish("jobs", "job", json::serialize(json::object{{"job", job}, {"status", status}}));
}

}  // namespace

void add_pipeline_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "GET", "/api/v1/pipelines", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    db::PipelineFilter f;
    KPORT_HTTP_TRY(page_params(req, f.limit, f.before_id));
    if (auto c = req.query_or("commit"); !c.empty()) f.commit_sha = std::string(c);
    if (auto r = req.query_or("repo"); !r.empty()) f.repo = std::string(r);
    if (auto r = req.query_or("reason"); !r.empty()) {
      f.reason = db::parse_pipeline_reason(r);
      if (!f.reason)
        return http::error_response(
            make_error(Errc::invalid_argument, "reason '" + std::string(r) + "' is not a pipeline reason"));
    }
    auto page = ctx.store->list_pipelines(f);
    if (!page.ok()) return http::error_response(page.error());
    return http::json_ok(page_to_json(*page));
  });

  add_blocking(router, ctx, "POST", "/api/v1/pipelines", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto rq = trigger_from_body(req.body);
    if (!rq.ok()) return http::error_response(rq.error());
    auto t = app::trigger(ctx, *rq);
    if (!t.ok()) return http::error_response(t.error());
    api::PipelineAnswer answer = pipeline_with_jobs(ctx, t->pipeline);
    // A commit already queued is answered with its pipeline and why none was opened.
    if (!t->created) {
      answer.pipeline.note = t->note;
      return http::json_ok(api::to_json(answer));
    }
    return http::json_response(201, api::to_json(answer));
  });

  add_blocking(router, ctx, "GET", "/api/v1/pipelines/{id}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto p = ctx.store->get_pipeline(*id);
    if (!p.ok()) return http::error_response(p.error());
    if (!*p)
      return http::error_response(make_error(Errc::not_found, "pipeline " + std::to_string(*id) + " does not exist"));
    return http::json_ok(api::to_json(pipeline_with_jobs(ctx, **p)));
  });

  add_blocking(router, ctx, "POST", "/api/v1/pipelines/{id}/cancel", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto n = ctx.store->cancel_pipeline(*id);
    if (!n.ok()) return http::error_response(n.error());
    if (*n > 0) ctx.events->publish("jobs", "job", json::serialize(json::object{{"pipeline", *id}, {"cancelled", *n}}));
    // A bisection's probe cancelled ends its bisection (its running jobs, once they stop).
    if (*n > 0) app::advance_pipeline(ctx, *id);
    return http::json_ok(json::object{{"pipeline", *id}, {"jobs_cancelled", *n}});
  });

  // Re-runs: every failed or cancelled job of the pipeline (or the one job) is queued
  // again with a fresh allowance of attempts (the store's state machine).
  add_blocking(router, ctx, "POST", "/api/v1/pipelines/{id}/rerun", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto ids = ctx.store->rerun_pipeline(*id, ctx.config.max_attempts);
    if (!ids.ok()) return http::error_response(ids.error());
    ctx.broker->notify();
    json::array jobs;
    for (auto j : *ids) {
      jobs.push_back(j);
      announce_job(ctx, j, "queued");
    }
    return http::json_ok(json::object{{"pipeline", *id}, {"jobs_requeued", std::move(jobs)}});
  });

  add_blocking(router, ctx, "POST", "/api/v1/jobs/{id}/rerun", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto j = ctx.store->rerun_job(*id, ctx.config.max_attempts);
    if (!j.ok()) return http::error_response(j.error());
    ctx.broker->notify();
    announce_job(ctx, *id, "queued");
    return http::json_ok(to_json(*j));
  });

  add_blocking(router, ctx, "GET", "/api/v1/jobs", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    db::JobFilter f;
    KPORT_HTTP_TRY(page_params(req, f.limit, f.before_id));
    if (auto s = req.query_or("status"); !s.empty()) {
      f.status = db::parse_job_status(s);
      if (!f.status)
        return http::error_response(
            make_error(Errc::invalid_argument, "status '" + std::string(s) + "' is not a job status"));
    }
    if (auto k = req.query_or("kind"); !k.empty()) {
      f.kind = db::parse_job_kind(k);
      if (!f.kind) return http::error_response(make_error(Errc::invalid_argument, "kind must be build or check"));
    }
    if (auto c = req.query_or("commit"); !c.empty()) f.commit_sha = std::string(c);
    if (auto t = req.query_or("target"); !t.empty()) f.target = std::string(t);
    auto page = ctx.store->list_jobs(f);
    if (!page.ok()) return http::error_response(page.error());
    return http::json_ok(page_to_json(*page));
  });

  add_blocking(router, ctx, "GET", "/api/v1/jobs/{id}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto j = ctx.store->get_job(*id);
    if (!j.ok()) return http::error_response(j.error());
    if (!*j) return http::error_response(make_error(Errc::not_found, "job " + std::to_string(*id) + " does not exist"));
    return http::json_ok(to_json(**j));
  });

  add_blocking(router, ctx, "POST", "/api/v1/jobs/{id}/cancel", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto s = ctx.store->cancel(*id);
    if (!s.ok()) return http::error_response(s.error());
    announce_job(ctx, *id, db::to_string(*s));
    if (*s == db::JobStatus::cancelled)
      if (auto job = ctx.store->get_job(*id); job.ok() && *job) app::advance_probe(ctx, **job);
    return http::json_ok(json::object{{"job", *id}, {"status", db::to_string(*s)}});
  });

  add_blocking(router, ctx, "GET", "/api/v1/jobs/{id}/log", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto after_q = int_query(req, "after", 0, INT64_MAX);
    KPORT_HTTP_TRY(after_q);
    const std::int64_t after = after_q->value_or(0);
    auto chunks = ctx.store->job_log(*id, after);
    if (!chunks.ok()) return http::error_response(chunks.error());
    if (req.query_or("format") == "text") {
      std::string text;
      for (const auto& c : *chunks) text += c.text;
      return http::text_response(200, std::move(text));
    }
    api::JobLog log{*id, {}};
    for (const auto& c : *chunks) log.chunks.push_back({c.seq, c.attempt, c.text});
    return http::json_ok(api::to_json(log));
  });
}

}  // namespace kport::coordinator
