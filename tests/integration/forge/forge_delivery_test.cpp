// Delivery you can trust: a forge that is down then comes back, one that stays down
// (given up, the reason visible), one that refuses the token (the connection broken),
// answers that are garbage, huge or too slow, and a coordinator killed with SIGKILL
// while a delivery is on the wire.
#include <gtest/gtest.h>

#include "forge_fixture.h"

namespace kport::testing {
namespace {

using boost::json::object;

std::int64_t ms_between(const std::chrono::steady_clock::time_point& a,
                        const std::chrono::steady_clock::time_point& b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

TEST_F(ForgeTest, ForgeDownThenBackIsRetriedWithBackoffUntilDelivered) {
  ASSERT_EQ(connect("gitea", "status").status, 200);
  forge.fail_next(2, ForgeFault{503, "upstream down"});
  push(sha);
  auto got = wait_to("/statuses/", 3);
  ASSERT_EQ(got.size(), 3u);
  for (const auto& r : got) EXPECT_EQ(r.body, got[0].body);  // the same request, again
  auto items = wait_deliveries("kind=commit_status", [](const boost::json::array& a) {
    return a.size() == 1 && a[0].at("state") == "delivered";
  });
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].at("attempts").as_int64(), 3);
  EXPECT_EQ(items[0].at("last_status").as_int64(), 201);
}

TEST_F(ForgeTest, BackoffDoublesBetweenAttempts) {
  ASSERT_EQ(connect("gitea", "status").status, 200);
  forge.fail_next(3, ForgeFault{500, "oops"});
  push(sha);
  // When the forge received each attempt (not when this test saw it: under load the test's
  // polls can see two attempts at once).
  const auto seen = wait_to("/statuses/", 3);
  ASSERT_EQ(seen.size(), 3u);
  // Base 100 ms, doubled: the second wait is at least the base's double.
  EXPECT_GE(ms_between(seen[0].at, seen[1].at), 90);
  EXPECT_GE(ms_between(seen[1].at, seen[2].at), 190);
}

TEST_F(ForgeTest, ForgeThatStaysDownIsGivenUpWithTheReasonVisible) {
  ASSERT_EQ(connect("github", "status").status, 200);
  forge.fail_always(ForgeFault{502, R"({"message":"Bad Gateway"})"});
  push(sha);
  auto items = wait_deliveries("state=failed", [](const boost::json::array& a) { return a.size() == 1; });
  ASSERT_EQ(items.size(), 1u);
  const std::string reason(items[0].at("last_error").as_string());
  EXPECT_EQ(
      reason.rfind(
          "gave up after 3 attempts: POST " + forge.url("/repos/org/kernels/statuses/" + sha) + " answered 502", 0),
      0u)
      << reason;
  EXPECT_EQ(items[0].at("attempts").as_int64(), 3);
  EXPECT_EQ(items[0].at("last_status").as_int64(), 502);
  EXPECT_TRUE(items[0].at("finished_at").is_string());
  EXPECT_EQ(to("/statuses/").size(), 3u);
  const std::string m = metrics_with("kport_deliveries{state=\"failed\"} 1");
  EXPECT_NE(m.find("kport_deliveries{state=\"failed\"} 1"), std::string::npos) << m;
  EXPECT_NE(m.find("kport_delivery_attempts_total 3"), std::string::npos) << m;
  // GitHub's commit statuses: the documented headers.
  const auto r = to("/statuses/").at(0);
  EXPECT_EQ(r.header("Authorization"), "Bearer " + k_forge_token);
  EXPECT_EQ(r.header("Accept"), "application/vnd.github+json");
  EXPECT_EQ(r.json().at("state").as_string(), "pending");
  EXPECT_EQ(r.json().at("context").as_string(), "kport");
}

TEST_F(ForgeTest, RefusedTokenBreaksTheConnectionUntilItIsPutAgain) {
  ASSERT_EQ(connect("github", "check").status, 200);
  forge.fail_always(ForgeFault{401, R"({"message":"Bad credentials"})"});
  push(sha);
  boost::json::object conn;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < end) {
    conn = get("/api/v1/forges").body.at("items").at(0).as_object();
    if (conn.at("state") == "broken") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling an HTTP API: no event to wait on
  }
  ASSERT_EQ(conn.at("state").as_string(), "broken") << conn;
  const std::string why(conn.at("broken_reason").as_string());
  EXPECT_NE(why.find("refused the token"), std::string::npos) << why;
  EXPECT_NE(why.find("answered 401"), std::string::npos) << why;
  EXPECT_NE(why.find("PUT /api/v1/repositories/org/kernels/forge"), std::string::npos) << why;
  EXPECT_NE(metrics().find("kport_forge_connections_broken 1"), std::string::npos);
  // Broken: nothing more is sent, and the delivery waits instead of being given up.
  const std::size_t sent = forge.requests().size();
  EXPECT_EQ(sent, 1u);
  auto pending = get("/api/v1/deliveries?state=pending").body.at("items").as_array();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].at("last_status").as_int64(), 401);
  forge.heal();
  ASSERT_EQ(connect("github", "check").status, 200);
  auto again = wait_to("/check-runs", 2);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[1].body, again[0].body);
  auto items = wait_deliveries("state=delivered", [](const boost::json::array& a) { return a.size() == 1; });
  EXPECT_EQ(items.size(), 1u);
}

TEST_F(ForgeTest, GarbageHugeAndSlowAnswersAreRetriedAndNeverStopTheCoordinator) {
  ASSERT_EQ(connect("github", "check").status, 200);
  forge.fail_next(1, ForgeFault{201, std::string(4u << 20, 'x')});           // beyond the 1 MiB read
  forge.fail_next(1, ForgeFault{201, "", std::chrono::milliseconds(3000)});  // beyond the 1 s deadline
  forge.fail_next(1, ForgeFault{201, "\x01\xff<html>not json at all"});      // created, but no id to read
  push(sha);
  auto got = wait_to("/check-runs", 3);
  ASSERT_EQ(got.size(), 3u);
  ASSERT_EQ(get("/healthz").status, 200);
  auto items =
      wait_deliveries("", [](const boost::json::array& a) { return a.size() == 1 && a[0].at("state") == "delivered"; });
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].at("attempts").as_int64(), 3);
  EXPECT_NE(std::string(items[0].at("last_error").as_string()).find("no check run id"), std::string::npos) << items[0];
  // Without an id the next state creates a check run instead of updating an unknown one.
  const std::string builder = register_runner("builder", "build");
  take(builder);
  auto next = wait_to("/check-runs", 4);
  ASSERT_EQ(next.size(), 4u);
  EXPECT_EQ(next[3].method, "POST");
  EXPECT_EQ(next[3].json().at("status").as_string(), "in_progress");
  EXPECT_EQ(next[3].json().at("head_sha").as_string(), sha);
}

TEST_F(ForgeTest, KilledWhileDeliveringLosesNothingQueued) {
  ASSERT_EQ(connect("gitlab", "status", "42").status, 200);
  forge.fail_always(ForgeFault{201, "{}", std::chrono::milliseconds(4000)});
  push(sha);
  ASSERT_EQ(wait_to("/statuses/", 1).size(), 1u);
  proc->kill_hard();  // the call is on the wire, its delivery still pending
  forge.heal();
  start();
  auto items =
      wait_deliveries("", [](const boost::json::array& a) { return a.size() == 1 && a[0].at("state") == "delivered"; });
  ASSERT_EQ(items.size(), 1u) << proc->log();
  auto got = to("/statuses/");
  ASSERT_GE(got.size(), 2u);
  EXPECT_EQ(got.back().target, "/api/v4/projects/42/statuses/" + sha);
  EXPECT_EQ(got.back().body, got.front().body);
  EXPECT_EQ(got.back().json().at("state").as_string(), "pending");
}

TEST_F(ForgeTest, PushedPipelineIsReportedAfterAKill) {
  // The report starts with the pipeline, in the push's transaction: a coordinator killed
  // right after the push still reports it when it comes back.
  ASSERT_EQ(connect("gitea", "status").status, 200);
  forge.fail_always(ForgeFault{503, "down", std::chrono::milliseconds(0)});
  push(sha);
  proc->kill_hard();
  forge.heal();
  start();
  auto items = wait_deliveries("state=delivered", [](const boost::json::array& a) { return a.size() == 1; });
  ASSERT_EQ(items.size(), 1u) << proc->log();
  EXPECT_EQ(items[0].at("event").as_string(), "pipeline.queued");
}

}  // namespace
}  // namespace kport::testing
