// The runner protocol end to end against a real coordinator: register, long-poll claim,
// lease, heartbeat, idempotent uploads, completion spawning checks, lease expiry.
#include <thread>

#include "kport/api/result_metrics.h"
#include "kport/common/crypto.h"

#include "coordinator_fixture.h"

namespace kport::testing {
namespace json = boost::json;

TEST_F(CoordinatorTest, BuildThenCheckThroughTheWholeProtocol) {
  add_target();
  json::array kernels;
  for (auto [name, features] :
       {std::pair{"gemm.wgmma_tma.128x256", json::array{"wgmma", "tma"}},
        std::pair{"gemm.mma_sync.128x128", json::array{"mma_sync"}}, std::pair{"gemm.simt.64x64", json::array{}}}) {
    std::string n = name;
    kernels.push_back(json::object{{"name", n},
                                   {"family", "gemm"},
                                   {"variant", n.substr(5, n.rfind('.') - 5)},
                                   {"features", features},
                                   {"dtypes", json::array{"bf16"}}});
  }
  ASSERT_EQ(put("/api/v1/kernels", json::object{{"instances", kernels}}, k_admin).status, 200);
  auto builder = register_runner("builder-1", "build");
  auto gpu = register_runner("gpu-1", "gpu");
  auto pipeline = start_pipeline(commit_sha());
  ASSERT_EQ(pipeline.at("jobs").as_array().size(), 1u);

  // The GPU runner has nothing to do until the build succeeds.
  EXPECT_TRUE(claim(gpu).is_null());
  auto job = claim(builder);
  ASSERT_TRUE(job.is_object());
  EXPECT_EQ(job.at("kind").as_string(), "build");
  EXPECT_EQ(job.at("attempt").as_int64(), 1);
  auto id = std::to_string(job.at("id").as_int64());

  auto hb = post("/api/v1/runners/heartbeat", json::object{{"job", job.at("id")}, {"attempt", 1}}, builder);
  EXPECT_EQ(hb.status, 200) << hb.raw;
  EXPECT_FALSE(hb.body.at("cancel_requested").as_bool());

  json::object record{
      {"target", "sm_90a"},     {"family", "gemm"},           {"variant", "wgmma_tma"},
      {"status", "ok"},         {"registers", 168},           {"spill_stores_bytes", 0},
      {"spill_loads_bytes", 0}, {"shared_mem_bytes", 196608}, {"instruction_audit", json::object{{"wgmma", 24}}}};
  auto b1 =
      post("/api/v1/jobs/" + id + "/builds", json::object{{"attempt", 1}, {"records", json::array{record}}}, builder);
  ASSERT_EQ(b1.status, 200) << b1.raw;
  auto b2 =
      post("/api/v1/jobs/" + id + "/builds", json::object{{"attempt", 1}, {"records", json::array{record}}}, builder);
  EXPECT_EQ(b2.body.at("duplicates").as_int64(), 1);
  EXPECT_EQ(b2.body.at("ids"), b1.body.at("ids"));
  EXPECT_EQ(post("/api/v1/jobs/" + id + "/log", json::object{{"attempt", 1}, {"text", "nvcc ok\n"}}, builder).status,
            200);

  auto done = post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}, {"status", "succeeded"}}, builder);
  ASSERT_EQ(done.status, 200) << done.raw;
  EXPECT_EQ(done.body.at("spawned").as_array().size(), 1u);
  auto again = post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}, {"status", "succeeded"}}, builder);
  EXPECT_TRUE(again.body.at("duplicate").as_bool());

  auto check = claim(gpu);
  ASSERT_TRUE(check.is_object());
  EXPECT_EQ(check.at("kind").as_string(), "check");
  EXPECT_EQ(check.at("arch").as_string(), "9.0");
  auto cid = std::to_string(check.at("id").as_int64());
  // Asked before any result exists (and cached): the same query must change once results land.
  auto before = get("/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=m=4096,n=4096,k=4096");
  ASSERT_EQ(before.status, 200) << before.raw;
  EXPECT_NE(before.body.at("kind").as_string(), "measured");
  // Every metric of the result table goes up with the first result and comes back under
  // its group; the others answer null for it.
  json::object measured = gemm_upload("gemm.wgmma_tma.128x256", "m=4096,n=4096,k=4096", 210.0);
  for (const api::ResultMetric& m : api::k_result_metrics)
    measured[m.name] = m.integer ? json::value(static_cast<std::int64_t>(m.min) + 42) : json::value(m.min + 42.5);
  json::array results{measured, gemm_upload("gemm.mma_sync.128x128", "m=4096,n=4096,k=4096", 300.0),
                      gemm_upload("gemm.simt.64x64", "m=4096,n=4096,k=4096", 2000.0, "failed")};
  auto up1 = post("/api/v1/jobs/" + cid + "/results", json::object{{"attempt", 1}, {"results", results}}, gpu);
  ASSERT_EQ(up1.status, 200) << up1.raw;
  EXPECT_EQ(up1.body.at("stored").as_int64(), 3);
  auto up2 = post("/api/v1/jobs/" + cid + "/results", json::object{{"attempt", 1}, {"results", results}}, gpu);
  EXPECT_EQ(up2.body.at("duplicates").as_int64(), 3);
  EXPECT_EQ(post("/api/v1/jobs/" + cid + "/complete", json::object{{"attempt", 1}}, gpu).status, 200);

  auto listed = get("/api/v1/results?commit=" + commit_sha() + "&status=passed");
  EXPECT_EQ(listed.body.at("items").as_array().size(), 2u);
  std::size_t timing_metrics = 0;
  for (const api::ResultMetric& m : api::k_result_metrics) timing_metrics += m.group == api::MetricGroup::timing;
  for (const auto& item : listed.body.at("items").as_array()) {
    const bool with_metrics = item.at("instance").as_string() == "gemm.wgmma_tma.128x256";
    EXPECT_EQ(item.at("timing").as_object().size(), 10u + timing_metrics) << "the core figures and the table's";
    for (const api::ResultMetric& m : api::k_result_metrics) {
      const auto& got = item.at(m.group == api::MetricGroup::timing ? "timing" : "numerics").at(m.name);
      if (!with_metrics)
        EXPECT_TRUE(got.is_null()) << m.name;
      else
        EXPECT_EQ(got, measured.at(m.name)) << m.name;
    }
  }
  auto p = get("/api/v1/pipelines/" + std::to_string(pipeline.at("id").as_int64()));
  EXPECT_EQ(p.body.at("status").as_string(), "succeeded") << p.raw;
  auto commit = get("/api/v1/commits/" + commit_sha());
  ASSERT_EQ(commit.status, 200) << commit.raw;
  EXPECT_EQ(commit.body.at("results").at("passed").as_int64(), 2);

  auto best = get("/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=m=4096,n=4096,k=4096");
  ASSERT_EQ(best.status, 200) << best.raw;
  EXPECT_EQ(best.body.at("kind").as_string(), "measured");
  EXPECT_EQ(best.body.at("best").as_string(), "gemm.wgmma_tma.128x256");
  EXPECT_TRUE(best.body.at("exact_shape").as_bool());
  EXPECT_EQ(best.body.at("ranking").as_array().size(), 2u);  // the failed one is never a candidate
  auto near = get("/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=m=4000,n=4096,k=4096");
  EXPECT_FALSE(near.body.at("exact_shape").as_bool());
  EXPECT_EQ(near.body.at("matched_shape").as_string(), "k=4096,m=4096,n=4096");
  ASSERT_EQ(put("/api/v1/targets/sm_100a",
                json::object{{"arch", "10.0"}, {"features", json::array{"mma_sync", "tma", "tcgen05"}}}, k_admin)
                    .status /
                100,
            2);
  auto prov =
      get("/api/v1/best?gpu=NVIDIA%20B200&op=gemm&dtype=bf16&shape=m=4096,n=4096,k=4096&arch=10.0&target=sm_100a");
  ASSERT_EQ(prov.status, 200) << prov.raw;
  EXPECT_EQ(prov.body.at("kind").as_string(), "provisional");
  EXPECT_EQ(prov.body.at("best").as_string(), "gemm.mma_sync.128x128") << "sm_100a has no wgmma";
  EXPECT_TRUE(prov.body.at("provisional").as_bool());
  EXPECT_NE(prov.body.at("reason").as_string().find("NVIDIA B200"), json::string::npos);
  auto unknown = get("/api/v1/best?gpu=Mystery&op=gemm&dtype=bf16&shape=m=1,n=1,k=1");
  EXPECT_EQ(unknown.status, 404);
  auto bringup = get("/api/v1/targets/sm_90a/bringup");
  ASSERT_EQ(bringup.status, 200) << bringup.raw;
  EXPECT_GE(bringup.body.at("progress").at("builds").as_int64(), 1);
}

TEST_F(CoordinatorTest, LongPollClaimWakesWhenAJobArrives) {
  add_target();
  auto builder = register_runner("builder-1", "build");
  json::value job;
  std::thread waiter([&] {
    http::Client c;
    auto r = call(c, "POST", url("/api/v1/runners/claim?wait=20"), nullptr, builder);
    job = r.body.at("job");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto start = std::chrono::steady_clock::now();
  start_pipeline(commit_sha());
  waiter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(job.is_object());
  EXPECT_EQ(job.at("kind").as_string(), "build");
}

TEST_F(CoordinatorTest, StaleAttemptsAndForeignLeasesAreRefused) {
  add_target();
  auto a = register_runner("a", "build");
  auto b = register_runner("b", "build");
  start_pipeline(commit_sha());
  auto job = claim(a);
  ASSERT_TRUE(job.is_object());
  auto id = std::to_string(job.at("id").as_int64());
  auto foreign = post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}}, b);
  EXPECT_EQ(foreign.status, 403) << foreign.raw;
  auto stale = post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 2}}, a);
  EXPECT_EQ(stale.status, 409) << stale.raw;
  auto noreason = post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}, {"status", "failed"}}, a);
  EXPECT_EQ(noreason.status, 400);
  auto fail = post("/api/v1/jobs/" + id + "/complete",
                   json::object{{"attempt", 1}, {"status", "failed"}, {"reason", "nvcc crashed"}}, a);
  EXPECT_EQ(fail.body.at("status").as_string(), "failed");
  auto j = get("/api/v1/jobs/" + id);
  EXPECT_EQ(j.body.at("failure_reason").as_string(), "nvcc crashed");
}

TEST_F(CoordinatorTest, ExpiredLeaseRequeuesWithAttemptCountedAndLastAttemptFails) {
  proc->terminate();
  lease_seconds = 1;
  max_attempts = 2;
  start();
  add_target();
  auto r = register_runner("r", "build");
  start_pipeline(commit_sha());
  auto first = claim(r);
  ASSERT_TRUE(first.is_object());
  auto id = std::to_string(first.at("id").as_int64());
  // A claim on the same token while the lease lives answers that lease again.
  auto held = claim(r);
  ASSERT_TRUE(held.is_object());
  EXPECT_EQ(held.at("attempt").as_int64(), 1);
  // No heartbeat: the reaper returns it to the queue with the attempt counted, and after
  // its backoff another runner takes it.
  auto r2 = register_runner("r2", "build");
  auto second = claim(r2, 10);
  ASSERT_TRUE(second.is_object()) << proc->log();
  EXPECT_EQ(second.at("id"), first.at("id"));
  EXPECT_EQ(second.at("attempt").as_int64(), 2);
  // The late result of attempt 1 is refused.
  EXPECT_EQ(post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}}, r).status, 409);
  EXPECT_EQ(post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 2}}, r).status, 403)
      << "the lease is r2's";
  for (int i = 0; i < 50; ++i) {
    auto j = get("/api/v1/jobs/" + id);
    if (j.body.at("status").as_string() == "failed") {
      EXPECT_NE(j.body.at("failure_reason").as_string().find("lease expired"), json::string::npos) << j.raw;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL() << "the job never failed after its last lease expired";
}

TEST_F(CoordinatorTest, CancelReachesARunningJobThroughHeartbeat) {
  add_target();
  auto r = register_runner("r", "build");
  start_pipeline(commit_sha());
  auto job = claim(r);
  ASSERT_TRUE(job.is_object());
  auto id = std::to_string(job.at("id").as_int64());
  EXPECT_EQ(call(client, "POST", url("/api/v1/jobs/" + id + "/cancel"), nullptr, k_admin).status, 200);
  auto hb = post("/api/v1/runners/heartbeat", json::object{{"job", job.at("id")}, {"attempt", 1}}, r);
  EXPECT_TRUE(hb.body.at("cancel_requested").as_bool()) << hb.raw;
}

TEST_F(CoordinatorTest, ArtifactsAreVerifiedByContent) {
  const std::string r = k_admin;  // an operator's upload; a runner's is into its job (LeaseTest)
  std::string data(100000, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31);
  std::string sha = crypto::sha256_hex(data);
  std::string other = crypto::sha256_hex("something else");
  auto bad = call_raw(client, "PUT", url("/api/v1/artifacts/" + other + "?name=h&kind=harness"), data, r,
                      "application/octet-stream");
  EXPECT_EQ(bad.status, 422) << bad.raw;
  EXPECT_EQ(get("/api/v1/artifacts/" + other).status, 404);
  auto anon = call_raw(client, "PUT", url("/api/v1/artifacts/" + sha), data, "", "application/octet-stream");
  EXPECT_EQ(anon.status, 401);
  auto ok = call_raw(client, "PUT", url("/api/v1/artifacts/" + sha + "?name=kport-harness-sm_90a&kind=harness"), data,
                     r, "application/octet-stream");
  ASSERT_EQ(ok.status, 201) << ok.raw;
  EXPECT_EQ(ok.body.at("size").as_int64(), 100000);
  auto back = call_raw(client, "GET", url("/api/v1/artifacts/" + sha), "");
  EXPECT_EQ(back.status, 200);
  EXPECT_EQ(back.raw, data);
  auto meta = get("/api/v1/artifacts/" + sha + "?meta=1");
  EXPECT_EQ(meta.body.at("name").as_string(), "kport-harness-sm_90a");
  EXPECT_EQ(get("/api/v1/artifacts/xyz").status, 400);
}

}  // namespace kport::testing
