#include <boost/asio/post.hpp>

#include <algorithm>
#include <charconv>

#include "context.h"
#include "kport/common/log.h"

namespace kport::coordinator {

void add_blocking(http::Router& router, Context& ctx, std::string_view method, std::string_view pattern,
                  BlockingHandler handler) {
  auto shared = std::make_shared<BlockingHandler>(std::move(handler));
  router.add(
      method, pattern,
      [&ctx, shared](http::Request&& req, http::Reply reply) {
        boost::asio::post(*ctx.workers, [shared, req = std::move(req), reply = std::move(reply)]() mutable {
          http::Response res;
          try {
            res = (*shared)(req);
          } catch (const std::exception& e) {
            log::error("handler failed", {{"route", req.route}, {"error", e.what()}});
            res = http::error_response(make_error(Errc::internal, "internal error; the coordinator logged it"));
          }
          reply(std::move(res));
        });
      },
      std::string(pattern));
}

Result<std::int64_t> id_param(const http::Request& req, std::string_view name) {
  std::string_view s = req.param(name);
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0)
    return make_error(Errc::invalid_argument,
                      std::string(name) + " '" + std::string(s) + "' is not a positive integer id");
  return v;
}

Status page_params(const http::Request& req, int& limit, std::optional<std::int64_t>& before) {
  if (auto l = req.query_or("limit"); !l.empty()) {
    int v = 0;
    auto [end, ec] = std::from_chars(l.data(), l.data() + l.size(), v);
    if (ec != std::errc() || end != l.data() + l.size() || v < 1 || v > db::k_max_page_limit)
      return make_error(Errc::invalid_argument, "limit must be an integer in 1..1000, got '" + std::string(l) + "'");
    limit = v;
  }
  if (auto b = req.query_or("before"); !b.empty()) {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(b.data(), b.data() + b.size(), v);
    if (ec != std::errc() || end != b.data() + b.size() || v <= 0)
      return make_error(Errc::invalid_argument,
                        "before must be a cursor from next_cursor, got '" + std::string(b) + "'");
    before = v;
  }
  return {};
}

Result<std::optional<std::int64_t>> int_query(const http::Request& req, std::string_view name, std::int64_t min,
                                              std::int64_t max) {
  std::string_view s = req.query_or(name);
  if (s.empty()) return std::optional<std::int64_t>{};
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max)
    return make_error(Errc::invalid_argument, "query parameter '" + std::string(name) + "' must be an integer in " +
                                                  std::to_string(min) + ".." + std::to_string(max) + ", got '" +
                                                  std::string(s) + "'");
  return std::optional<std::int64_t>{v};
}

Result<std::optional<std::string>> repo_query(const http::Request& req, Context& ctx) {
  std::string_view r = req.query_or("repo");
  if (r.empty()) return std::optional<std::string>{};
  auto known = ctx.store->list_repositories();
  if (!known.ok()) return std::move(known).error();
  if (std::none_of(known->begin(), known->end(), [&](const db::Repository& x) { return x.name == r; }))
    return make_error(Errc::not_found,
                      "repository '" + std::string(r) + "' is not known; GET /api/v1/repositories lists them");
  return std::optional<std::string>(std::string(r));
}

}  // namespace kport::coordinator
