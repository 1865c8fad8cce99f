// Bisections (GET /api/v1/bisections, GET /api/v1/bisections/{id}, POST
// /api/v1/bisections, POST /api/v1/bisections/{id}/cancel): the searches verdicts start by
// themselves, one started by hand, and one stopped by hand.
#include "app/bisections.h"
#include "body_fields.h"
#include "kport/api/bisection.h"
#include "kport/common/log.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

void add_bisection_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "GET", "/api/v1/bisections", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    db::BisectionFilter f;
    if (auto st = page_params(req, f.limit, f.before_id); !st.ok()) return http::error_response(st.error());
    const std::string state(req.query_or("state"));
    if (!state.empty()) {
      if (state != "running" && state != "done" && state != "failed" && state != "cancelled")
        return http::error_response(make_error(
            Errc::invalid_argument, "query 'state' must be running, done, failed or cancelled, not '" + state + "'"));
      f.state = state;
    }
    const std::string rev(req.query_or("commit"));
    if (!rev.empty()) {
      auto sha = ctx.store->resolve_commit(rev);
      if (!sha.ok()) return http::error_response(sha.error());
      // A commit kport never saw is in no bisection: an empty list, not an error.
      if (!*sha) return http::json_ok(json::object{{"items", json::array{}}, {"next_cursor", nullptr}});
      f.commit = **sha;
    }
    auto page = ctx.store->list_bisections(f);
    if (!page.ok()) return http::error_response(page.error());
    json::array items;
    for (const auto& b : page->items) items.push_back(app::bisection_json(b));
    return http::json_ok(
        json::object{{"items", std::move(items)},
                     {"next_cursor", page->next_cursor ? json::value(*page->next_cursor) : json::value(nullptr)}});
  });

  add_blocking(router, ctx, "GET", "/api/v1/bisections/{id}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto id = id_param(req, "id");
    if (!id.ok()) return http::error_response(id.error());
    auto b = ctx.store->get_bisection(*id);
    if (!b.ok()) return http::error_response(b.error());
    if (!*b)
      return http::error_response(
          make_error(Errc::not_found, "no bisection " + std::to_string(*id) + "; GET /api/v1/bisections lists them"));
    return http::json_ok(app::bisection_json(**b));
  });

  // {reason?}: stops a running bisection (admin); its open probes' jobs are cancelled and
  // its end is reported like any other. 409 once it has ended.
  add_blocking(router, ctx, "POST", "/api/v1/bisections/{id}/cancel", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto id = id_param(req, "id");
    if (!id.ok()) return http::error_response(id.error());
    std::string reason;
    if (!req.body.empty()) {
      auto obj = parse_object(req.body);
      if (!obj.ok()) return http::error_response(obj.error());
      Fields f(*obj, "");
      reason = f.opt_str("reason", 500).value_or("");
      if (!f.ok()) return http::error_response(f.error());
    }
    auto b = app::cancel_bisection(ctx, *id, reason);
    if (!b.ok()) return http::error_response(b.error());
    return http::json_ok(app::bisection_json(*b));
  });

  // {kind, target, gpu_model?, bad, good?, cases?}: a bisection by hand (admin). The same
  // reason twice answers 200 with the one that exists.
  add_blocking(router, ctx, "POST", "/api/v1/bisections", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    auto asked = api::parse_bisection_request(*obj);
    if (!asked.ok()) return http::error_response(asked.error());
    const std::string& kind_text = asked->kind;
    const std::string& target = asked->target;
    const std::string gpu_model = asked->gpu_model.value_or("");
    const std::string& bad_rev = asked->bad;
    const std::optional<std::string>& good_rev = asked->good;
    const std::vector<std::string> cases = asked->cases.value_or(std::vector<std::string>{});
    auto kind = porting::bisect_kind_from(kind_text);
    if (!kind)
      return http::error_response(make_error(
          Errc::invalid_argument,
          "field 'kind' must be perf_regression, numerics_failure or build_failure, not '" + kind_text + "'"));
    auto resolve = [&](const std::string& rev, const char* field) -> Result<std::string> {
      auto sha = ctx.store->resolve_commit(rev);
      if (!sha.ok()) return std::move(sha).error();
      if (!*sha)
        return make_error(Errc::not_found, std::string("field '") + field + "': no pipeline or record for commit '" +
                                               rev + "'; push it or queue a pipeline");
      return **sha;
    };
    app::BisectRequest rq;
    rq.kind = *kind;
    rq.target = target;
    rq.gpu_model = gpu_model;
    rq.cases = cases;
    rq.origin = "manual";
    auto bad = resolve(bad_rev, "bad");
    if (!bad.ok()) return http::error_response(bad.error());
    rq.bad = *bad;
    if (good_rev) {
      auto good = resolve(*good_rev, "good");
      if (!good.ok()) return http::error_response(good.error());
      rq.good = *good;
    }
    auto opened = app::start_bisection(ctx, rq);
    if (!opened.ok()) return http::error_response(opened.error());
    if (!opened->bisection) {
      db::BisectionFilter lf;
      lf.commit = rq.bad;
      auto known = ctx.store->list_bisections(lf);
      if (known.ok())
        for (const auto& b : known->items)
          if (b.bad_sha == rq.bad && b.kind == kind_text && b.target == rq.target &&
              b.gpu_model == (rq.kind == porting::BisectKind::build_failure ? "" : rq.gpu_model)) {
            json::object out = app::bisection_json(b);
            out["opened"] = false;
            return http::json_ok(out);
          }
      return http::error_response(make_error(Errc::conflict, opened->note));
    }
    json::object out = app::bisection_json(*opened->bisection);
    out["opened"] = true;
    return http::json_response(201, out);
  });
}

}  // namespace kport::coordinator
