// The dashboard's pipeline and job pages (GET /api/v1/dashboard/pipelines/{id},
// GET /api/v1/dashboard/jobs/{id}): every job with its state, attempts, runner, timings
// and why it waits (job_waits.h), the commit's verdict and what was reported to the
// forge. Always read fresh: a job's wait changes with time alone (a runner going quiet,
// a backoff ending), and a page asks once per change it is told of.
#include <map>

#include "codec.h"
#include "context.h"
#include "hooks_and_verdicts.h"
#include "job_waits.h"
#include "kport/common/clock.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

using RunnerNames = std::map<std::int64_t, std::string>;

Result<RunnerNames> runner_names(Context& ctx) {
  auto runners = ctx.store->list_runners(true);
  if (!runners.ok()) return std::move(runners).error();
  RunnerNames out;
  for (const auto& r : *runners) out[r.id] = r.name;
  return out;
}

// A job as its pages show it: the API's job, its runner's name, how long it ran and why
// it waits.
Result<json::object> job_view(Context& ctx, const db::Job& j, const RunnerNames& names, std::int64_t now) {
  json::object o = to_json(j).as_object();
  o["runner_name"] = nullptr;
  if (j.runner_id)
    if (auto it = names.find(*j.runner_id); it != names.end()) o["runner_name"] = it->second;
  o["duration_ms"] = nullptr;
  if (j.started_ms) o["duration_ms"] = j.finished_ms.value_or(now) - *j.started_ms;
  WaitFacts facts;
  facts.job = j;
  facts.now_ms = now;
  if (j.depends_on) {
    auto dep = ctx.store->get_job(*j.depends_on);
    if (!dep.ok()) return std::move(dep).error();
    facts.dependency = std::move(*dep);
  }
  if (j.status == db::JobStatus::queued || j.status == db::JobStatus::awaiting_runner) {
    auto place = ctx.store->queue_place(j.id);
    if (!place.ok()) return std::move(place).error();
    facts.place = *place;
  }
  auto wait = wait_reason(facts);
  o["wait"] = wait ? json::value(*wait) : json::value(nullptr);
  o["log"] = "/api/v1/jobs/" + std::to_string(j.id) + "/log";
  return o;
}

json::object delivery_line(const db::Delivery& d) {
  return json::object{{"id", d.id},
                      {"kind", d.kind},
                      {"event", d.event},
                      {"state", d.state},
                      {"attempts", d.attempts},
                      {"max_attempts", d.max_attempts},
                      {"last_status", d.last_status ? json::value(*d.last_status) : json::value(nullptr)},
                      {"last_error", d.last_error}};
}

Response pipeline_page(Context& ctx, std::int64_t id) {
  auto p = ctx.store->get_pipeline(id);
  if (!p.ok()) return http::error_response(p.error());
  if (!*p)
    return http::error_response(make_error(Errc::not_found, "pipeline " + std::to_string(id) + " does not exist"));
  const db::Pipeline& pipeline = **p;
  db::JobFilter jf;
  jf.pipeline_id = id;
  jf.limit = db::k_max_page_limit;
  auto jobs = ctx.store->list_jobs(jf);
  if (!jobs.ok()) return http::error_response(jobs.error());
  auto names = runner_names(ctx);
  if (!names.ok()) return http::error_response(names.error());
  const std::int64_t now = now_unix_ms();
  json::array items;
  // Oldest first: the build before the checks it spawned.
  for (auto it = jobs->items.rbegin(); it != jobs->items.rend(); ++it) {
    auto view = job_view(ctx, *it, *names, now);
    if (!view.ok()) return http::error_response(view.error());
    items.push_back(std::move(*view));
  }
  auto commit = ctx.store->get_commit(pipeline.commit_sha);
  if (!commit.ok()) return http::error_response(commit.error());
  auto verdict = commit_verdict(ctx, pipeline.commit_sha);
  if (!verdict.ok()) return http::error_response(verdict.error());
  db::DeliveryFilter df;
  df.pipeline_id = id;
  df.limit = 50;
  auto deliveries = ctx.store->list_deliveries(df);
  if (!deliveries.ok()) return http::error_response(deliveries.error());
  json::array sent;
  for (const auto& d : deliveries->items) sent.push_back(delivery_line(d));
  return http::json_ok(json::object{{"pipeline", to_json(pipeline)},
                                    {"commit", *commit ? to_json(**commit) : json::value(nullptr)},
                                    {"verdict", to_json(*verdict)},
                                    {"jobs", std::move(items)},
                                    {"deliveries", std::move(sent)}});
}

Response job_page(Context& ctx, std::int64_t id) {
  auto j = ctx.store->get_job(id);
  if (!j.ok()) return http::error_response(j.error());
  if (!*j) return http::error_response(make_error(Errc::not_found, "job " + std::to_string(id) + " does not exist"));
  auto names = runner_names(ctx);
  if (!names.ok()) return http::error_response(names.error());
  auto view = job_view(ctx, **j, *names, now_unix_ms());
  if (!view.ok()) return http::error_response(view.error());
  auto p = ctx.store->get_pipeline((*j)->pipeline_id);
  if (!p.ok()) return http::error_response(p.error());
  return http::json_ok(json::object{{"job", std::move(*view)}, {"pipeline", *p ? to_json(**p) : json::value(nullptr)}});
}

}  // namespace

void add_pipeline_page_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "GET", "/api/v1/dashboard/pipelines/{id}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    return pipeline_page(ctx, *id);
  });
  add_blocking(router, ctx, "GET", "/api/v1/dashboard/jobs/{id}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    return job_page(ctx, *id);
  });
}

}  // namespace kport::coordinator
