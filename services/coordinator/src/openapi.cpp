// The OpenAPI 3.0 description of the coordinator, built once from the table of
// operations (openapi_operations.cpp) and the schemas (openapi_schemas.cpp), so the
// document and the routes are reviewed side by side. Here: what every operation
// shares (the 400, 401 with WWW-Authenticate, 403 and default answers), security,
// tags and the document's frame. Tests keep it true against a running coordinator:
// every served route is an operation and every operation is served
// (coordinator_api_test); every answer a seeded coordinator gives validates against
// its documented schema and status (tests/integration/openapi/); `redocly lint`
// reports no error.
#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <utility>

#include "context.h"
#include "openapi_operations.h"
#include "openapi_schemas.h"

namespace kport::coordinator {
namespace json = boost::json;
namespace {

using openapi::Answer;
using openapi::Auth;

Answer err(int status, const char* description) { return openapi::error_answer(status, description); }

// Operations grouped as the route files group them.
constexpr std::pair<const char*, const char*> k_tags[] = {
    {"probes", "Liveness, readiness, metrics and this document"},
    {"catalog", "Targets, kernels, GPU models, repositories and commits"},
    {"pipelines", "What kport was asked to validate: pipelines and their jobs"},
    {"runners", "The pull protocol: registration, claims, heartbeats and the writes into a held job"},
    {"results", "Results, build records, bring-up stages, verdicts and revalidations"},
    {"best", "Best-kernel answers, measure requests and the dispatch snapshot"},
    {"artifacts", "Content-addressed blobs"},
    {"dashboard", "One answer per dashboard page, and the live event stream"},
    {"hooks", "Push webhooks"},
    {"admin", "Credentials an admin manages"},
};

const char* tag_of(std::string_view method, std::string_view path) {
  auto starts = [&](std::string_view prefix) { return path.substr(0, prefix.size()) == prefix; };
  if (!starts("/api/v1/") || path == "/api/v1/openapi.json") return "probes";
  if (starts("/api/v1/dashboard/") || path == "/api/v1/events") return "dashboard";
  if (starts("/api/v1/hooks/")) return "hooks";
  if (starts("/api/v1/admin/") || path == "/api/v1/runners/{id}/token") return "admin";
  if (starts("/api/v1/artifacts/")) return "artifacts";
  if (starts("/api/v1/best") || starts("/api/v1/dispatch/")) return "best";
  if (path == "/api/v1/pipelines" || starts("/api/v1/pipelines/") || path == "/api/v1/queue") return "pipelines";
  if (starts("/api/v1/jobs")) return method == "get" || path.ends_with("/cancel") ? "pipelines" : "runners";
  if (starts("/api/v1/runners")) return "runners";
  if (starts("/api/v1/results") || starts("/api/v1/builds") || path.ends_with("/bringup") ||
      path.ends_with("/verdict") || starts("/api/v1/revalidations") || starts("/api/v1/bisections"))
    return "results";
  return "catalog";
}

json::array security_of(Auth auth) {
  auto scheme = [](const char* name) { return json::object{{name, json::array{}}}; };
  switch (auth) {
    case Auth::none: return {};
    case Auth::read: return {json::object{}, scheme("adminToken"), scheme("runnerToken")};
    case Auth::admin: return {scheme("adminToken")};
    case Auth::runner: return {scheme("runnerToken")};
    case Auth::admin_runner: return {scheme("adminToken"), scheme("runnerToken")};
    case Auth::registration: return {scheme("registrationToken")};
    case Auth::signature: return {scheme("githubSignature"), scheme("giteaSignature"), scheme("gitlabToken")};
  }
  return {};
}

// The same rule as one word, for tools that read the document (x-kport-auth).
const char* auth_name(Auth auth) {
  switch (auth) {
    case Auth::none: return "none";
    case Auth::read: return "read";
    case Auth::admin: return "admin";
    case Auth::runner: return "runner";
    case Auth::admin_runner: return "admin|runner";
    case Auth::registration: return "registration";
    case Auth::signature: return "signature";
  }
  return "none";
}

const char* unauthorized_text(Auth auth) {
  switch (auth) {
    case Auth::read: return "unauthorized: a token that is not valid, or none where reads need one (--no-open-reads)";
    case Auth::signature: return "unauthorized: the signature or token is missing or does not match the hook secret";
    case Auth::registration: return "unauthorized: no registration token";
    default: return "unauthorized: no token, or one that is not valid";
  }
}

json::object response_of(const Answer& a) {
  json::object r{{"description", a.description}};
  if (!a.content.empty()) r["content"] = a.content;
  return r;
}

json::object build() {
  json::object paths;
  for (const auto& op : openapi::operations()) {
    json::array params;
    const std::string path = op.path;
    for (std::size_t p = path.find('{'); p != std::string::npos; p = path.find('{', p + 1))
      params.push_back(openapi::path_parameter(path.substr(p + 1, path.find('}', p) - p - 1)));
    for (const auto& qp : op.query) params.push_back(qp);
    json::object responses;
    for (const auto& a : op.answers) responses[std::to_string(a.status)] = response_of(a);
    // The server answers 400 to a malformed request on any route (the handlers also to
    // a bad parameter or body), and every error carries the Error body.
    if (!responses.contains("400"))
      responses["400"] = response_of(err(400,
                                         "invalid_argument or bad_json: a malformed request, parameter or body; the "
                                         "message names it"));
    if (op.auth != Auth::none) {
      json::object r = response_of(err(401, unauthorized_text(op.auth)));
      r["headers"] =
          json::object{{"WWW-Authenticate", json::object{{"$ref", "#/components/headers/WWW-Authenticate"}}}};
      responses["401"] = std::move(r);
    }
    if ((op.auth == Auth::admin || op.auth == Auth::runner) && !responses.contains("403"))
      responses["403"] =
          response_of(err(403, op.auth == Auth::admin ? "forbidden: a runner token where the admin token is needed"
                                                      : "forbidden: the admin token where a runner token is needed"));
    if (op.auth == Auth::registration)
      responses["429"].as_object()["headers"] =
          json::object{{"Retry-After", json::object{{"description", "seconds until a registration is admitted again"},
                                                    {"schema", json::object{{"type", "integer"}}}}}};
    responses["default"] = response_of(err(0, "any other error (413 body too large, 500 internal, 503 overloaded)"));
    json::object operation{{"operationId", op.id},
                           {"summary", op.summary},
                           {"tags", json::array{tag_of(op.method, path)}},
                           {"security", security_of(op.auth)},
                           {"x-kport-auth", auth_name(op.auth)},
                           {"responses", std::move(responses)}};
    if (!params.empty()) operation["parameters"] = std::move(params);
    if (!op.request.empty())
      operation["requestBody"] = json::object{{"required", !op.request_optional}, {"content", op.request}};
    // Several methods share a path: add to its item instead of replacing it.
    auto& item = paths[op.path];
    if (!item.is_object()) item.emplace_object();
    item.as_object()[op.method] = std::move(operation);
  }
  json::object schemes{
      {"adminToken",
       {{"type", "http"},
        {"scheme", "bearer"},
        {"description", "the admin token (--admin-token, or the admin-token file beside the database)"}}},
      {"runnerToken",
       {{"type", "http"},
        {"scheme", "bearer"},
        {"description", "a runner's own token, answered once by POST /api/v1/runners/register"}}},
      {"registrationToken",
       {{"type", "http"},
        {"scheme", "bearer"},
        {"description",
         "the registration token (--registration-token; rotated by POST "
         "/api/v1/admin/registration-token)"}}},
      {"githubSignature",
       {{"type", "apiKey"},
        {"in", "header"},
        {"name", "X-Hub-Signature-256"},
        {"description",
         "sha256=HMAC-SHA256 of the body with the hook secret (GitHub, the "
         "post-receive hook)"}}},
      {"giteaSignature",
       {{"type", "apiKey"},
        {"in", "header"},
        {"name", "X-Gitea-Signature"},
        {"description", "HMAC-SHA256 of the body with the hook secret, hex"}}},
      {"gitlabToken",
       {{"type", "apiKey"}, {"in", "header"}, {"name", "X-Gitlab-Token"}, {"description", "the hook secret itself"}}}};
  json::object headers{
      {"WWW-Authenticate",
       {{"description", "Bearer realm=\"kport\", with error=\"invalid_token\" when a token was sent and refused"},
        {"schema", {{"type", "string"}}}}}};
  json::array tags;
  for (const auto& [name, text] : k_tags) tags.push_back(json::object{{"name", name}, {"description", text}});
  return json::object{
      {"openapi", "3.0.3"},
      {"info",
       {{"title", "kport coordinator API"},
        {"version", "1"},
        {"description",
         "Targets, kernels, pipelines, jobs, runners, results and best-kernel answers. "
         "Errors are {\"error\":{\"code\",\"message\"}}. Writes need a bearer token; reads "
         "need none unless the coordinator runs with --no-open-reads."}}},
      {"servers", json::array{json::object{{"url", "/"},
                                           {"description",
                                            "the coordinator that serves this document (over https when it was started "
                                            "with --tls-cert and --tls-key)"}}}},
      {"tags", std::move(tags)},
      {"paths", std::move(paths)},
      {"components",
       {{"schemas", openapi_schemas()}, {"securitySchemes", std::move(schemes)}, {"headers", std::move(headers)}}}};
}

}  // namespace

const std::string& openapi_document() {
  static const std::string doc = json::serialize(build());
  return doc;
}

}  // namespace kport::coordinator
