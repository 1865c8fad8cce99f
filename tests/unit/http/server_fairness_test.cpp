// Per-address limits, the reserve and the first-request deadline (issue 14, item 5).
#include <memory>
#include <vector>

#include "raw_socket.h"
#include "test_server.h"

namespace kport::http {
namespace {
using test::RawSocket;

class FairnessTest : public test::ServerFixture {
 protected:
  void routes() {
    router->add_sync("GET", "/", [](const Request&) { return text_response(200, "ok"); });
    router->add_sync("GET", "/healthz", [](const Request&) { return text_response(200, "live"); });
  }
};

TEST_F(FairnessTest, OverThePerAddressLimitOnlyPrivilegedRequestsAreServed) {
  options.max_connections_per_address = 2;
  options.reserved_connections = 8;
  routes();
  start();
  RawSocket a(server->port()), b(server->port());
  a.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  b.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_NE(a.read("ok").find("200"), std::string::npos);
  ASSERT_NE(b.read("ok").find("200"), std::string::npos);

  RawSocket anonymous(server->port());
  anonymous.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string refused = anonymous.read();
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_TRUE(anonymous.peer_closed());
  RawSocket probe(server->port());
  probe.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(probe.read("live").find("200"), std::string::npos);
  RawSocket runner(server->port());
  runner.send("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n");
  EXPECT_NE(runner.read("ok").find("200"), std::string::npos);
}

TEST_F(FairnessTest, AnAuthorizationHeaderTheCallbackRefusesEarnsNoReserveSlot) {
  options.max_connections_per_address = 1;
  options.reserved_connections = 8;
  options.authorized = [](std::string_view authorization) { return authorization == "Bearer good"; };
  routes();
  start();
  RawSocket ordinary(server->port());
  ordinary.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_NE(ordinary.read("ok").find("200"), std::string::npos);
  RawSocket bogus(server->port());
  bogus.send("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bogus\r\n\r\n");
  std::string refused = bogus.read();
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_TRUE(bogus.peer_closed());
  RawSocket good(server->port());
  good.send("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\n\r\n");
  EXPECT_NE(good.read("ok").find("200"), std::string::npos);
}

TEST_F(FairnessTest, AFullReserveEvictsItsOldestSilentConnection) {
  options.max_connections_per_address = 1;
  options.reserved_connections = 2;
  routes();
  start();
  RawSocket ordinary(server->port());
  ASSERT_TRUE(ordinary.connected());
  std::vector<std::unique_ptr<RawSocket>> silent;
  for (int i = 0; i < 4; ++i) silent.push_back(std::make_unique<RawSocket>(server->port()));
  RawSocket probe(server->port());
  probe.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(probe.read("live").find("200"), std::string::npos);
  silent.front()->set_timeout(std::chrono::milliseconds(2000));
  EXPECT_EQ(silent.front()->read(), "");
  EXPECT_TRUE(silent.front()->peer_closed()) << "the oldest silent reserve connection was not evicted";
  EXPECT_EQ(server->metrics().render_prometheus().find("kport_http_connections_evicted_total 0\n"), std::string::npos);
}

TEST_F(FairnessTest, ASilentConnectionIsClosedAtTheFirstRequestDeadline) {
  options.first_request_timeout = std::chrono::milliseconds(100);
  routes();
  start();
  RawSocket s(server->port());
  s.set_timeout(std::chrono::milliseconds(3000));
  EXPECT_EQ(s.read(), "");
  EXPECT_TRUE(s.peer_closed());
}

}  // namespace
}  // namespace kport::http
