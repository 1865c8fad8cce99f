// /api/v1/best/requests: asking kport to measure a shape /api/v1/best answered without
// a measurement of it, and following that request to a measured answer. A request is of
// one library (repository): its instances, on its build, read back from its rows.
#include "app/pipelines.h"
#include "best_asks.h"
#include "codec.h"
#include "context.h"
#include "kport/api/best_request.h"
#include "kport/common/clock.h"
#include "kport/http/uri.h"

namespace kport::coordinator {
using http::Request;
using http::Response;

namespace {

std::string answer_url(const db::BestKey& k, const std::string& repo) {
  std::string url = "/api/v1/best?gpu=" + http::percent_encode(k.gpu_model) + "&op=" + http::percent_encode(k.family) +
                    "&dtype=" + http::percent_encode(k.dtype) + "&shape=" + http::percent_encode(k.shape);
  if (!repo.empty()) url += "&repo=" + http::percent_encode(repo);
  return url;
}

api::MeasureRequestInput key_of(const db::BestKey& k, const std::string& repo) {
  return {k.gpu_model, k.family, k.dtype, k.shape, repo};
}

api::MeasuredBest measured_of(const ExactAnswer& a) { return {a.best, a.result_ids}; }

api::MeasureRequestInfo request_info(Context& ctx, const db::BestRequest& r, const app::MeasureState& s) {
  api::MeasureRequestInfo out;
  out.key = key_of(r.key, r.repo);
  out.id = r.id;
  out.state = s.state;
  out.reason = s.reason;
  out.job = r.job_id;
  out.job_status = db::to_string(r.job.status);
  out.pipeline = r.job.pipeline_id;
  out.target = r.job.target;
  out.commit = r.job.commit_sha;
  out.requests = r.requests;
  out.asked = r.asked + (ctx.best_asks ? ctx.best_asks->pending(r.key, r.repo) : 0);
  out.created = iso8601_utc(r.created_ms);
  out.updated = iso8601_utc(r.updated_ms);
  if (s.answer.measured) out.measured = measured_of(s.answer);
  out.answer = answer_url(r.key, r.repo);
  return out;
}

Result<api::MeasureRequestInfo> one_request_info(Context& ctx, const db::BestRequest& r) {
  auto states = app::measure_states(ctx, {r});
  if (!states.ok()) return std::move(states).error();
  return request_info(ctx, r, states->front());
}

}  // namespace

void add_best_request_routes(http::Router& router, Context& ctx) {
  // Queues one pinned check job for the shape on its library's build (201), or answers
  // the open request of the same key and library (200, nothing queued), or says the shape
  // is already measured (200).
  add_blocking(router, ctx, "POST", "/api/v1/best/requests", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    auto asked = api::parse_measure_request_input(*obj);
    if (!asked.ok()) return http::error_response(asked.error());
    app::MeasureRequest rq;
    rq.gpu_model = asked->gpu;
    rq.op = asked->op;
    rq.dtype = asked->dtype;
    rq.shape = asked->shape;
    rq.repo = asked->repo;
    auto opened = app::request_measurement(ctx, rq);
    if (!opened.ok()) return http::error_response(opened.error());
    api::MeasureRequestAnswer answer;
    if (opened->outcome == app::MeasureOpened::Outcome::already_measured) {
      answer.outcome = api::MeasureOutcome::already_measured;
      answer.request.key = key_of(opened->key, opened->repo);
      answer.request.measured = measured_of(opened->answer);
      answer.request.answer = answer_url(opened->key, opened->repo);
      return http::json_ok(api::to_json(answer));
    }
    auto info = one_request_info(ctx, *opened->request);
    if (!info.ok()) return http::error_response(info.error());
    const bool queued = opened->outcome == app::MeasureOpened::Outcome::queued;
    answer.outcome = queued ? api::MeasureOutcome::queued : api::MeasureOutcome::coalesced;
    answer.request = std::move(*info);
    answer.queued_case = {opened->key.family, opened->key.dtype, opened->shape_text};
    return http::json_response(queued ? 201 : 200, api::to_json(answer));
  });

  add_blocking(router, ctx, "GET", "/api/v1/best/requests", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    db::BestRequestFilter f;
    KPORT_HTTP_TRY(page_params(req, f.limit, f.before_id));
    const std::string gpu(req.query_or("gpu"));
    if (gpu.size() > 256)
      return http::error_response(make_error(Errc::invalid_argument, "gpu name is longer than 256 bytes"));
    if (!gpu.empty()) f.gpu_model = gpu;
    if (req.query_or("repo").size() > 128)
      return http::error_response(make_error(Errc::invalid_argument, "repo name is longer than 128 bytes"));
    // A library kport does not know is named back (404), not answered with an empty page.
    auto repo = repo_query(req, ctx);
    KPORT_HTTP_TRY(repo);
    f.repo = *repo;
    auto page = ctx.store->list_best_requests(f);
    if (!page.ok()) return http::error_response(page.error());
    auto states = app::measure_states(ctx, page->items);
    if (!states.ok()) return http::error_response(states.error());
    api::MeasureRequestPage out;
    for (std::size_t i = 0; i < page->items.size(); ++i)
      out.items.push_back(request_info(ctx, page->items[i], (*states)[i]));
    out.next_cursor = page->next_cursor;
    // The questions /api/v1/best answered without a measurement, most asked first: what
    // is worth requesting next, each of the library it would measure (of the one asked
    // for only). Counts still in memory are added to the stored ones.
    constexpr int k_top = 20;
    auto stored = ctx.store->list_best_asks(gpu, k_top, f.repo);
    if (!stored.ok()) return http::error_response(stored.error());
    std::vector<db::BestAsk> asks = std::move(*stored);
    if (ctx.best_asks) {
      for (const auto& p : ctx.best_asks->pending_for(gpu, f.repo)) {
        auto it = std::find_if(asks.begin(), asks.end(), [&](const db::BestAsk& a) {
          return a.key.gpu_model == p.key.gpu_model && a.key.family == p.key.family && a.key.dtype == p.key.dtype &&
                 a.key.shape == p.key.shape && a.repo == p.repo;
        });
        if (it == asks.end()) {
          asks.push_back(p);
        } else {
          it->asks += p.asks;
          it->last_ms = std::max(it->last_ms, p.last_ms);
        }
      }
    }
    std::sort(asks.begin(), asks.end(), [](const db::BestAsk& a, const db::BestAsk& b) {
      return std::tie(b.asks, b.last_ms) < std::tie(a.asks, a.last_ms);
    });
    if (asks.size() > static_cast<std::size_t>(k_top)) asks.resize(k_top);
    for (const auto& a : asks)
      out.unmeasured_asks.push_back({key_of(a.key, a.repo), a.asks, iso8601_utc(a.first_ms), iso8601_utc(a.last_ms)});
    return http::json_ok(api::to_json(out));
  });

  add_blocking(router, ctx, "GET", "/api/v1/best/requests/{id}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto r = ctx.store->get_best_request(*id);
    if (!r.ok()) return http::error_response(r.error());
    if (!*r)
      return http::error_response(make_error(
          Errc::not_found,
          "measure request " + std::to_string(*id) + " does not exist; GET /api/v1/best/requests lists them"));
    auto info = one_request_info(ctx, **r);
    if (!info.ok()) return http::error_response(info.error());
    return http::json_ok(api::to_json(*info));
  });
}

}  // namespace kport::coordinator
