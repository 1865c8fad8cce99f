// Start, graceful stop, long-poll shutdown, connection limits and event streams.
#include <future>
#include <thread>

#include "kport/http/events.h"
#include "kport/http/stop_signal.h"
#include "raw_socket.h"
#include "test_server.h"

namespace kport::http {
namespace {

using namespace std::chrono_literals;
using test::RawSocket;

class LifecycleTest : public test::ServerFixture {};

TEST_F(LifecycleTest, PortInUseIsAnErrorNotACrash) {
  router->add_sync("GET", "/", [](const Request&) { return text_response(200, ""); });
  start();
  ServerOptions clash = options;
  clash.port = server->port();
  Server second(clash, router);
  auto st = second.start();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::unavailable);
  EXPECT_NE(st.error().message.find(std::to_string(server->port())), std::string::npos);
  EXPECT_EQ(server->start().error().code, Errc::conflict) << "a server starts once";
  options.host = "not-an-ip";
  EXPECT_EQ(Server(options, router).start().error().code, Errc::invalid_argument);
}

TEST_F(LifecycleTest, GracefulStopDrainsAnInFlightSlowRequest) {
  std::promise<void> entered;
  router->add("GET", "/slow", [&](Request&&, Reply reply) {
    entered.set_value();
    std::thread([reply = std::move(reply)] {
      std::this_thread::sleep_for(300ms);
      reply(text_response(200, "done"));
    }).detach();
  });
  start();
  auto pending = std::async(std::launch::async, [this] { return fetch("GET", url("/slow")); });
  entered.get_future().wait();
  EXPECT_EQ(server->in_flight(), 1u);
  auto t0 = std::chrono::steady_clock::now();
  server->stop(5s);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s) << "stop returns once drained";
  auto r = pending.get();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->body, "done");
  EXPECT_EQ(r->header("Connection"), "close");
  EXPECT_FALSE(fetch("GET", url("/slow"), {}, {}, 500ms).ok()) << "no longer accepting";
}

TEST_F(LifecycleTest, LongPollIsToldToAnswerEarly) {
  router->add("GET", "/claim", [](Request&& req, Reply reply) {
    // A long-poll waits for work or for the server to stop, whichever comes first.
    req.stop->on_stop([reply] { reply(error_response(503, "unavailable", "server stopping")); });
  });
  start();
  auto pending = std::async(std::launch::async, [this] { return fetch("GET", url("/claim")); });
  while (server->in_flight() == 0) std::this_thread::sleep_for(5ms);
  auto t0 = std::chrono::steady_clock::now();
  server->stop(10s);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  auto r = pending.get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 503);
}

TEST_F(LifecycleTest, DrainDeadlineCutsOffAHandlerThatNeverReplies) {
  Reply kept;
  router->add("GET", "/forever", [&](Request&&, Reply reply) { kept = std::move(reply); });
  start();
  auto pending = std::async(std::launch::async, [this] { return fetch("GET", url("/forever")); });
  while (server->in_flight() == 0) std::this_thread::sleep_for(5ms);
  auto t0 = std::chrono::steady_clock::now();
  server->stop(200ms);
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, 150ms);
  EXPECT_LT(took, 3s);
  EXPECT_FALSE(pending.get().ok());
  kept(text_response(200, "too late"));  // must be harmless
}

TEST_F(LifecycleTest, OverMaxConnectionsGets503) {
  options.max_connections = 1;
  router->add_sync("GET", "/", [](const Request&) { return text_response(200, "ok"); });
  start();
  RawSocket first(server->port());
  ASSERT_TRUE(first.connected());
  first.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_NE(first.read("ok").find("200"), std::string::npos);
  RawSocket second(server->port());
  std::string reply = second.read();
  EXPECT_EQ(reply.rfind("HTTP/1.1 503", 0), 0u) << reply;
  EXPECT_NE(server->metrics().render_prometheus().find("kport_http_connections_rejected_total 1"), std::string::npos);
}

TEST_F(LifecycleTest, EventStreamDeliversPublishedEvents) {
  auto hub = std::make_shared<EventHub>();
  router->add("GET", "/api/v1/events", [hub](Request&&, Reply reply) {
    Response r;
    r.events = hub->subscribe({"results"});
    r.body = "retry: 1000\n\n";
    reply(std::move(r));
  });
  start();
  RawSocket s(server->port());
  s.send("GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n");
  std::string head = s.read("retry: 1000\n\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Type: text/event-stream"), std::string::npos);
  EXPECT_NE(head.find("Cache-Control: no-cache"), std::string::npos);
  EXPECT_EQ(head.find("Content-Length"), std::string::npos);
  ASSERT_EQ(hub->subscriber_count(), 1u);
  hub->publish("jobs", "job", "ignored");
  hub->publish("results", "result", "{\"id\":7}", "7");
  std::string ev = s.read("\n\n");
  EXPECT_EQ(ev, "id: 7\nevent: result\ndata: {\"id\":7}\n\n");
  server->stop(1s);
  s.read();
  EXPECT_TRUE(s.peer_closed()) << "stop ends event streams at once";
}

TEST_F(LifecycleTest, EventStreamSendsHeartbeatsAndNoticesTheClientLeaving) {
  options.sse_heartbeat = 100ms;
  auto hub = std::make_shared<EventHub>();
  router->add("GET", "/events", [hub](Request&&, Reply reply) {
    Response r;
    r.events = hub->subscribe();
    reply(std::move(r));
  });
  start();
  {
    RawSocket s(server->port());
    s.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(s.read(": ping\n\n").find(": ping\n\n"), std::string::npos);
  }
  for (int i = 0; i < 100 && hub->subscriber_count() > 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(hub->subscriber_count(), 0u);
}

TEST(StopSignal, RunsCallbacksOnceAndImmediatelyWhenLate) {
  StopSignal sig;
  int ran = 0;
  auto id = sig.on_stop([&] { ++ran; });
  auto removed = sig.on_stop([&] { ran += 100; });
  sig.remove(removed);
  EXPECT_NE(id, 0u);
  sig.trigger();
  sig.trigger();
  EXPECT_EQ(ran, 1);
  EXPECT_TRUE(sig.stopping());
  EXPECT_EQ(sig.on_stop([&] { ++ran; }), 0u);
  EXPECT_EQ(ran, 2);
}

}  // namespace
}  // namespace kport::http
