// Durability and shutdown against a real process: kill -9 during uploads loses no
// acknowledged result, leases resume or expire after a restart, SIGTERM drains, and a
// database from a newer kport is refused.
#include <atomic>
#include <mutex>
#include <thread>

#include "coordinator_fixture.h"

namespace kport::testing {
namespace json = boost::json;

namespace {

json::object result_row(const std::string& instance) {
  return json::object{{"target", "sm_90a"},         {"family", "gemm"}, {"variant", "simt"},
                      {"instance", instance},       {"dtype", "bf16"},  {"shape", "m=256,n=256,k=256"},
                      {"gpu_model", "NVIDIA H200"}, {"arch", "9.0"},    {"status", "passed"},
                      {"median_us", 10.0},          {"stddev_us", 0.1}, {"samples", 10}};
}

}  // namespace

TEST_F(CoordinatorTest, KillNineDuringUploadsLosesNoAcknowledgedResult) {
  proc->terminate();
  lease_seconds = 4;
  start();
  add_target();
  auto builder = register_runner("builder", "build");
  auto gpu = register_runner("gpu", "gpu");
  start_pipeline(commit_sha());
  auto build = claim(builder);
  ASSERT_TRUE(build.is_object());
  ASSERT_EQ(post("/api/v1/jobs/" + std::to_string(build.at("id").as_int64()) + "/complete",
                 json::object{{"attempt", 1}}, builder)
                .status,
            200);
  auto check = claim(gpu);
  ASSERT_TRUE(check.is_object());
  const std::string cid = std::to_string(check.at("id").as_int64());

  // Several uploaders write distinct results as fast as they can; each remembers what
  // the coordinator acknowledged with a 200.
  std::mutex mu;
  std::vector<std::pair<std::int64_t, std::string>> acked;
  std::atomic<bool> stop{false};
  std::vector<std::thread> uploaders;
  for (int t = 0; t < 4; ++t) {
    uploaders.emplace_back([&, t] {
      http::Client c;
      for (int k = 0; !stop; ++k) {
        json::array batch;
        std::vector<std::string> names;
        for (int i = 0; i < 5; ++i) {
          names.push_back("gemm.simt.t" + std::to_string(t) + "_" + std::to_string(k) + "_" + std::to_string(i));
          batch.push_back(result_row(names.back()));
        }
        json::value body = json::object{{"attempt", 1}, {"results", batch}};
        http::HeaderList h{{"Authorization", "Bearer " + gpu}};
        auto r = c.fetch("POST", url("/api/v1/jobs/" + cid + "/results"), json::serialize(body), h,
                         std::chrono::milliseconds(5000));
        if (!r.ok()) break;  // the coordinator is gone
        if (r->status != 200) continue;
        auto ids = json::parse(r->body).at("ids").as_array();
        std::lock_guard lock(mu);
        for (std::size_t i = 0; i < ids.size(); ++i) acked.emplace_back(ids[i].as_int64(), names[i]);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  proc->kill_hard();
  stop = true;
  for (auto& th : uploaders) th.join();
  ASSERT_GT(acked.size(), 20u) << "too few uploads were acknowledged before the kill to mean anything";

  start();
  http::Client fresh;
  client = std::move(fresh);
  // The lease survived the restart: the runner resumes by heartbeating its attempt.
  auto hb = post("/api/v1/runners/heartbeat", json::object{{"job", check.at("id")}, {"attempt", 1}}, gpu);
  EXPECT_EQ(hb.status, 200) << hb.raw;
  std::size_t missing = 0;
  for (const auto& [id, name] : acked) {
    auto r = get("/api/v1/results/" + std::to_string(id));
    if (r.status != 200 || r.body.at("instance").as_string() != name) ++missing;
  }
  EXPECT_EQ(missing, 0u) << "of " << acked.size() << " acknowledged results";

  // With no more heartbeats the lease expires and the job comes back, attempt counted.
  // (Until then a claim on the same token answers the lease it still holds.)
  for (int i = 0; i < 150 && get("/api/v1/jobs/" + cid).body.at("status").as_string() == "running"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto again = claim(gpu, 15);
  ASSERT_TRUE(again.is_object()) << proc->log();
  EXPECT_EQ(std::to_string(again.at("id").as_int64()), cid);
  EXPECT_EQ(again.at("attempt").as_int64(), 2);
}

TEST_F(CoordinatorTest, SigtermAnswersLongPollsAndExitsCleanly) {
  auto r = register_runner("r", "build");
  std::atomic<int> status{0};
  std::thread waiter([&] {
    http::Client c;
    auto reply = call(c, "POST", url("/api/v1/runners/claim?wait=25"), nullptr, r);
    status = reply.status;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(proc->terminate(), 0) << proc->log();
  waiter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(8));
  EXPECT_EQ(status.load(), 200);
}

TEST_F(CoordinatorTest, DatabaseFromANewerKportIsRefused) {
  proc->terminate();
  std::string out;
  int rc = run_to_exit("/usr/bin/sqlite3",
                       {(dir.path() / "kport.db").string(),
                        "INSERT INTO schema_migrations(version, name, applied_at) VALUES (9999, 'future', 0);"},
                       out);
  if (rc == 127) GTEST_SKIP() << "sqlite3 command-line tool not installed (deploy/install-deps.sh installs it)";
  ASSERT_EQ(rc, 0) << out;
  rc = run_to_exit(KPORT_COORDINATOR_BIN, args(), out);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("newer"), std::string::npos) << out;
}

TEST_F(CoordinatorTest, RestartKeepsDataAndDoesNotReapplyMigrations) {
  add_target();
  EXPECT_EQ(proc->terminate(), 0);
  start();
  auto t = get("/api/v1/targets");
  ASSERT_EQ(t.body.at("items").as_array().size(), 1u);
  EXPECT_EQ(t.body.at("items").as_array()[0].at("name").as_string(), "sm_90a");
}

TEST(CoordinatorCli, HelpAndBadFlagsExplainThemselves) {
  std::string out;
  EXPECT_EQ(run_to_exit(KPORT_COORDINATOR_BIN, {"--help"}, out), 0);
  EXPECT_NE(out.find("--listen"), std::string::npos);
  EXPECT_NE(out.find("KPORT_ADMIN_TOKEN"), std::string::npos);
  EXPECT_EQ(run_to_exit(KPORT_COORDINATOR_BIN, {"--listen", "nonsense"}, out), 2);
  EXPECT_NE(out.find("HOST:PORT"), std::string::npos) << out;
  EXPECT_EQ(run_to_exit(KPORT_COORDINATOR_BIN, {"--bogus"}, out), 2);
  EXPECT_NE(out.find("unknown option --bogus"), std::string::npos) << out;
}

}  // namespace kport::testing
