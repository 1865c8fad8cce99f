// The coordinator's REST surface against a real process: routes, errors, auth.
#include <boost/asio.hpp>

#include "coordinator_fixture.h"

namespace kport::testing {
namespace json = boost::json;

namespace {
void expect_error(const JsonReply& r, int status, std::string_view code) {
  EXPECT_EQ(r.status, status) << r.raw;
  ASSERT_TRUE(r.body.is_object()) << r.raw;
  EXPECT_EQ(r.body.at("error").at("code").as_string(), code) << r.raw;
  EXPECT_FALSE(r.body.at("error").at("message").as_string().empty());
}
}  // namespace

// The document and the router cannot drift apart: every route the coordinator serves
// (each has its counters in /metrics from the start) is in the OpenAPI document with its
// method, and every documented operation is served. Static files (the dashboard) are the
// one prefix route and are not an API.
TEST_F(CoordinatorTest, EveryServedRouteIsDocumentedAndEveryDocumentedOperationServed) {
  auto m = call_raw(client, "GET", url("/metrics"), "");
  ASSERT_EQ(m.status, 200);
  std::set<std::string> served;
  for (std::size_t at = m.raw.find("route=\""); at != std::string::npos; at = m.raw.find("route=\"", at + 1)) {
    const auto r0 = at + 7, r1 = m.raw.find('"', r0);
    const auto m0 = m.raw.find("method=\"", r1), m1 = m.raw.find('"', m0 + 8);
    if (r1 == std::string::npos || m0 == std::string::npos || m0 > m.raw.find('}', r1)) continue;
    std::string route = m.raw.substr(r0, r1 - r0), method = m.raw.substr(m0 + 8, m1 - m0 - 8);
    // The dashboard's files (`/` and the `/static/` prefix) are not API operations.
    if (route == "unmatched" || route == "/" || route.back() == '/' || route.find("...}") != std::string::npos ||
        method == "HEAD")
      continue;
    for (auto& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    served.insert(method + " " + route);
  }
  ASSERT_GT(served.size(), 40u) << m.raw.substr(0, 2000);
  auto doc = get("/api/v1/openapi.json");
  ASSERT_EQ(doc.status, 200);
  std::set<std::string> documented;
  for (const auto& [path, ops] : doc.body.at("paths").as_object())
    for (const auto& [method, op] : ops.as_object())
      if (method != "parameters") documented.insert(std::string(method) + " " + std::string(path));
  for (const auto& r : served) EXPECT_TRUE(documented.count(r)) << r << " is served but not documented";
  for (const auto& d : documented) EXPECT_TRUE(served.count(d)) << d << " is documented but not served";
}

TEST_F(CoordinatorTest, HealthOpenApiAndMetricsAnswer) {
  auto h = get("/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body.at("status").as_string(), "ok");
  auto doc = get("/api/v1/openapi.json");
  ASSERT_EQ(doc.status, 200);
  EXPECT_EQ(doc.body.at("openapi").as_string(), "3.0.3");
  EXPECT_TRUE(doc.body.at("paths").as_object().contains("/api/v1/best"));
  EXPECT_TRUE(doc.body.at("paths").as_object().contains("/api/v1/runners/claim"));
  // Probes are documented, readiness with its 503; lease-bound writes with their 403/409.
  const auto& paths = doc.body.at("paths").as_object();
  ASSERT_TRUE(paths.contains("/readyz")) << doc.raw;
  EXPECT_TRUE(paths.at("/readyz").at("get").at("responses").as_object().contains("503"));
  // A probe needs no credentials, and says so (security: []).
  ASSERT_TRUE(paths.at("/healthz").at("get").as_object().contains("security"));
  EXPECT_TRUE(paths.at("/healthz").at("get").at("security").as_array().empty());
  for (const auto& [method, path] :
       std::vector<std::pair<std::string, std::string>>{{"post", "/api/v1/jobs/{id}/builds"},
                                                        {"post", "/api/v1/jobs/{id}/results"},
                                                        {"post", "/api/v1/jobs/{id}/log"},
                                                        {"post", "/api/v1/jobs/{id}/complete"},
                                                        {"post", "/api/v1/runners/heartbeat"},
                                                        {"put", "/api/v1/artifacts/{sha256}"}}) {
    const auto& responses = paths.at(path).at(method).at("responses").as_object();
    EXPECT_TRUE(responses.contains("403")) << method << " " << path;
    EXPECT_TRUE(responses.contains("409")) << method << " " << path;
  }
  EXPECT_NE(json::serialize(paths.at("/api/v1/artifacts/{sha256}").at("put").at("parameters")).find("\"attempt\""),
            std::string::npos);
  EXPECT_TRUE(paths.at("/api/v1/hooks/push").at("post").at("responses").as_object().contains("409"));
  get("/api/v1/targets");
  auto m = call_raw(client, "GET", url("/metrics"), "");
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.raw.find("kport_http_requests_total{route=\"/api/v1/targets\""), std::string::npos) << m.raw;
  EXPECT_NE(m.raw.find("kport_queue_depth"), std::string::npos);
  EXPECT_NE(m.raw.find("kport_runners_online 0"), std::string::npos);
}

TEST_F(CoordinatorTest, UnknownRouteWrongMethodAndOversizedBodyAreJsonErrors) {
  expect_error(get("/api/v1/nope"), 404, "not_found");
  expect_error(call(client, "DELETE", url("/api/v1/targets"), nullptr, k_admin), 405, "method_not_allowed");
  std::string big(2u << 20, 'x');
  auto r = call_raw(client, "POST", url("/api/v1/pipelines"), big, k_admin);
  expect_error(r, 413, "payload_too_large");
  // The service is still answering.
  EXPECT_EQ(get("/healthz").status, 200);
}

TEST_F(CoordinatorTest, MalformedJsonWrongTypesAndMissingFieldsAre400) {
  add_target();
  http::Client c;
  expect_error(call_raw(c, "POST", url("/api/v1/pipelines"), "{\"commit\": ", k_admin), 400, "bad_json");
  expect_error(call_raw(c, "POST", url("/api/v1/pipelines"), "[1,2]", k_admin), 400, "bad_json");
  auto wrong = post("/api/v1/pipelines", json::object{{"commit", 42}}, k_admin);
  expect_error(wrong, 400, "invalid_argument");
  EXPECT_NE(wrong.body.at("error").at("message").as_string().find("'commit'"), json::string::npos);
  expect_error(post("/api/v1/pipelines", json::object{{"targets", json::array{"sm_90a"}}}, k_admin), 400,
               "invalid_argument");
  expect_error(
      post("/api/v1/pipelines", json::object{{"commit", commit_sha()}, {"targets", json::array{"sm_999z"}}}, k_admin),
      404, "not_found");
  expect_error(get("/api/v1/results?limit=0"), 400, "invalid_argument");
  expect_error(get("/api/v1/results?limit=abc"), 400, "invalid_argument");
  expect_error(get("/api/v1/jobs/-3"), 400, "invalid_argument");
  expect_error(get("/api/v1/commits/not-a-sha"), 400, "invalid_argument");
  expect_error(get("/api/v1/best?gpu=x&op=gemm&dtype=bf16&shape=m%3Dx"), 400, "invalid_argument");
  expect_error(get("/api/v1/best?gpu=x&op=conv&dtype=bf16&shape=m%3D1"), 400, "invalid_argument");
  // Nothing was queued by any of these.
  auto pipelines = get("/api/v1/pipelines");
  EXPECT_EQ(pipelines.body.at("items").as_array().size(), 0u);
}

TEST_F(CoordinatorTest, WritesNeedTheRightToken) {
  auto body = json::object{{"arch", "9.0"}};
  expect_error(put("/api/v1/targets/sm_90a", body, ""), 401, "unauthorized");
  expect_error(put("/api/v1/targets/sm_90a", body, "wrong-token"), 401, "unauthorized");
  auto runner = register_runner("b1", "build");
  expect_error(put("/api/v1/targets/sm_90a", body, runner), 403, "forbidden");
  expect_error(call(client, "POST", url("/api/v1/runners/claim"), nullptr, k_admin), 403, "forbidden");
  expect_error(post("/api/v1/runners/register", json::object{{"name", "x"}, {"role", "build"}}, "bad"), 403,
               "forbidden");
  expect_error(post("/api/v1/runners/register", json::object{{"name", "x"}, {"role", "build"}}, ""), 401,
               "unauthorized");
  expect_error(post("/api/v1/runners/register", json::object{{"name", "x"}, {"role", "chef"}}, k_registration), 400,
               "invalid_argument");
  EXPECT_EQ(put("/api/v1/targets/sm_90a", body, k_admin).status, 201);
  EXPECT_EQ(put("/api/v1/targets/sm_90a", body, k_admin).status, 200);
  expect_error(put("/api/v1/targets/../../etc", body, k_admin), 404, "not_found");
  expect_error(put("/api/v1/targets/gfx90a", body, k_admin), 400, "invalid_argument");
}

TEST_F(CoordinatorTest, SlowClientIsCutOffAndServiceGoesOn) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket sock(io);
  sock.connect({boost::asio::ip::make_address("127.0.0.1"), proc->port()});
  std::string partial = "GET /healthz HTTP/1.1\r\nHost: x\r\n";  // headers never finish
  boost::asio::write(sock, boost::asio::buffer(partial));
  std::array<char, 512> buf{};
  boost::system::error_code ec;
  auto start = std::chrono::steady_clock::now();
  std::size_t n = sock.read_some(boost::asio::buffer(buf), ec);  // the server answers 408 or closes
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_LT(waited, std::chrono::seconds(10));
  if (!ec) {
    EXPECT_NE(std::string(buf.data(), n).find("408"), std::string::npos);
  }
  EXPECT_EQ(get("/healthz").status, 200);
}

TEST_F(CoordinatorTest, ClosedReadsNeedAToken) {
  proc->terminate();
  extra_args = {"--no-open-reads"};
  start();
  expect_error(get("/api/v1/targets"), 401, "unauthorized");
  EXPECT_EQ(get("/api/v1/targets", k_admin).status, 200);
}

}  // namespace kport::testing
