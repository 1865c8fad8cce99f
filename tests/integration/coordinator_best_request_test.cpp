// Measure requests through a real coordinator: /api/v1/best counts a shape it answered
// from the nearest measured one and says how to have it measured; POST
// /api/v1/best/requests queues one check job pinned to the GPU model for that exact case;
// a GPU runner claims it, uploads, completes, and the answer flips to measured.
#include <thread>

#include "coordinator_fixture.h"

namespace kport::testing {
namespace json = boost::json;

namespace {

const std::string k_grid = "m=4096,n=4096,k=4096";
const std::string k_asked = "m=3000,n=3000,k=3000";
const std::string k_asked_key = "k=3000,m=3000,n=3000";  // canonical: keys sorted
const std::string k_h200 = "NVIDIA%20H200";

json::object gemm_result(const std::string& instance, const std::string& shape, double median_us) {
  return json::object{{"target", "sm_90a"},
                      {"family", "gemm"},
                      {"variant", instance.substr(5, instance.rfind('.') - 5)},
                      {"instance", instance},
                      {"dtype", "bf16"},
                      {"shape", shape},
                      {"toolkit", "13.0"},
                      {"gpu_model", "NVIDIA H200"},
                      {"gpu_uuid", "GPU-1"},
                      {"arch", "9.0"},
                      {"driver", "580.1"},
                      {"status", "passed"},
                      {"seed", 7},
                      {"median_us", median_us},
                      {"stddev_us", median_us * 0.002},
                      {"samples", 100},
                      {"baseline", "cublas"},
                      {"baseline_median_us", 200.0},
                      {"ratio", 200.0 / median_us}};
}

json::object ask_body(const std::string& shape = k_asked, const std::string& gpu = "NVIDIA H200",
                      const std::string& op = "gemm", const std::string& dtype = "bf16") {
  return json::object{{"gpu", gpu}, {"op", op}, {"dtype", dtype}, {"shape", shape}};
}

std::string text(const json::value& v, std::string_view key) {
  const auto* x = v.is_object() ? v.as_object().if_contains(key) : nullptr;
  return x && x->is_string() ? std::string(x->as_string()) : std::string();
}

}  // namespace

class BestRequestTest : public CoordinatorTest {
 protected:
  void SetUp() override {
    CoordinatorTest::SetUp();
    add_target("sm_90a", "9.0");
    json::array kernels;
    for (const char* n : {"gemm.wgmma_tma.a", "gemm.mma_sync.e"})
      kernels.push_back(json::object{{"name", n},
                                     {"family", "gemm"},
                                     {"variant", std::string(n).substr(5, std::string(n).rfind('.') - 5)},
                                     {"features", json::array{}},
                                     {"dtypes", json::array{"bf16", "fp16"}}});
    ASSERT_EQ(put("/api/v1/kernels", json::object{{"instances", kernels}}, k_admin).status, 200);
    m_builder = register_runner("builder-1", "build");
    m_gpu = register_runner("gpu-1", "gpu");
  }

  // A pipeline of commit 1: its sm_90a build succeeds and its H200 check times the grid shape.
  void validate_grid() {
    start_pipeline(commit_sha(1));
    auto build = claim(m_builder);
    ASSERT_TRUE(build.is_object());
    m_build_id = build.at("id").as_int64();
    auto id = std::to_string(m_build_id);
    json::array records;
    for (const char* v : {"wgmma_tma", "mma_sync"})
      records.push_back(json::object{{"target", "sm_90a"}, {"family", "gemm"}, {"variant", v}, {"status", "ok"}});
    ASSERT_EQ(
        post("/api/v1/jobs/" + id + "/builds", json::object{{"attempt", 1}, {"records", records}}, m_builder).status,
        200);
    ASSERT_EQ(post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}, {"status", "succeeded"}}, m_builder)
                  .status,
              200);
    auto check = claim(m_gpu);
    ASSERT_TRUE(check.is_object());
    auto cid = std::to_string(check.at("id").as_int64());
    json::array results{gemm_result("gemm.wgmma_tma.a", k_grid, 100.0), gemm_result("gemm.mma_sync.e", k_grid, 120.0)};
    ASSERT_EQ(
        post("/api/v1/jobs/" + cid + "/results", json::object{{"attempt", 1}, {"results", results}}, m_gpu).status,
        200);
    ASSERT_EQ(post("/api/v1/jobs/" + cid + "/complete", json::object{{"attempt", 1}}, m_gpu).status, 200);
  }

  JsonReply best(const std::string& shape) {
    return get("/api/v1/best?gpu=" + k_h200 + "&op=gemm&dtype=bf16&shape=" + shape);
  }

  // The unmeasured_asks entry of the asked shape on the H200 (0 when absent).
  std::int64_t asks_listed(const std::string& shape_key) {
    auto list = get("/api/v1/best/requests?gpu=" + k_h200);
    EXPECT_EQ(list.status, 200) << list.raw;
    if (list.status != 200) return -1;
    for (const auto& a : list.body.at("unmeasured_asks").as_array())
      if (text(a, "shape") == shape_key && text(a, "op") == "gemm" && text(a, "dtype") == "bf16")
        return a.at("asks").as_int64();
    return 0;
  }

  std::string m_builder, m_gpu;
  std::int64_t m_build_id = 0;
};

TEST_F(BestRequestTest, ARequestedShapeIsQueuedClaimedMeasuredAndThenAnsweredAsMeasured) {
  validate_grid();
  // Answered from the nearest timed shape, the answer says so and how to have it measured.
  for (int i = 0; i < 3; ++i) {
    auto nearest = best(k_asked);
    ASSERT_EQ(nearest.status, 200) << nearest.raw;
    EXPECT_EQ(text(nearest.body, "kind"), "measured");
    EXPECT_FALSE(nearest.body.at("exact_shape").as_bool());
    const auto& hint = nearest.body.at("measure");
    EXPECT_EQ(text(hint, "requests"), "POST /api/v1/best/requests");
    EXPECT_EQ(hint.at("body"), ask_body()) << nearest.raw;
  }
  // The grid shape itself is measured: no hint, and it is not counted.
  auto exact = best(k_grid);
  ASSERT_EQ(exact.status, 200);
  EXPECT_TRUE(exact.body.at("exact_shape").as_bool());
  EXPECT_FALSE(exact.body.as_object().contains("measure")) << exact.raw;
  EXPECT_EQ(asks_listed(k_asked_key), 3);
  EXPECT_EQ(asks_listed("k=4096,m=4096,n=4096"), 0);

  auto first = post("/api/v1/best/requests", ask_body("k=3000,n=3000,m=3000"), k_admin);
  ASSERT_EQ(first.status, 201) << first.raw;
  EXPECT_EQ(text(first.body, "outcome"), "queued");
  EXPECT_EQ(text(first.body, "state"), "queued");
  EXPECT_EQ(text(first.body, "shape"), k_asked_key);
  EXPECT_EQ(first.body.at("requests").as_int64(), 1);
  EXPECT_EQ(first.body.at("asked").as_int64(), 3);
  EXPECT_EQ(text(first.body, "created").size(), std::string("2026-12-01T12:00:00.000Z").size()) << first.raw;
  const std::int64_t id = first.body.at("id").as_int64();
  const std::int64_t job_id = first.body.at("job").as_int64();

  // The same question again, spelled differently, queues nothing.
  auto again = post("/api/v1/best/requests", ask_body(), k_admin);
  ASSERT_EQ(again.status, 200) << again.raw;
  EXPECT_EQ(text(again.body, "outcome"), "coalesced");
  EXPECT_EQ(again.body.at("id").as_int64(), id);
  EXPECT_EQ(again.body.at("job").as_int64(), job_id);
  EXPECT_EQ(again.body.at("requests").as_int64(), 2);
  auto checks = get("/api/v1/jobs?kind=check&status=queued");
  ASSERT_EQ(checks.status, 200);
  EXPECT_EQ(checks.body.at("items").as_array().size(), 1u) << checks.raw;

  // The runner's view: one check job pinned to the H200 on the sm_90a build, the one case only.
  auto job = claim(m_gpu);
  ASSERT_TRUE(job.is_object());
  ASSERT_EQ(job.at("id").as_int64(), job_id);
  EXPECT_EQ(text(job, "kind"), "check");
  EXPECT_EQ(text(job, "gpu_model"), "NVIDIA H200");
  EXPECT_EQ(text(job, "arch"), "9.0");
  EXPECT_EQ(text(job, "target"), "sm_90a");
  EXPECT_EQ(job.at("depends_on").as_int64(), m_build_id);
  EXPECT_EQ(text(job, "commit"), commit_sha(1));
  const auto& payload = job.at("payload");
  EXPECT_EQ(payload.at("cases"),
            (json::array{json::object{{"family", "gemm"}, {"dtype", "bf16"}, {"shape", k_asked}}}));
  EXPECT_FALSE(payload.as_object().contains("instances")) << payload;
  EXPECT_EQ(payload.at("bench"), json::value(true));
  auto running = get("/api/v1/best/requests/" + std::to_string(id));
  ASSERT_EQ(running.status, 200) << running.raw;
  EXPECT_EQ(text(running.body, "state"), "running");

  const std::string jid = std::to_string(job_id);
  json::array results{gemm_result("gemm.wgmma_tma.a", k_asked, 60.0), gemm_result("gemm.mma_sync.e", k_asked, 50.0)};
  ASSERT_EQ(post("/api/v1/jobs/" + jid + "/results", json::object{{"attempt", 1}, {"results", results}}, m_gpu).status,
            200);
  ASSERT_EQ(post("/api/v1/jobs/" + jid + "/complete", json::object{{"attempt", 1}}, m_gpu).status, 200);

  auto measured = best(k_asked);
  ASSERT_EQ(measured.status, 200) << measured.raw;
  EXPECT_EQ(text(measured.body, "kind"), "measured");
  EXPECT_TRUE(measured.body.at("exact_shape").as_bool()) << measured.raw;
  EXPECT_EQ(text(measured.body, "best"), "gemm.mma_sync.e") << "the fastest at 3000^3, not at the grid shape";
  EXPECT_FALSE(measured.body.as_object().contains("measure"));
  EXPECT_EQ(asks_listed(k_asked_key), 3) << "a measured answer is not counted as an unmeasured ask";

  auto done = get("/api/v1/best/requests/" + std::to_string(id));
  ASSERT_EQ(done.status, 200) << done.raw;
  EXPECT_EQ(text(done.body, "state"), "measured") << done.raw;
  EXPECT_EQ(text(done.body.at("measured"), "best"), "gemm.mma_sync.e");
  auto listed = get("/api/v1/best/requests?gpu=" + k_h200);
  ASSERT_EQ(listed.status, 200);
  ASSERT_EQ(listed.body.at("items").as_array().size(), 1u);
  EXPECT_EQ(text(listed.body.at("items").as_array()[0], "state"), "measured");
  EXPECT_EQ(listed.body.at("items").as_array()[0].at("requests").as_int64(), 2);

  // Asked once more after it was measured: answered, nothing queued.
  auto after = post("/api/v1/best/requests", ask_body(), k_admin);
  ASSERT_EQ(after.status, 200) << after.raw;
  EXPECT_EQ(text(after.body, "outcome"), "already_measured");
  EXPECT_TRUE(after.body.at("job").is_null());
  EXPECT_EQ(text(after.body.at("measured"), "best"), "gemm.mma_sync.e");
}

TEST_F(BestRequestTest, AnAlreadyMeasuredShapeQueuesNothing) {
  validate_grid();
  auto r = post("/api/v1/best/requests", ask_body("n=4096,k=4096,m=4096"), k_admin);
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(text(r.body, "outcome"), "already_measured");
  EXPECT_EQ(text(r.body, "state"), "measured");
  EXPECT_EQ(text(r.body.at("measured"), "best"), "gemm.wgmma_tma.a");
  EXPECT_EQ(r.body.at("measured").at("results").as_array().size(), 2u);
  auto checks = get("/api/v1/jobs?kind=check&status=queued");
  EXPECT_TRUE(checks.body.at("items").as_array().empty()) << checks.raw;
  EXPECT_TRUE(get("/api/v1/best/requests").body.at("items").as_array().empty());
}

TEST_F(BestRequestTest, BadInputIsAJsonErrorNamingTheFieldAndQueuesNothing) {
  validate_grid();
  struct Case {
    json::object body;
    int status;
    const char* code;
    const char* names;
  };
  std::vector<Case> cases = {
      {ask_body(k_asked, "NVIDIA H200", "conv2d"), 400, "invalid_argument", "'op'"},
      {ask_body("m=3000,n=3000"), 400, "invalid_argument", "'shape'"},
      {ask_body("m=3000,n=3000,k=3000,rows=2"), 400, "invalid_argument", "'shape'"},
      {ask_body("m=0,n=3000,k=3000"), 400, "invalid_argument", "'shape'"},
      {ask_body("m=3000;n=3000"), 400, "invalid_argument", "'shape'"},
      {ask_body(k_asked, "NVIDIA H200", "gemm", "BF16!"), 400, "invalid_argument", "'dtype'"},
      {ask_body(k_asked, "NVIDIA H200", "gemm", "fp64"), 422, "unprocessable", "'dtype'"},
      {json::object{{"gpu", "NVIDIA H200"}, {"op", "gemm"}, {"dtype", "bf16"}}, 400, "invalid_argument", "'shape'"},
      {json::object{{"gpu", 7}, {"op", "gemm"}, {"dtype", "bf16"}, {"shape", k_asked}}, 400, "invalid_argument",
       "'gpu'"},
      {ask_body(k_asked, "NVIDIA B200"), 404, "not_found", "NVIDIA B200"},
  };
  for (const auto& c : cases) {
    auto r = post("/api/v1/best/requests", c.body, k_admin);
    EXPECT_EQ(r.status, c.status) << json::serialize(c.body) << " -> " << r.raw;
    ASSERT_TRUE(r.body.is_object() && r.body.as_object().contains("error")) << r.raw;
    EXPECT_EQ(text(r.body.at("error"), "code"), c.code) << r.raw;
    EXPECT_NE(text(r.body.at("error"), "message").find(c.names), std::string::npos) << r.raw;
  }
  auto not_json = call_raw(client, "POST", url("/api/v1/best/requests"), "{\"gpu\":", k_admin);
  EXPECT_EQ(not_json.status, 400) << not_json.raw;
  EXPECT_EQ(text(not_json.body.at("error"), "code"), "bad_json");
  auto missing = get("/api/v1/best/requests/99");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(text(missing.body.at("error"), "code"), "not_found");
  EXPECT_EQ(get("/api/v1/best/requests/abc").status, 400);
  EXPECT_EQ(get("/api/v1/best/requests?limit=0").status, 400);
  auto checks = get("/api/v1/jobs?kind=check&status=queued");
  EXPECT_TRUE(checks.body.at("items").as_array().empty()) << checks.raw;
  EXPECT_TRUE(get("/api/v1/best/requests").body.at("items").as_array().empty());
}

TEST_F(BestRequestTest, OnlyTheAdminTokenMayAskForAMeasurement) {
  validate_grid();
  auto anonymous = post("/api/v1/best/requests", ask_body(), "");
  EXPECT_EQ(anonymous.status, 401) << anonymous.raw;
  auto runner = post("/api/v1/best/requests", ask_body(), m_gpu);
  EXPECT_EQ(runner.status, 403) << runner.raw;
  EXPECT_EQ(text(runner.body.at("error"), "code"), "forbidden");
  auto wrong = post("/api/v1/best/requests", ask_body(), "not-a-token");
  EXPECT_EQ(wrong.status, 401) << wrong.raw;
  EXPECT_TRUE(get("/api/v1/best/requests").body.at("items").as_array().empty());
  EXPECT_EQ(post("/api/v1/best/requests", ask_body(), k_admin).status, 201);
}

TEST_F(BestRequestTest, NothingBuiltForTheGpusArchIsAConflictNotAJobThatWaitsForever) {
  // The H200 registered, but no build exists yet.
  auto r = post("/api/v1/best/requests", ask_body(), k_admin);
  EXPECT_EQ(r.status, 409) << r.raw;
  EXPECT_NE(text(r.body.at("error"), "message").find("arch 9.0"), std::string::npos) << r.raw;
}

TEST_F(BestRequestTest, AFailedRequestSaysWhyAndAskingAgainQueuesANewJob) {
  validate_grid();
  auto verdict_before = get("/api/v1/commits/" + commit_sha(1) + "/verdict");
  ASSERT_EQ(verdict_before.status, 200) << verdict_before.raw;
  auto first = post("/api/v1/best/requests", ask_body(), k_admin);
  ASSERT_EQ(first.status, 201) << first.raw;
  auto job = claim(m_gpu);
  ASSERT_TRUE(job.is_object());
  const std::string jid = std::to_string(job.at("id").as_int64());
  auto failed = post("/api/v1/jobs/" + jid + "/complete",
                     json::object{{"attempt", 1}, {"status", "failed"}, {"reason", "harness crashed"}}, m_gpu);
  ASSERT_EQ(failed.status, 200) << failed.raw;
  auto state = get("/api/v1/best/requests/" + std::to_string(first.body.at("id").as_int64()));
  ASSERT_EQ(state.status, 200);
  EXPECT_EQ(text(state.body, "state"), "failed");
  EXPECT_NE(text(state.body, "reason").find("harness crashed"), std::string::npos) << state.raw;
  // A measurement of a new shape on a judged build is not part of the commit's verdict.
  auto verdict_after = get("/api/v1/commits/" + commit_sha(1) + "/verdict");
  ASSERT_EQ(verdict_after.status, 200) << verdict_after.raw;
  EXPECT_EQ(text(verdict_after.body, "status"), text(verdict_before.body, "status")) << verdict_after.raw;
  EXPECT_EQ(verdict_after.body.at("reasons"), verdict_before.body.at("reasons")) << verdict_after.raw;
  auto second = post("/api/v1/best/requests", ask_body(), k_admin);
  ASSERT_EQ(second.status, 201) << second.raw;
  EXPECT_NE(second.body.at("id").as_int64(), first.body.at("id").as_int64());
  EXPECT_NE(second.body.at("job").as_int64(), job.at("id").as_int64());
}

TEST_F(BestRequestTest, UnmeasuredAsksSurviveARestart) {
  validate_grid();
  for (int i = 0; i < 2; ++i) ASSERT_EQ(best("m=2000,n=2000,k=2000").status, 200);
  ASSERT_EQ(best("m=2500,n=2500,k=2500").status, 200);
  // A shape the family cannot run is answered but not counted.
  ASSERT_EQ(best("m=2000,n=2000").status, 200);
  ASSERT_EQ(proc->terminate(), 0);  // SIGTERM: the coordinator flushes what it counted
  start();
  EXPECT_EQ(asks_listed("k=2000,m=2000,n=2000"), 2);
  EXPECT_EQ(asks_listed("k=2500,m=2500,n=2500"), 1);
  auto list = get("/api/v1/best/requests?gpu=" + k_h200);
  const auto& asked = list.body.at("unmeasured_asks").as_array();
  ASSERT_EQ(asked.size(), 2u) << list.raw;
  EXPECT_EQ(text(asked[0], "shape"), "k=2000,m=2000,n=2000") << "most asked first";
}

TEST_F(BestRequestTest, TheOpenApiDocumentDescribesTheRequestRoutes) {
  auto doc = get("/api/v1/openapi.json");
  ASSERT_EQ(doc.status, 200);
  const auto& paths = doc.body.at("paths");
  EXPECT_EQ(text(paths.at("/api/v1/best/requests").at("post"), "x-kport-auth"), "admin");
  EXPECT_TRUE(paths.at("/api/v1/best/requests").as_object().contains("get"));
  EXPECT_TRUE(paths.at("/api/v1/best/requests/{id}").as_object().contains("get"));
  EXPECT_TRUE(
      doc.body.at("components").at("schemas").at("BestAnswer").at("properties").as_object().contains("measure"));
}

}  // namespace kport::testing
