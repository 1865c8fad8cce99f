#include "kport/http/client.h"

#include <thread>

#include "raw_socket.h"
#include "test_server.h"

namespace kport::http {
namespace {

using namespace std::chrono_literals;

class ClientTest : public test::ServerFixture {
 protected:
  void SetUp() override {
    router->add_sync("PUT", "/api/v1/artifacts/{sha}", [](const Request& r) {
      Response out = text_response(201, std::string(r.param("sha")) + ":" + r.body);
      out.set_header("X-Echo", std::string(r.header("X-Runner")));
      return out;
    });
    router->add_sync("POST", "/api/v1/results", [](const Request& r) { return text_response(201, r.body); });
    router->add_sync("GET", "/who", [](const Request& r) { return text_response(200, r.remote); });
    router->add("GET", "/hang", [this](Request&&, Reply reply) { hung = std::move(reply); });
  }
  Reply hung;
};

TEST_F(ClientTest, RoundTripsMethodBodyAndHeaders) {
  start();
  auto r = client.fetch("PUT", url("/api/v1/artifacts/abc"), "payload", {{"X-Runner", "r1"}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->body, "abc:payload");
  EXPECT_EQ(r->header("x-echo"), "r1");
}

TEST_F(ClientTest, ReusesTheConnectionAndReconnectsAfterTheServerClosedIt) {
  options.idle_timeout = 150ms;
  start();
  auto a = get("/who");
  auto b = get("/who");
  EXPECT_EQ(a.body, b.body) << "keep-alive reuse";
  std::this_thread::sleep_for(400ms);  // the server drops the idle connection
  auto c = client.fetch("GET", url("/who"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->status, 200);
  EXPECT_NE(c->body, a.body) << "a fresh connection has a new client port";
  std::this_thread::sleep_for(400ms);
  auto post = client.fetch("POST", url("/api/v1/results"), "late");
  ASSERT_TRUE(post.ok()) << "a dead kept connection is replaced before sending: " << post.error().message;
  EXPECT_EQ(post->status, 201);
  EXPECT_EQ(post->body, "late");
}

TEST_F(ClientTest, TimesOutOnASilentServer) {
  start();
  auto t0 = std::chrono::steady_clock::now();
  auto r = client.fetch("GET", url("/hang"), {}, {}, 200ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::request_timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  auto again = client.fetch("GET", url("/who"));
  ASSERT_TRUE(again.ok()) << "the client recovers on a new connection";
  hung(text_response(200, ""));
}

TEST_F(ClientTest, RefusedConnectionIsUnavailable) {
  start();
  std::uint16_t port = server->port();
  server->stop(0ms);
  auto r = fetch("GET", "http://127.0.0.1:" + std::to_string(port) + "/who", {}, {}, 1s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::unavailable);
  EXPECT_EQ(fetch("GET", "ftp://x/").error().code, Errc::invalid_argument);
}

TEST_F(ClientTest, EnforcesItsBodyLimit) {
  router->add_sync("GET", "/big", [](const Request&) { return text_response(200, std::string(4096, 'x')); });
  start();
  Client small(ClientOptions{std::chrono::milliseconds{2000}, 1024, "kport-test"});
  auto r = small.fetch("GET", url("/big"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::payload_too_large);
}

}  // namespace
}  // namespace kport::http
