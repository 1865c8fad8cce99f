#include "kport/runner/coordinator_api.h"

#include "kport/common/crypto.h"

namespace kport::runner {
namespace json = boost::json;

Errc errc_from_status(int status) {
  switch (status) {
    case 400: return Errc::invalid_argument;
    case 401: return Errc::unauthorized;
    case 403: return Errc::forbidden;
    case 404: return Errc::not_found;
    case 405: return Errc::method_not_allowed;
    case 408: return Errc::request_timeout;
    case 409: return Errc::conflict;
    case 410: return Errc::gone;
    case 413: return Errc::payload_too_large;
    case 422: return Errc::unprocessable;
    case 503: return Errc::unavailable;
    default: return Errc::internal;
  }
}

CoordinatorApi::CoordinatorApi(std::string server_url, std::string token)
    : m_server(std::move(server_url)), m_token(std::move(token)) {
  while (!m_server.empty() && m_server.back() == '/') m_server.pop_back();
}

Result<json::value> CoordinatorApi::send(std::string_view method, const std::string& path, std::string_view body,
                                         const std::string& token, std::chrono::milliseconds timeout,
                                         std::string_view content_type) {
  http::HeaderList headers;
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  if (!body.empty()) headers.emplace_back("Content-Type", std::string(content_type));
  auto r = m_client.fetch(method, m_server + path, body, headers, timeout);
  if (!r.ok()) return make_error(r.error().code, std::string(method) + " " + path + ": " + r.error().message);
  json::value doc;
  if (!r->body.empty()) {
    boost::system::error_code ec;
    doc = json::parse(r->body, ec);
    if (ec) doc = json::value(r->body);
  }
  if (r->status >= 400) {
    std::string message = r->body;
    if (doc.is_object())
      if (const auto* e = doc.as_object().if_contains("error"); e && e->is_object())
        if (const auto* m = e->as_object().if_contains("message"); m && m->is_string()) message = std::string(m->as_string());
    return make_error(errc_from_status(r->status),
                      std::string(method) + " " + path + " answered " + std::to_string(r->status) + ": " + message);
  }
  return doc;
}

Result<Registration> CoordinatorApi::register_runner(const std::string& registration_token, const json::object& body) {
  auto r = send("POST", "/api/v1/runners/register", json::serialize(body), registration_token);
  if (!r.ok()) return std::move(r).error();
  Registration reg;
  const auto& o = r->as_object();
  reg.token = std::string(o.at("token").as_string());
  if (const auto* runner = o.if_contains("runner"); runner && runner->is_object())
    reg.runner_id = runner->as_object().at("id").to_number<std::int64_t>();
  if (const auto* hb = o.if_contains("heartbeat_interval_ms"); hb && hb->is_number())
    reg.heartbeat_interval = std::chrono::milliseconds(hb->to_number<std::int64_t>());
  m_token = reg.token;
  return reg;
}

Result<std::optional<ClaimedJob>> CoordinatorApi::claim(std::chrono::seconds wait) {
  auto r = send("POST", "/api/v1/runners/claim?wait=" + std::to_string(wait.count()), {}, m_token,
                std::chrono::milliseconds(wait) + std::chrono::seconds(30));
  if (!r.ok()) return std::move(r).error();
  const auto* job = r->is_object() ? r->as_object().if_contains("job") : nullptr;
  if (!job || job->is_null()) return std::optional<ClaimedJob>{};
  const auto& o = job->as_object();
  ClaimedJob j;
  j.id = o.at("id").to_number<std::int64_t>();
  if (const auto* p = o.if_contains("pipeline"); p && p->is_number()) j.pipeline = p->to_number<std::int64_t>();
  j.kind = std::string(o.at("kind").as_string());
  j.commit = std::string(o.at("commit").as_string());
  j.target = std::string(o.at("target").as_string());
  j.attempt = static_cast<int>(o.at("attempt").to_number<std::int64_t>());
  if (const auto* d = o.if_contains("depends_on"); d && d->is_int64()) j.depends_on = d->as_int64();
  if (const auto* p = o.if_contains("payload"); p && p->is_object()) j.payload = p->as_object();
  return std::optional<ClaimedJob>(std::move(j));
}

Result<Heartbeat> CoordinatorApi::heartbeat(std::int64_t job, int attempt) {
  auto r = send("POST", "/api/v1/runners/heartbeat", json::serialize(json::object{{"job", job}, {"attempt", attempt}}), m_token);
  if (!r.ok()) return std::move(r).error();
  Heartbeat hb;
  if (const auto* c = r->as_object().if_contains("cancel_requested"); c && c->is_bool()) hb.cancel_requested = c->as_bool();
  return hb;
}

Status CoordinatorApi::deregister() {
  auto r = send("POST", "/api/v1/runners/deregister", {}, m_token);
  if (!r.ok()) return std::move(r).error();
  return {};
}

Status CoordinatorApi::post_build_records(std::int64_t job, int attempt, json::array records) {
  auto body = json::serialize(json::object{{"attempt", attempt}, {"records", std::move(records)}});
  auto r = send("POST", "/api/v1/jobs/" + std::to_string(job) + "/builds", body, m_token);
  if (!r.ok()) return std::move(r).error();
  return {};
}

Status CoordinatorApi::put_artifact(const std::string& sha256, const std::string& name, const std::string& kind,
                                    std::string_view bytes) {
  auto r = send("PUT", "/api/v1/artifacts/" + sha256 + "?name=" + name + "&kind=" + kind, bytes, m_token,
                std::chrono::milliseconds(300'000), "application/octet-stream");
  if (!r.ok()) return std::move(r).error();
  return {};
}

Status CoordinatorApi::append_log(std::int64_t job, int attempt, std::string_view text) {
  auto body = json::serialize(json::object{{"attempt", attempt}, {"text", text}});
  auto r = send("POST", "/api/v1/jobs/" + std::to_string(job) + "/log", body, m_token);
  if (!r.ok()) return std::move(r).error();
  return {};
}

Status CoordinatorApi::complete(std::int64_t job, int attempt, bool succeeded, const std::string& reason, bool retry) {
  json::object body{{"attempt", attempt}, {"status", succeeded ? "succeeded" : "failed"}};
  if (!succeeded) {
    body["reason"] = reason.empty() ? std::string("failed without a reason") : reason;
    body["retry"] = retry;
  }
  auto r = send("POST", "/api/v1/jobs/" + std::to_string(job) + "/complete", json::serialize(body), m_token);
  if (!r.ok()) return std::move(r).error();
  return {};
}

Status CoordinatorApi::put_kernels(json::array instances, json::array variants) {
  json::object body{{"instances", std::move(instances)}};
  if (!variants.empty()) body["variants"] = std::move(variants);
  auto r = send("PUT", "/api/v1/kernels", json::serialize(body), m_token);
  if (!r.ok()) return std::move(r).error();
  return {};
}

Status CoordinatorApi::post_results(std::int64_t job, int attempt, json::array results) {
  auto body = json::serialize(json::object{{"attempt", attempt}, {"results", std::move(results)}});
  auto r = send("POST", "/api/v1/jobs/" + std::to_string(job) + "/results", body, m_token);
  if (!r.ok()) return std::move(r).error();
  return {};
}

Result<std::string> CoordinatorApi::get_artifact(const std::string& sha256) {
  http::HeaderList headers;
  if (!m_token.empty()) headers.emplace_back("Authorization", "Bearer " + m_token);
  std::string path = "/api/v1/artifacts/" + sha256;
  auto r = m_client.fetch("GET", m_server + path, {}, headers, std::chrono::milliseconds(300'000));
  if (!r.ok()) return make_error(r.error().code, "GET " + path + ": " + r.error().message);
  if (r->status != 200)
    return make_error(errc_from_status(r->status), "GET " + path + " answered " + std::to_string(r->status) + ": " + r->body.substr(0, 300));
  if (crypto::sha256_hex(r->body) != sha256)
    return make_error(Errc::unavailable, "artifact " + sha256 + " arrived with other content (" + std::to_string(r->body.size()) + " bytes)");
  return std::move(r->body);
}

Result<json::value> CoordinatorApi::get(const std::string& path) { return send("GET", path, {}, m_token); }

}  // namespace kport::runner
