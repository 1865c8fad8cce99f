#include "kport/runner/coordinator_api.h"

#include <thread>

#include "kport/common/crypto.h"
#include "kport/common/json_fields.h"
#include "kport/common/log.h"
#include "kport/runner/answers.h"

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

namespace {

http::ClientOptions client_options(std::string ca_file) {
  http::ClientOptions o;
  o.ca_file = std::move(ca_file);
  return o;
}

}  // namespace

CoordinatorApi::CoordinatorApi(std::string server_url, std::string token, std::string ca_file)
    : m_server(std::move(server_url)), m_token(std::move(token)), m_client(client_options(std::move(ca_file))) {
  while (!m_server.empty() && m_server.back() == '/') m_server.pop_back();
}

Result<std::string> CoordinatorApi::send(std::string_view method, const std::string& path, std::string_view body,
                                         const std::string& token, std::chrono::milliseconds timeout,
                                         std::string_view content_type) {
  http::HeaderList headers;
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  if (!body.empty()) headers.emplace_back("Content-Type", std::string(content_type));
  auto r = m_client.fetch(method, m_server + path, body, headers, timeout);
  if (!r.ok()) return make_error(r.error().code, std::string(method) + " " + path + ": " + r.error().message);
  if (r->status >= 400) {
    std::string message = r->body.substr(0, 300);
    boost::system::error_code ec;
    auto doc = json::parse(r->body, ec);
    if (!ec && doc.is_object())
      if (const auto* e = json_fields::obj(doc.as_object(), "error"))
        if (auto m = json_fields::str(*e, "message"); !m.empty()) message = m;
    return make_error(errc_from_status(r->status),
                      std::string(method) + " " + path + " answered " + std::to_string(r->status) + ": " + message);
  }
  // A redirect or an informational status is not the coordinator's answer (a proxy's login page, a captive portal).
  if (r->status < 200 || r->status >= 300)
    return make_error(Errc::unavailable, std::string(method) + " " + path + " answered " + std::to_string(r->status) +
                                             ", which the coordinator never sends; is a proxy in the way?");
  return std::move(r->body);
}

namespace {
// An answer that did not validate, named by its request: "POST /api/v1/runners/claim?wait=30: claim answer: ...".
Error at(std::string_view method, const std::string& path, Error e) {
  e.message = std::string(method) + " " + path + ": " + e.message;
  return e;
}
}  // namespace

Result<Registration> CoordinatorApi::register_runner(const std::string& registration_token,
                                                     const api::RunnerRegistration& who) {
  const std::string path = "/api/v1/runners/register";
  auto r = send("POST", path, json::serialize(api::to_json(who)), registration_token);
  if (!r.ok()) return std::move(r).error();
  auto reg = parse_registration(*r);
  if (!reg.ok()) return at("POST", path, std::move(reg).error());
  m_token = reg->token;
  return reg;
}

Result<std::optional<ClaimedJob>> CoordinatorApi::claim(std::chrono::seconds wait, std::optional<Lease>* unreadable) {
  if (unreadable) unreadable->reset();
  const std::string path = "/api/v1/runners/claim?wait=" + std::to_string(wait.count());
  auto r = send("POST", path, {}, m_token, std::chrono::milliseconds(wait) + std::chrono::seconds(30));
  if (!r.ok()) return std::move(r).error();
  auto job = parse_claim(*r, unreadable);
  if (!job.ok()) return at("POST", path, std::move(job).error());
  return job;
}

Result<Heartbeat> CoordinatorApi::heartbeat(std::int64_t job, int attempt) {
  const std::string path = "/api/v1/runners/heartbeat";
  auto r = send("POST", path, json::serialize(api::to_json(api::HeartbeatRequest{job, attempt})), m_token);
  if (!r.ok()) return std::move(r).error();
  auto hb = parse_heartbeat(*r);
  if (!hb.ok()) return at("POST", path, std::move(hb).error());
  return hb;
}

Status CoordinatorApi::ack(std::string_view method, const std::string& path, std::string_view body,
                           std::chrono::milliseconds timeout, std::string_view content_type) {
  auto r = send(method, path, body, m_token, timeout, content_type);
  if (!r.ok()) return std::move(r).error();
  if (auto st = parse_ack(*r, "the"); !st.ok()) return at(method, path, std::move(st).error());
  return {};
}

Status CoordinatorApi::ack_upload(const std::string& path, std::string_view body) {
  for (int tries = 1;; ++tries) {
    auto st = ack("POST", path, body);
    const bool unanswered =
        !st.ok() && (st.error().code == Errc::unavailable || st.error().code == Errc::request_timeout);
    if (!unanswered || tries == 3) return st;
    log::warn("the upload was not answered; sending it again",
              {{"path", path}, {"try", tries}, {"error", st.error().message}});
    std::this_thread::sleep_for(std::chrono::milliseconds(250 * tries));
  }
}

Status CoordinatorApi::deregister() { return ack("POST", "/api/v1/runners/deregister", {}); }

Status CoordinatorApi::post_build_records(std::int64_t job, int attempt,
                                          const std::vector<api::BuildRecordUpload>& records) {
  auto body = json::serialize(api::to_json(api::BuildRecordBatch{attempt, records}));
  return ack_upload("/api/v1/jobs/" + std::to_string(job) + "/builds", body);
}

Status CoordinatorApi::put_artifact(std::int64_t job, int attempt, const std::string& sha256, const std::string& name,
                                    const std::string& kind, std::string_view bytes) {
  return ack("PUT",
             "/api/v1/artifacts/" + sha256 + "?job=" + std::to_string(job) + "&attempt=" + std::to_string(attempt) +
                 "&name=" + name + "&kind=" + kind,
             bytes, std::chrono::milliseconds(300'000), "application/octet-stream");
}

Status CoordinatorApi::append_log(std::int64_t job, int attempt, std::string_view text) {
  auto body = json::serialize(api::to_json(api::JobLogAppend{attempt, std::string(text)}));
  return ack("POST", "/api/v1/jobs/" + std::to_string(job) + "/log", body);
}

Status CoordinatorApi::complete(std::int64_t job, int attempt, bool succeeded, const std::string& reason, bool retry) {
  api::JobCompletion c{attempt, succeeded, {}, false};
  if (!succeeded) {
    c.reason = reason.empty() ? std::string("failed without a reason") : reason;
    c.retry = retry;
  }
  return ack("POST", "/api/v1/jobs/" + std::to_string(job) + "/complete", json::serialize(api::to_json(c)));
}

Status CoordinatorApi::put_kernels(const api::KernelCatalogUpload& catalog) {
  return ack("PUT", "/api/v1/kernels", json::serialize(api::to_json(catalog)));
}

Status CoordinatorApi::post_results(std::int64_t job, int attempt, std::vector<api::ResultUpload> results) {
  auto body = json::serialize(api::to_json(api::ResultBatch{attempt, std::move(results)}));
  return ack_upload("/api/v1/jobs/" + std::to_string(job) + "/results", body);
}

Result<std::string> CoordinatorApi::get_artifact(const std::string& sha256) {
  http::HeaderList headers;
  if (!m_token.empty()) headers.emplace_back("Authorization", "Bearer " + m_token);
  std::string path = "/api/v1/artifacts/" + sha256;
  auto r = m_client.fetch("GET", m_server + path, {}, headers, std::chrono::milliseconds(300'000));
  if (!r.ok()) return make_error(r.error().code, "GET " + path + ": " + r.error().message);
  if (r->status != 200)
    return make_error(errc_from_status(r->status),
                      "GET " + path + " answered " + std::to_string(r->status) + ": " + r->body.substr(0, 300));
  if (crypto::sha256_hex(r->body) != sha256)
    return make_error(Errc::unavailable, "artifact " + sha256 + " arrived with other content (" +
                                             std::to_string(r->body.size()) + " bytes)");
  return std::move(r->body);
}

Result<std::string> CoordinatorApi::get_text(const std::string& path) { return send("GET", path, {}, m_token); }

Result<json::value> CoordinatorApi::get(const std::string& path) {
  auto r = send("GET", path, {}, m_token);
  if (!r.ok()) return std::move(r).error();
  auto doc = parse_document(*r, "the");
  if (!doc.ok()) return at("GET", path, std::move(doc).error());
  return doc;
}

}  // namespace kport::runner
