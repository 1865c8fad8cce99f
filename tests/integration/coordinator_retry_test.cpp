// Retries and claims against a real coordinator: a runner token holds one lease however
// many claims it parks, failed attempts back off, permanent failures end the job at once.
#include <atomic>
#include <thread>

#include "coordinator_fixture.h"

namespace kport::testing {
namespace json = boost::json;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

json::object failed(int attempt, const std::string& reason, json::value retryable) {
  json::object o{{"attempt", attempt}, {"status", "failed"}, {"reason", reason}};
  if (!retryable.is_null()) o["retryable"] = retryable;
  return o;
}

std::int64_t ms_since(steady_clock::time_point t) {
  return std::chrono::duration_cast<milliseconds>(steady_clock::now() - t).count();
}

}  // namespace

// Issue 14, item 10: 500 parked long-polls on one runner token were handed the same job
// three times; each counted as "abandoned", and the job failed without ever running.
TEST_F(CoordinatorTest, ManyParkedClaimsOnOneTokenNeverBurnAttempts) {
  add_target();
  auto token = register_runner("greedy", "build");
  constexpr int k_claims = 500;
  std::vector<json::value> answers(k_claims);
  std::atomic<int> transport_errors{0};
  std::vector<std::thread> threads;
  threads.reserve(k_claims);
  for (int i = 0; i < k_claims; ++i) {
    threads.emplace_back([&, i] {
      http::Client c(http::ClientOptions{milliseconds(60'000)});
      auto r = c.fetch("POST", url("/api/v1/runners/claim?wait=20"), {}, {{"Authorization", "Bearer " + token}});
      if (!r.ok() || r->status != 200) {
        ++transport_errors;
        return;
      }
      answers[static_cast<std::size_t>(i)] = json::parse(r->body).at("job");
    });
  }
  // Every claim parks before there is work, then one job arrives for all of them.
  for (int i = 0; i < 200 && get("/api/v1/queue").body.at("claims_waiting").as_int64() < k_claims; ++i)
    std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(get("/api/v1/queue").body.at("claims_waiting").as_int64(), k_claims);
  start_pipeline(commit_sha());
  for (auto& t : threads) t.join();
  EXPECT_EQ(transport_errors.load(), 0) << proc->log();

  std::optional<std::int64_t> job_id;
  int with_job = 0;
  for (const auto& a : answers) {
    if (!a.is_object()) continue;
    ++with_job;
    if (!job_id) job_id = a.at("id").as_int64();
    EXPECT_EQ(a.at("id").as_int64(), *job_id) << "one token holds one job";
    EXPECT_EQ(a.at("attempt").as_int64(), 1) << "a duplicate claim gets the same lease, never a new attempt";
  }
  ASSERT_TRUE(job_id) << "no claim got the job";
  EXPECT_GE(with_job, 1);
  const auto id = std::to_string(*job_id);
  auto job = get("/api/v1/jobs/" + id);
  EXPECT_EQ(job.body.at("status").as_string(), "running") << job.raw;
  EXPECT_EQ(job.body.at("attempt").as_int64(), 1) << job.raw;
  // The job then runs to the end on its one attempt.
  auto done = post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}}, token);
  EXPECT_EQ(done.status, 200) << done.raw;
  EXPECT_EQ(done.body.at("status").as_string(), "succeeded") << done.raw;
}

// Issue 14, item 9: a failing clone burned all three attempts in 15 ms, so a transient
// git outage failed the job for good.
TEST_F(CoordinatorTest, RetriesBackOffInsteadOfBurningAttempts) {
  proc->terminate();
  retry_base_ms = 400;
  start();
  add_target();
  auto a = register_runner("a", "build");
  auto b = register_runner("b", "build");
  start_pipeline(commit_sha());
  auto first = claim(a);
  ASSERT_TRUE(first.is_object());
  const auto id = std::to_string(first.at("id").as_int64());
  const std::string clone = "clone of kernels failed: could not resolve host";

  auto t0 = steady_clock::now();
  auto r1 = post("/api/v1/jobs/" + id + "/complete", failed(1, clone, true), a);
  ASSERT_EQ(r1.status, 200) << r1.raw;
  EXPECT_EQ(r1.body.at("status").as_string(), "queued");
  const auto wait1 = r1.body.at("retry_in_ms").as_int64();
  EXPECT_GE(wait1, 200);
  EXPECT_LE(wait1, 400);
  EXPECT_TRUE(claim(a).is_null()) << "the runner that failed it does not re-take it right away";
  EXPECT_TRUE(claim(b).is_null()) << "no runner retries before the backoff";
  EXPECT_FALSE(get("/api/v1/jobs/" + id).body.at("not_before").is_null());

  // A parked claim is woken when the backoff ends, not only when the queue changes.
  auto second = claim(b, 10);
  ASSERT_TRUE(second.is_object()) << proc->log();
  EXPECT_GE(ms_since(t0), wait1 - 5);
  EXPECT_LT(ms_since(t0), 3'000);
  EXPECT_EQ(second.at("attempt").as_int64(), 2);

  auto t1 = steady_clock::now();
  auto r2 = post("/api/v1/jobs/" + id + "/complete", failed(2, clone, true), b);
  ASSERT_EQ(r2.status, 200) << r2.raw;
  const auto wait2 = r2.body.at("retry_in_ms").as_int64();
  EXPECT_GE(wait2, 400) << "the delay doubles per attempt";
  EXPECT_LE(wait2, 800);
  auto third = claim(a, 10);
  ASSERT_TRUE(third.is_object()) << proc->log();
  EXPECT_GE(ms_since(t1), wait2 - 5);
  EXPECT_EQ(third.at("attempt").as_int64(), 3);
  auto r3 = post("/api/v1/jobs/" + id + "/complete", failed(3, clone, true), a);
  EXPECT_EQ(r3.body.at("status").as_string(), "failed") << r3.raw;
  EXPECT_GE(ms_since(t0), 600) << "three attempts took at least the two backoffs";
  auto job = get("/api/v1/jobs/" + id);
  EXPECT_EQ(job.body.at("failure_reason").as_string(), clone + " (attempt 3 of 3)") << job.raw;
}

TEST_F(CoordinatorTest, PermanentFailuresFailAtOnceWithTheirReason) {
  add_target();
  auto a = register_runner("a", "build");
  start_pipeline(commit_sha(1));
  start_pipeline(commit_sha(2));
  auto job = claim(a);
  ASSERT_TRUE(job.is_object());
  const auto id = std::to_string(job.at("id").as_int64());
  auto bad = post(
      "/api/v1/jobs/" + id + "/complete",
      json::object{{"attempt", 1}, {"status", "failed"}, {"reason", "x"}, {"retryable", true}, {"retry", false}}, a);
  EXPECT_EQ(bad.status, 400) << bad.raw;
  EXPECT_NE(bad.body.at("error").at("message").as_string().find("retryable"), json::string::npos) << bad.raw;
  auto typed = post("/api/v1/jobs/" + id + "/complete",
                    json::object{{"attempt", 1}, {"status", "failed"}, {"reason", "x"}, {"retryable", "no"}}, a);
  EXPECT_EQ(typed.status, 400) << typed.raw;

  const std::string reason = "repository kernels not found at /tmp/kernels.git";
  auto r = post("/api/v1/jobs/" + id + "/complete", failed(1, reason, false), a);
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body.at("status").as_string(), "failed");
  auto j = get("/api/v1/jobs/" + id);
  EXPECT_EQ(j.body.at("attempt").as_int64(), 1);
  EXPECT_EQ(j.body.at("failure_reason").as_string(), reason);
  // The runner moves on to the next job at once: a permanent failure sets no backoff.
  auto next = claim(a);
  ASSERT_TRUE(next.is_object());
  EXPECT_NE(next.at("id").as_int64(), job.at("id").as_int64());
}

}  // namespace kport::testing
