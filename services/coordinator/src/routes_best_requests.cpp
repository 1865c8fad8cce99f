// /api/v1/best/requests: asking kport to measure a shape /api/v1/best answered without
// a measurement of it, and following that request to a measured answer.
#include "app/pipelines.h"
#include "best_asks.h"
#include "codec.h"
#include "context.h"
#include "kport/common/clock.h"
#include "kport/http/uri.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

std::string answer_url(const db::BestKey& k) {
  return "/api/v1/best?gpu=" + http::percent_encode(k.gpu_model) + "&op=" + http::percent_encode(k.family) +
         "&dtype=" + http::percent_encode(k.dtype) + "&shape=" + http::percent_encode(k.shape);
}

json::object key_json(const db::BestKey& k) {
  return json::object{{"gpu", k.gpu_model}, {"op", k.family}, {"dtype", k.dtype}, {"shape", k.shape}};
}

json::object answer_json(const ExactAnswer& a) {
  json::array ids;
  for (auto id : a.result_ids) ids.emplace_back(id);
  return json::object{{"best", a.best}, {"results", std::move(ids)}};
}

json::object request_json(Context& ctx, const db::BestRequest& r, const app::MeasureState& s) {
  json::object out = key_json(r.key);
  out["id"] = r.id;
  out["state"] = s.state;
  if (!s.reason.empty()) out["reason"] = s.reason;
  out["job"] = r.job_id;
  out["job_status"] = db::to_string(r.job.status);
  out["pipeline"] = r.job.pipeline_id;
  out["target"] = r.job.target;
  out["commit"] = r.job.commit_sha;
  out["requests"] = r.requests;
  out["asked"] = r.asked + (ctx.best_asks ? ctx.best_asks->pending(r.key) : 0);
  out["created"] = iso8601_utc(r.created_ms);
  out["updated"] = iso8601_utc(r.updated_ms);
  if (s.answer.measured) out["measured"] = answer_json(s.answer);
  out["answer"] = answer_url(r.key);
  return out;
}

Result<json::object> one_request_json(Context& ctx, const db::BestRequest& r) {
  auto states = app::measure_states(ctx, {r});
  if (!states.ok()) return std::move(states).error();
  return request_json(ctx, r, states->front());
}

}  // namespace

void add_best_request_routes(http::Router& router, Context& ctx) {
  // Queues one pinned check job for the shape (201), or answers the open request of the
  // same key (200, nothing queued), or says the shape is already measured (200).
  add_blocking(router, ctx, "POST", "/api/v1/best/requests", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    Fields f(*obj, "");
    app::MeasureRequest rq;
    rq.gpu_model = f.str("gpu", 256);
    rq.op = f.str("op", 32);
    rq.dtype = f.str("dtype", 32);
    rq.shape = f.str("shape", 256);
    if (!f.ok()) return http::error_response(f.error());
    auto opened = app::request_measurement(ctx, rq);
    if (!opened.ok()) return http::error_response(opened.error());
    if (opened->outcome == app::MeasureOpened::Outcome::already_measured) {
      json::object out = key_json(opened->key);
      out["outcome"] = "already_measured";
      out["state"] = "measured";
      out["job"] = nullptr;
      out["measured"] = answer_json(opened->answer);
      out["answer"] = answer_url(opened->key);
      return http::json_ok(out);
    }
    auto body = one_request_json(ctx, *opened->request);
    if (!body.ok()) return http::error_response(body.error());
    const bool queued = opened->outcome == app::MeasureOpened::Outcome::queued;
    (*body)["outcome"] = queued ? "queued" : "coalesced";
    (*body)["case"] =
        json::object{{"family", opened->key.family}, {"dtype", opened->key.dtype}, {"shape", opened->shape_text}};
    return http::json_response(queued ? 201 : 200, *body);
  });

  add_blocking(router, ctx, "GET", "/api/v1/best/requests", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    db::BestRequestFilter f;
    KPORT_HTTP_TRY(page_params(req, f.limit, f.before_id));
    const std::string gpu(req.query_or("gpu"));
    if (gpu.size() > 256)
      return http::error_response(make_error(Errc::invalid_argument, "gpu name is longer than 256 bytes"));
    if (!gpu.empty()) f.gpu_model = gpu;
    auto page = ctx.store->list_best_requests(f);
    if (!page.ok()) return http::error_response(page.error());
    auto states = app::measure_states(ctx, page->items);
    if (!states.ok()) return http::error_response(states.error());
    json::array items;
    for (std::size_t i = 0; i < page->items.size(); ++i)
      items.push_back(request_json(ctx, page->items[i], (*states)[i]));
    // The questions /api/v1/best answered without a measurement, most asked first: what
    // is worth requesting next. Counts still in memory are added to the stored ones.
    constexpr int k_top = 20;
    auto stored = ctx.store->list_best_asks(gpu, k_top);
    if (!stored.ok()) return http::error_response(stored.error());
    std::vector<db::BestAsk> asks = std::move(*stored);
    if (ctx.best_asks) {
      for (const auto& p : ctx.best_asks->pending_for(gpu)) {
        auto it = std::find_if(asks.begin(), asks.end(), [&](const db::BestAsk& a) {
          return a.key.gpu_model == p.key.gpu_model && a.key.family == p.key.family && a.key.dtype == p.key.dtype &&
                 a.key.shape == p.key.shape;
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
    json::array asked;
    for (const auto& a : asks) {
      json::object o = key_json(a.key);
      o["asks"] = a.asks;
      o["first_asked"] = iso8601_utc(a.first_ms);
      o["last_asked"] = iso8601_utc(a.last_ms);
      asked.push_back(std::move(o));
    }
    return http::json_ok(json::object{{"items", std::move(items)},
                                      {"next_cursor", page->next_cursor ? json::value(*page->next_cursor) : nullptr},
                                      {"unmeasured_asks", std::move(asked)}});
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
    auto body = one_request_json(ctx, **r);
    if (!body.ok()) return http::error_response(body.error());
    return http::json_ok(*body);
  });
}

}  // namespace kport::coordinator
