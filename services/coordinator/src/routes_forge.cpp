// Forge connections (PUT /api/v1/repositories/{name}/forge, GET /api/v1/forges) and the
// outgoing delivery queue (GET /api/v1/deliveries). A connection's answer names its
// token file, or a GitHub App's id, installation and key file, never a token or a key.
#include <filesystem>
#include <fstream>

#include "codec.h"
#include "context.h"
#include "forge_report.h"
#include "github_app.h"
#include "kport/common/clock.h"
#include "kport/common/log.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;

namespace {

json::value when(const std::optional<std::int64_t>& ms) {
  return ms ? json::value(iso8601_utc(*ms)) : json::value(nullptr);
}

json::object connection_json(const db::ForgeConnection& c) {
  return json::object{{"repo", c.repo},
                      {"kind", c.kind},
                      {"api_url", c.api_url},
                      {"project", c.project},
                      {"mode", c.mode},
                      {"auth", c.auth()},
                      {"token_file", c.github_app() ? json::value(nullptr) : json::value(c.token_file)},
                      {"app_id", c.app_id ? json::value(*c.app_id) : json::value(nullptr)},
                      {"installation_id", c.installation_id ? json::value(*c.installation_id) : json::value(nullptr)},
                      {"private_key_file", c.github_app() ? json::value(c.private_key_file) : json::value(nullptr)},
                      {"state", c.broken_reason ? "broken" : "ok"},
                      {"broken_reason", c.broken_reason ? json::value(*c.broken_reason) : json::value(nullptr)},
                      {"broken_at", when(c.broken_ms)},
                      {"created_at", iso8601_utc(c.created_ms)},
                      {"updated_at", iso8601_utc(c.updated_ms)}};
}

json::object delivery_json(const db::Delivery& d) {
  boost::system::error_code ec;
  json::value body = json::parse(d.body, ec);
  if (ec) body = d.body;
  return json::object{
      {"id", d.id},
      {"kind", d.kind},
      {"event", d.event},
      {"repo", d.repo ? json::value(*d.repo) : json::value(nullptr)},
      {"pipeline", d.pipeline_id ? json::value(*d.pipeline_id) : json::value(nullptr)},
      {"commit", d.commit_sha},
      {"method", d.method},
      {"url", d.kind == "webhook" ? redact_url(d.url) : d.url},
      {"body", std::move(body)},
      {"state", d.state},
      {"attempts", d.attempts},
      {"max_attempts", d.max_attempts},
      {"next_attempt_at", d.state == "pending" ? json::value(iso8601_utc(d.next_attempt_ms)) : json::value(nullptr)},
      {"last_status", d.last_status ? json::value(*d.last_status) : json::value(nullptr)},
      {"last_error", d.last_error},
      {"created_at", iso8601_utc(d.created_ms)},
      {"finished_at", when(d.finished_ms)}};
}

}  // namespace

void add_forge_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "PUT", "/api/v1/repositories/{name}/forge", [&ctx](const Request& req) {
    KPORT_AUTH(require_admin(req, ctx));
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    Fields f(*obj, "");
    db::ForgeConnection c;
    c.repo = std::string(req.param("name"));
    c.kind = f.str("kind", 16);
    c.api_url = f.str("api_url", 2048);
    c.project = f.str("project", 512);
    auto token_file = f.opt_str("token_file", 4096);
    c.app_id = f.opt_int("app_id", 1, std::numeric_limits<std::int64_t>::max());
    c.installation_id = f.opt_int("installation_id", 1, std::numeric_limits<std::int64_t>::max());
    auto key_file = f.opt_str("private_key_file", 4096);
    c.mode = f.opt_str("mode", 16).value_or(c.kind == "github" ? "check" : "status");
    if (!f.ok()) return http::error_response(f.error());
    if (c.api_url.rfind("http://", 0) != 0 && c.api_url.rfind("https://", 0) != 0)
      return http::error_response(
          make_error(Errc::invalid_argument,
                     "field 'api_url' must be an http:// or https:// URL, such as https://api.github.com"));
    if (c.kind != "github" && c.kind != "gitea" && c.kind != "gitlab")
      return http::error_response(
          make_error(Errc::invalid_argument, "field 'kind' must be github, gitea or gitlab, not '" + c.kind + "'"));
    const bool app = c.app_id || c.installation_id || key_file;
    if (token_file && app)
      return http::error_response(make_error(Errc::invalid_argument,
                                             "give either 'token_file' (a token) or 'app_id', 'installation_id' and "
                                             "'private_key_file' (a GitHub App), not both"));
    if (!token_file && !app)
      return http::error_response(make_error(Errc::invalid_argument,
                                             "field 'token_file' is required (on GitHub, or a GitHub App's 'app_id', "
                                             "'installation_id' and 'private_key_file')"));
    if (app) {
      if (c.kind != "github")
        return http::error_response(make_error(
            Errc::invalid_argument, "GitHub App credentials are GitHub's; " + c.kind + " takes a 'token_file'"));
      for (const char* need : {"app_id", "installation_id", "private_key_file"})
        if (!f.source().if_contains(need) || f.source().at(need).is_null())
          return http::error_response(make_error(
              Errc::invalid_argument, std::string("field '") + need +
                                          "' is required with a GitHub App's credentials (app_id, installation_id "
                                          "and private_key_file)"));
      c.private_key_file = *key_file;
      // Refused now rather than at the first report, as the token file is; the key is
      // checked for what it is and who may read it, and dropped.
      if (auto key = read_private_key(c.private_key_file); !key.ok())
        return http::error_response(make_error(key.error().code, "field 'private_key_file': " + key.error().message));
    } else {
      c.token_file = *token_file;
      // Refused now rather than at the first report: the operator is here to fix it.
      if (!std::ifstream(c.token_file))
        return http::error_response(
            make_error(Errc::unprocessable, "field 'token_file': cannot read " + c.token_file +
                                                " as the coordinator; write the token there (mode 0600)"));
      // The token is as safe as its file: one others can read is refused, as a key is.
      std::error_code ec;
      const auto perms = std::filesystem::status(c.token_file, ec).permissions();
      if (!ec && (perms & (std::filesystem::perms::group_read | std::filesystem::perms::others_read)) !=
                     std::filesystem::perms::none)
        return http::error_response(make_error(Errc::unprocessable, "field 'token_file': " + c.token_file +
                                                                        " is readable by other users; chmod 600 it "
                                                                        "(owned by the coordinator's user)"));
    }
    auto put = ctx.store->put_forge_connection(c);
    if (!put.ok()) return http::error_response(put.error());
    log::info("forge connection set", {{"repo", c.repo}, {"kind", c.kind}, {"mode", c.mode}, {"auth", c.auth()}});
    return http::json_ok(connection_json(*put));
  });

  add_blocking(router, ctx, "GET", "/api/v1/forges", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto list = ctx.store->list_forge_connections();
    if (!list.ok()) return http::error_response(list.error());
    json::array items;
    for (const auto& c : *list) items.push_back(connection_json(c));
    return http::json_ok(json::object{{"items", std::move(items)}});
  });

  add_blocking(router, ctx, "GET", "/api/v1/deliveries", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    db::DeliveryFilter f;
    KPORT_HTTP_TRY(page_params(req, f.limit, f.before_id));
    auto pipeline = int_query(req, "pipeline", 1, std::numeric_limits<std::int64_t>::max());
    KPORT_HTTP_TRY(pipeline);
    f.pipeline_id = *pipeline;
    if (auto s = req.query_or("state"); !s.empty()) {
      if (s != "pending" && s != "delivered" && s != "failed")
        return http::error_response(make_error(
            Errc::invalid_argument, "state must be pending, delivered or failed, not '" + std::string(s) + "'"));
      f.state = std::string(s);
    }
    if (auto k = req.query_or("kind"); !k.empty()) {
      if (k != "check_run" && k != "commit_status" && k != "webhook")
        return http::error_response(make_error(
            Errc::invalid_argument, "kind must be check_run, commit_status or webhook, not '" + std::string(k) + "'"));
      f.kind = std::string(k);
    }
    if (auto r = req.query_or("repo"); !r.empty()) f.repo = std::string(r);
    auto page = ctx.store->list_deliveries(f);
    if (!page.ok()) return http::error_response(page.error());
    json::array items;
    for (const auto& d : page->items) items.push_back(delivery_json(d));
    return http::json_ok(json::object{{"items", std::move(items)},
                                      {"next_cursor", page->next_cursor ? json::value(*page->next_cursor) : nullptr}});
  });
}

}  // namespace kport::coordinator
