// The request path: routing, parameters, handler styles, keep-alive, headers, metrics.
#include <atomic>
#include <thread>

#include <boost/json.hpp>

#include "raw_socket.h"
#include "test_server.h"

namespace kport::http {
namespace {

namespace json = boost::json;
using test::RawSocket;

class ServerTest : public test::ServerFixture {};

TEST_F(ServerTest, RoutesWithPathAndQueryParameters) {
  router->add_sync("GET", "/api/v1/targets/{target}/bringup", [](const Request& r) {
    return json_ok(json::object{
        {"target", r.param("target")}, {"limit", r.query_or("limit", "none")}, {"path", r.path}, {"route", r.route}});
  });
  start();
  auto r = get("/api/v1/targets/sm_90a/bringup?limit=5&x=a%20b");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.header("Server"), "kport");
  auto v = r.json();
  ASSERT_TRUE(v.ok()) << r.body;
  EXPECT_EQ(v->at("target"), "sm_90a");
  EXPECT_EQ(v->at("limit"), "5");
  EXPECT_EQ(v->at("path"), "/api/v1/targets/sm_90a/bringup");
  EXPECT_EQ(v->at("route"), "/api/v1/targets/{target}/bringup");
}

TEST_F(ServerTest, PostBodyAndHeadersReachTheHandler) {
  router->add_sync("POST", "/echo", [](const Request& r) {
    Response out = text_response(201, r.body + "|" + r.media_type() + "|" + std::string(r.header("x-token")));
    out.set_header("Content-Security-Policy", "default-src 'self'");
    return out;
  });
  start();
  auto r = client.fetch("POST", url("/echo"), "{\"a\":1}",
                        {{"Content-Type", "Application/JSON; charset=UTF-8"}, {"X-Token", "t0k"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->body, "{\"a\":1}|application/json|t0k");
  EXPECT_EQ(r->header("Content-Security-Policy"), "default-src 'self'");
}

TEST_F(ServerTest, ExpectContinueGetsAnInterimResponse) {
  router->add_sync("POST", "/upload", [](const Request& r) { return text_response(200, "got " + r.body); });
  start();
  RawSocket s(server->port());
  s.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(s.read("\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  s.send("hello");
  std::string reply = s.read("got hello");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
}

TEST_F(ServerTest, AsyncReplyFromAnotherThreadAfterADelay) {
  std::vector<std::thread> workers;
  std::mutex mu;
  router->add("GET", "/api/v1/claim", [&](Request&&, Reply reply) {
    std::lock_guard lock(mu);
    workers.emplace_back([reply = std::move(reply)] {
      std::this_thread::sleep_for(std::chrono::milliseconds{150});
      reply(json_ok(json::object{{"job", 7}}));
    });
  });
  start();
  auto t0 = std::chrono::steady_clock::now();
  auto r = get("/api/v1/claim");
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"job":7})");
  EXPECT_GE(waited, std::chrono::milliseconds{140});
  std::lock_guard lock(mu);
  for (auto& w : workers) w.join();
}

TEST_F(ServerTest, SecondReplyIsIgnored) {
  router->add("GET", "/twice", [](Request&&, Reply reply) {
    reply(text_response(200, "first"));
    reply(text_response(500, "second"));
  });
  start();
  auto a = get("/twice");
  auto b = get("/twice");
  EXPECT_EQ(a.body, "first");
  EXPECT_EQ(b.body, "first") << "the connection must stay in sync after a double reply";
}

TEST_F(ServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  std::atomic<int> hits{0};
  router->add_sync("GET", "/n", [&](const Request& r) {
    ++hits;
    return text_response(200, r.remote);
  });
  start();
  std::string first_remote;
  for (int i = 0; i < 5; ++i) {
    auto r = get("/n");
    ASSERT_EQ(r.status, 200);
    if (i == 0) first_remote = r.body;
    EXPECT_EQ(r.body, first_remote) << "same client port means the same connection";
  }
  EXPECT_EQ(hits.load(), 5);
  // Pipelined requests on a raw socket are answered in order.
  RawSocket s(server->port());
  ASSERT_TRUE(s.connected());
  s.send(
      "GET /n HTTP/1.1\r\nHost: x\r\n\r\nGET /n HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /n HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string all = s.read();
  EXPECT_EQ(test::count_responses(all), 3) << all;
  EXPECT_TRUE(s.peer_closed());
  EXPECT_NE(all.find("Connection: close"), std::string::npos);
}

TEST_F(ServerTest, HeadAnswersWithoutBody) {
  router->add_sync("GET", "/doc", [](const Request&) { return text_response(200, "0123456789"); });
  start();
  RawSocket s(server->port());
  s.send("HEAD /doc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string all = s.read();
  EXPECT_NE(all.find("Content-Length: 10\r\n"), std::string::npos) << all;
  EXPECT_EQ(all.find("0123456789"), std::string::npos) << all;
}

TEST_F(ServerTest, MetricsCountByRoutePatternNotRawPath) {
  router->add_sync("GET", "/api/v1/commits/{sha}", [](const Request&) { return text_response(200, ""); });
  start();
  for (const char* sha : {"/api/v1/commits/aaa", "/api/v1/commits/bbb", "/api/v1/commits/ccc"}) get(sha);
  get("/nowhere");
  std::string text = server->metrics().render_prometheus();
  EXPECT_NE(text.find(R"(kport_http_requests_total{route="/api/v1/commits/{sha}",method="GET",code="2xx"} 3)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(kport_http_requests_total{route="unmatched",method="any",code="4xx"} 1)"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("aaa"), std::string::npos) << "raw paths must never become labels";
  EXPECT_NE(text.find("kport_http_connections_open 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace kport::http
