// Bad input never crashes the server and always gets a JSON error with the right status.
#include <stdexcept>

#include "raw_socket.h"
#include "test_server.h"

namespace kport::http {
namespace {

using test::RawSocket;

class ServerErrorTest : public test::ServerFixture {
 protected:
  void SetUp() override {
    router->add_sync("GET", "/api/v1/commits/{sha}",
                     [](const Request& r) { return text_response(200, std::string(r.param("sha"))); });
    router->add_sync("POST", "/api/v1/results",
                     [](const Request& r) { return text_response(200, std::to_string(r.body.size())); });
    router->add_sync("GET", "/api/v1/results",
                     [](const Request& r) { return text_response(200, std::string(r.query_or("q"))); });
    router->add_sync("GET", "/boom", [](const Request&) -> Response { throw std::runtime_error("broken invariant"); });
    router->add("GET", "/async-boom", [](Request&&, Reply) { throw 42; });
  }
};

TEST_F(ServerErrorTest, UnknownPathIs404Json) {
  start();
  auto r = get("/api/v2/nothing");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_code(r), "not_found");
  EXPECT_NE(r.body.find("/api/v2/nothing"), std::string::npos) << r.body;
}

TEST_F(ServerErrorTest, WrongMethodIs405WithAllow) {
  start();
  auto r = client.fetch("DELETE", url("/api/v1/results"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(error_code(*r), "method_not_allowed");
  std::string allow(r->header("Allow"));
  EXPECT_NE(allow.find("GET"), std::string::npos) << allow;
  EXPECT_NE(allow.find("POST"), std::string::npos) << allow;
}

TEST_F(ServerErrorTest, BodyOverLimitIs413BeforeTheBodyIsSent) {
  options.body_limit = 1024;
  start();
  auto ok = client.fetch("POST", url("/api/v1/results"), std::string(1024, 'x'));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->body, "1024");
  // Announce a large body but send none: the answer must come from the header alone.
  RawSocket s(server->port());
  s.send("POST /api/v1/results HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n");
  std::string reply = s.read("\"}}");
  EXPECT_EQ(reply.rfind("HTTP/1.1 413", 0), 0u) << reply;
  EXPECT_NE(reply.find("payload_too_large"), std::string::npos);
  EXPECT_NE(reply.find("Connection: close"), std::string::npos);
}

TEST_F(ServerErrorTest, ChunkedBodyOverLimitIs413) {
  options.body_limit = 16;
  start();
  RawSocket s(server->port());
  s.send(
      "POST /api/v1/results HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "20\r\n0123456789abcdef0123456789abcdef\r\n0\r\n\r\n");
  std::string reply = s.read();
  EXPECT_EQ(reply.rfind("HTTP/1.1 413", 0), 0u) << reply;
}

TEST_F(ServerErrorTest, MalformedRequestIs400AndCloses) {
  start();
  RawSocket s(server->port());
  s.send("GET /api/v1/results HTTP/1.1\r\nHost x-no-colon\r\n\r\n");
  std::string reply = s.read();
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
  EXPECT_NE(reply.find("invalid_argument"), std::string::npos);
  EXPECT_TRUE(s.peer_closed());
  RawSocket junk(server->port());
  junk.send("\x16\x03\x01 this is not http\r\n\r\n");
  EXPECT_EQ(junk.read().rfind("HTTP/1.1 400", 0), 0u);
}

TEST_F(ServerErrorTest, OversizedHeadersAre431) {
  options.header_limit = 1024;
  start();
  RawSocket s(server->port());
  s.send("GET /api/v1/results HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4000, 'a') + "\r\n\r\n");
  EXPECT_EQ(s.read().rfind("HTTP/1.1 431", 0), 0u);
}

TEST_F(ServerErrorTest, HandlerExceptionsBecomeJson500) {
  start();
  auto r = get("/boom");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(error_code(r), "internal");
  EXPECT_EQ(r.body.find("broken invariant"), std::string::npos) << "internals stay in the log";
  auto a = get("/async-boom");
  EXPECT_EQ(a.status, 500);
  EXPECT_EQ(get("/api/v1/commits/abc").status, 200) << "the server keeps serving";
}

TEST_F(ServerErrorTest, NulOrBadUtf8InParametersIs400) {
  start();
  EXPECT_EQ(get("/api/v1/commits/ab%00cd").status, 400);
  auto r = get("/api/v1/commits/%ff");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_code(r), "invalid_argument");
  EXPECT_EQ(get("/api/v1/results?q=%00").status, 400);
  EXPECT_EQ(get("/api/v1/results?q=%C3%28").status, 400);
  EXPECT_EQ(get("/api/v1/results?q=%").status, 400);
  auto ok = get("/api/v1/results?q=%C3%A9t%C3%A9");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "\xC3\xA9t\xC3\xA9");
}

TEST_F(ServerErrorTest, SlowClientGets408AndIsClosed) {
  options.read_timeout = std::chrono::milliseconds{200};
  start();
  RawSocket s(server->port());
  s.send("GET /api/v1/results HTTP/1.1\r\nHost: x\r\n");  // headers never finish
  auto t0 = std::chrono::steady_clock::now();
  std::string reply = s.read();
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(reply.rfind("HTTP/1.1 408", 0), 0u) << reply;
  EXPECT_TRUE(s.peer_closed());
  EXPECT_GE(waited, std::chrono::milliseconds{150});
  EXPECT_LT(waited, std::chrono::seconds{3});
}

TEST_F(ServerErrorTest, SlowBodyGets408) {
  options.read_timeout = std::chrono::milliseconds{200};
  start();
  RawSocket s(server->port());
  s.send("POST /api/v1/results HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345");
  std::string reply = s.read();
  EXPECT_EQ(reply.rfind("HTTP/1.1 408", 0), 0u) << reply;
  EXPECT_TRUE(s.peer_closed());
}

TEST_F(ServerErrorTest, IdleKeepAliveConnectionIsClosedQuietly) {
  options.idle_timeout = std::chrono::milliseconds{200};
  start();
  RawSocket s(server->port());
  s.send("GET /api/v1/results HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string all = s.read();
  EXPECT_EQ(test::count_responses(all), 1) << "idle close sends no 408: " << all;
  EXPECT_TRUE(s.peer_closed());
}

}  // namespace
}  // namespace kport::http
