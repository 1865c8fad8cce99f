// Measure requests through a real coordinator: /api/v1/best counts a shape it answered
// from the nearest measured one and says how to have it measured; POST
// /api/v1/best/requests queues one check job pinned to the GPU model for that exact case;
// a GPU runner claims it, uploads, completes, and the answer flips to measured.
#include <map>
#include <thread>
#include <utility>
#include <vector>

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
    // The figures are of the pipeline's repository: the request is of it, named though
    // the question did not name it.
    json::object body = ask_body();
    body["repo"] = "kernels";
    EXPECT_EQ(hint.at("body"), body) << nearest.raw;
    EXPECT_EQ(text(hint, "list"), "GET /api/v1/best/requests?gpu=NVIDIA%20H200&repo=kernels");
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
  // A shape the family cannot take is the asker's error, and not counted.
  ASSERT_EQ(best("m=2000,n=2000").status, 400);
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

// Two libraries (repositories) on one coordinator, both with a build of sm_90a: lib-a runs
// gemm and softmax, lib-b gemm only, and lib-b built last. A measure request is of one
// library: it runs on that library's build, reads that library's figures, and is told
// apart from another library's request of the same key.
class LibraryBestRequestTest : public CoordinatorTest {
 protected:
  void SetUp() override {
    CoordinatorTest::SetUp();
    add_target("sm_90a", "9.0");
    m_builder = register_runner("builder-1", "build");
    m_gpu = register_runner("gpu-1", "gpu");
    m_sha_a = commit_sha(1);
    m_sha_b = commit_sha(2);
    // lib-a's build, checked at the grid shape; then lib-b's, newer, its check timing nothing.
    m_build_a = build("lib-a", m_sha_a,
                      {{"gemm", "gemm.tiles.a128"}, {"gemm", "gemm.tiles.a64"}, {"softmax", "softmax.rows.a"}});
    check_with({gemm_result("gemm.tiles.a128", k_grid, 100.0), gemm_result("gemm.tiles.a64", k_grid, 110.0)});
    m_build_b = build("lib-b", m_sha_b, {{"gemm", "gemm.tiles.b128"}, {"gemm", "gemm.tiles.b64"}});
    check_with({});
    ASSERT_GT(m_build_b, m_build_a);
  }

  // Registers `repo`, records `sha` in it and runs its pipeline's sm_90a build, which
  // publishes `instances` ((family, name) each) as that build's; returns the build job's id.
  std::int64_t build(const std::string& repo, const std::string& sha,
                     const std::vector<std::pair<std::string, std::string>>& instances) {
    EXPECT_EQ(
        post("/api/v1/repositories", json::object{{"name", repo}, {"url", "/tmp/" + repo + ".git"}}, k_admin).status,
        201);
    EXPECT_EQ(
        post("/api/v1/commits", json::object{{"sha", sha}, {"repo", repo}, {"message", "kernels"}}, k_admin).status,
        201);
    auto p = post(
        "/api/v1/pipelines",
        json::object{{"commit", sha}, {"repo", repo}, {"ref", "refs/heads/main"}, {"targets", json::array{"sm_90a"}}},
        k_admin);
    EXPECT_EQ(p.status, 201) << p.raw;
    auto job = claim(m_builder);
    EXPECT_TRUE(job.is_object());
    if (!job.is_object()) return 0;
    const std::int64_t id = job.at("id").as_int64();
    json::array list;
    for (const auto& [family, name] : instances) {
      const auto dot = name.find('.');
      list.push_back(json::object{{"name", name},
                                  {"family", family},
                                  {"variant", name.substr(dot + 1, name.rfind('.') - dot - 1)},
                                  {"features", json::array{}},
                                  {"dtypes", json::array{"bf16"}}});
    }
    // Published by the runner holding the build: the instances are its library's.
    EXPECT_EQ(put("/api/v1/kernels", json::object{{"instances", list}}, m_builder).status, 200);
    EXPECT_EQ(post("/api/v1/jobs/" + std::to_string(id) + "/complete",
                   json::object{{"attempt", 1}, {"status", "succeeded"}}, m_builder)
                  .status,
              200);
    return id;
  }

  // Claims the next check job as the H200 runner, uploads `results` into it and completes
  // it; returns its id.
  std::int64_t check_with(json::array results) {
    auto job = claim(m_gpu);
    EXPECT_TRUE(job.is_object());
    if (!job.is_object()) return 0;
    const std::string id = std::to_string(job.at("id").as_int64());
    if (!results.empty()) {
      EXPECT_EQ(
          post("/api/v1/jobs/" + id + "/results", json::object{{"attempt", 1}, {"results", results}}, m_gpu).status,
          200);
    }
    EXPECT_EQ(post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}}, m_gpu).status, 200);
    return job.at("id").as_int64();
  }

  static json::object of_library(json::object body, const std::string& repo) {
    body["repo"] = repo;
    return body;
  }

  // The job a request queued, as GET /api/v1/jobs/{id} shows it.
  json::value job_of(const JsonReply& request) {
    auto job = get("/api/v1/jobs/" + std::to_string(request.body.at("job").as_int64()));
    EXPECT_EQ(job.status, 200) << job.raw;
    return job.body;
  }

  std::string m_builder, m_gpu, m_sha_a, m_sha_b;
  std::int64_t m_build_a = 0, m_build_b = 0;
};

TEST_F(LibraryBestRequestTest, ARequestForOneLibrarysOpRunsOnThatLibrarysBuildNotTheNewestBuild) {
  // softmax is lib-a's alone: the request is lib-a's without naming it, and its check job
  // needs lib-a's harness, though lib-b built sm_90a last.
  auto r =
      post("/api/v1/best/requests",
           json::object{{"gpu", "NVIDIA H200"}, {"op", "softmax"}, {"dtype", "bf16"}, {"shape", "rows=64,cols=4096"}},
           k_admin);
  ASSERT_EQ(r.status, 201) << r.raw;
  EXPECT_EQ(text(r.body, "repo"), "lib-a") << r.raw;
  EXPECT_EQ(text(r.body, "commit"), m_sha_a);
  EXPECT_NE(text(r.body, "answer").find("&repo=lib-a"), std::string::npos) << r.raw;
  auto job = job_of(r);
  EXPECT_EQ(job.at("depends_on").as_int64(), m_build_a) << job;
  EXPECT_EQ(text(job, "commit"), m_sha_a);
  EXPECT_EQ(text(job, "target"), "sm_90a");
  EXPECT_EQ(text(job, "gpu_model"), "NVIDIA H200");
  auto pipeline = get("/api/v1/pipelines/" + std::to_string(r.body.at("pipeline").as_int64()));
  ASSERT_EQ(pipeline.status, 200) << pipeline.raw;
  EXPECT_EQ(text(pipeline.body, "repo"), "lib-a") << "its results are lib-a's";
}

TEST_F(LibraryBestRequestTest, AnOpBothLibrariesRunNeedsTheLibraryAndEachGetsItsOwnRequest) {
  // Without a library: refused, naming both, and nothing queued.
  auto mixed = post("/api/v1/best/requests", ask_body(), k_admin);
  ASSERT_EQ(mixed.status, 400) << mixed.raw;
  const std::string message = text(mixed.body.at("error"), "message");
  EXPECT_NE(message.find("'lib-a', 'lib-b'"), std::string::npos) << message;
  EXPECT_NE(message.find("'repo'"), std::string::npos) << message;
  EXPECT_TRUE(get("/api/v1/best/requests").body.at("items").as_array().empty());

  // With it: lib-b's request on lib-b's build, lib-a's on lib-a's; the same key twice.
  auto b = post("/api/v1/best/requests", of_library(ask_body(), "lib-b"), k_admin);
  ASSERT_EQ(b.status, 201) << b.raw;
  EXPECT_EQ(text(b.body, "repo"), "lib-b");
  EXPECT_EQ(job_of(b).at("depends_on").as_int64(), m_build_b);
  EXPECT_EQ(text(job_of(b), "commit"), m_sha_b);
  auto a = post("/api/v1/best/requests", of_library(ask_body(), "lib-a"), k_admin);
  ASSERT_EQ(a.status, 201) << a.raw << " (lib-b's open request of the key is not lib-a's)";
  EXPECT_EQ(text(a.body, "repo"), "lib-a");
  EXPECT_NE(a.body.at("id").as_int64(), b.body.at("id").as_int64());
  EXPECT_NE(a.body.at("job").as_int64(), b.body.at("job").as_int64());
  EXPECT_EQ(job_of(a).at("depends_on").as_int64(), m_build_a);
  EXPECT_EQ(text(job_of(a), "commit"), m_sha_a);
  auto again = post("/api/v1/best/requests", of_library(ask_body("k=3000,m=3000,n=3000"), "lib-a"), k_admin);
  ASSERT_EQ(again.status, 200) << again.raw;
  EXPECT_EQ(text(again.body, "outcome"), "coalesced");
  EXPECT_EQ(again.body.at("id").as_int64(), a.body.at("id").as_int64());

  // A library kport does not know is named back.
  auto unknown = post("/api/v1/best/requests", of_library(ask_body(), "lib-z"), k_admin);
  ASSERT_EQ(unknown.status, 404) << unknown.raw;
  EXPECT_NE(text(unknown.body.at("error"), "message").find("'lib-z'"), std::string::npos) << unknown.raw;

  // Each item names its library, the listing filters by it, the answer URL asks it.
  auto all = get("/api/v1/best/requests");
  ASSERT_EQ(all.status, 200) << all.raw;
  ASSERT_EQ(all.body.at("items").as_array().size(), 2u) << all.raw;
  auto only_b = get("/api/v1/best/requests?repo=lib-b");
  ASSERT_EQ(only_b.status, 200) << only_b.raw;
  const auto& items = only_b.body.at("items").as_array();
  ASSERT_EQ(items.size(), 1u) << only_b.raw;
  EXPECT_EQ(items[0].at("id").as_int64(), b.body.at("id").as_int64());
  EXPECT_EQ(text(items[0], "repo"), "lib-b");
  EXPECT_EQ(text(items[0], "answer"),
            "/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=k%3D3000%2Cm%3D3000%2Cn%3D3000&repo=lib-b");
  EXPECT_EQ(get("/api/v1/best/requests?repo=" + std::string(129, 'r')).status, 400);
}

TEST_F(LibraryBestRequestTest, MeasuredIsAskedOfTheRequestsOwnLibrary) {
  // lib-a timed the grid shape; lib-b did not: lib-a's request is answered, lib-b's queued.
  auto a = post("/api/v1/best/requests", of_library(ask_body(k_grid), "lib-a"), k_admin);
  ASSERT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(text(a.body, "outcome"), "already_measured");
  EXPECT_EQ(text(a.body, "repo"), "lib-a");
  EXPECT_EQ(text(a.body.at("measured"), "best"), "gemm.tiles.a128");
  auto b = post("/api/v1/best/requests", of_library(ask_body(k_grid), "lib-b"), k_admin);
  ASSERT_EQ(b.status, 201) << b.raw << " (lib-a's figures do not measure lib-b's instances)";
  EXPECT_EQ(job_of(b).at("depends_on").as_int64(), m_build_b);
  auto also_a = post("/api/v1/best/requests", of_library(ask_body(), "lib-a"), k_admin);
  ASSERT_EQ(also_a.status, 201) << also_a.raw;

  // lib-b's check times its own instances, at the asked shape too; its request is
  // measured, and lib-a's of the asked shape is still not: lib-b's figures are not lib-a's.
  auto job = claim(m_gpu);
  ASSERT_TRUE(job.is_object());
  ASSERT_EQ(job.at("id").as_int64(), b.body.at("job").as_int64());
  const std::string jid = std::to_string(b.body.at("job").as_int64());
  json::array results{gemm_result("gemm.tiles.b128", k_grid, 90.0), gemm_result("gemm.tiles.b64", k_grid, 80.0),
                      gemm_result("gemm.tiles.b128", k_asked, 60.0)};
  ASSERT_EQ(post("/api/v1/jobs/" + jid + "/results", json::object{{"attempt", 1}, {"results", results}}, m_gpu).status,
            200);
  ASSERT_EQ(post("/api/v1/jobs/" + jid + "/complete", json::object{{"attempt", 1}}, m_gpu).status, 200);
  auto done = get("/api/v1/best/requests/" + std::to_string(b.body.at("id").as_int64()));
  ASSERT_EQ(done.status, 200) << done.raw;
  EXPECT_EQ(text(done.body, "state"), "measured") << done.raw;
  EXPECT_EQ(text(done.body.at("measured"), "best"), "gemm.tiles.b64");
  auto again_a = post("/api/v1/best/requests", of_library(ask_body(), "lib-a"), k_admin);
  ASSERT_EQ(again_a.status, 200) << again_a.raw;
  EXPECT_EQ(text(again_a.body, "outcome"), "coalesced") << again_a.raw;
  EXPECT_EQ(again_a.body.at("id").as_int64(), also_a.body.at("id").as_int64());
  // lib-a's check ends without timing the shape: failed, though lib-b's instances were timed there.
  auto job_a = claim(m_gpu);
  ASSERT_TRUE(job_a.is_object());
  ASSERT_EQ(job_a.at("id").as_int64(), also_a.body.at("job").as_int64());
  ASSERT_EQ(post("/api/v1/jobs/" + std::to_string(job_a.at("id").as_int64()) + "/complete",
                 json::object{{"attempt", 1}}, m_gpu)
                .status,
            200);
  auto ended_a = get("/api/v1/best/requests/" + std::to_string(also_a.body.at("id").as_int64()));
  ASSERT_EQ(ended_a.status, 200) << ended_a.raw;
  EXPECT_EQ(text(ended_a.body, "state"), "failed") << ended_a.raw;
  EXPECT_NE(text(ended_a.body, "reason").find("no instance of library 'lib-a' passed"), std::string::npos)
      << ended_a.raw;

  // /api/v1/best asked about lib-a at a shape lib-a did not time says how to have lib-a's measured.
  auto hint = get("/api/v1/best?gpu=" + k_h200 + "&op=gemm&dtype=bf16&shape=" + k_asked + "&repo=lib-a");
  ASSERT_EQ(hint.status, 200) << hint.raw;
  ASSERT_TRUE(hint.body.as_object().contains("measure")) << hint.raw;
  EXPECT_EQ(hint.body.at("measure").at("body"), of_library(ask_body(), "lib-a")) << hint.raw;
  EXPECT_EQ(text(hint.body.at("measure"), "list"), "GET /api/v1/best/requests?gpu=NVIDIA%20H200&repo=lib-a");
}

TEST_F(LibraryBestRequestTest, ListingTheRequestsOfAnUnknownLibraryIsNotFound) {
  auto unknown = get("/api/v1/best/requests?repo=lib-z");
  ASSERT_EQ(unknown.status, 404) << unknown.raw << " (not an empty page: the name is wrong)";
  EXPECT_EQ(text(unknown.body.at("error"), "code"), "not_found") << unknown.raw;
  EXPECT_NE(text(unknown.body.at("error"), "message").find("'lib-z'"), std::string::npos) << unknown.raw;
  EXPECT_EQ(get("/api/v1/best/requests?repo=lib-a").status, 200);
}

TEST_F(LibraryBestRequestTest, TheMeasureHintNamesTheAnswersLibraryThoughTheQuestionDidNot) {
  // softmax is lib-a's alone: asked without a library, the answer is lib-a's, and so is
  // the request it suggests, so following it keeps working once lib-b runs softmax too.
  auto answer = get("/api/v1/best?gpu=" + k_h200 + "&op=softmax&dtype=bf16&shape=rows=64,cols=4096");
  ASSERT_EQ(answer.status, 200) << answer.raw;
  EXPECT_EQ(text(answer.body.at("query"), "repo"), "lib-a") << answer.raw;
  ASSERT_TRUE(answer.body.as_object().contains("measure")) << answer.raw;
  const auto& hint = answer.body.at("measure");
  EXPECT_EQ(text(hint.at("body"), "repo"), "lib-a") << answer.raw;
  EXPECT_EQ(text(hint, "list"), "GET /api/v1/best/requests?gpu=NVIDIA%20H200&repo=lib-a");
  auto followed = post("/api/v1/best/requests", hint.at("body").as_object(), k_admin);
  ASSERT_EQ(followed.status, 201) << followed.raw;
  EXPECT_EQ(text(followed.body, "repo"), "lib-a");
  EXPECT_EQ(job_of(followed).at("depends_on").as_int64(), m_build_a);
}

TEST_F(LibraryBestRequestTest, UnmeasuredAsksAreCountedPerLibraryAndSurviveARestart) {
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(get("/api/v1/best?gpu=" + k_h200 + "&op=gemm&dtype=bf16&shape=" + k_asked + "&repo=lib-a").status, 200);
  ASSERT_EQ(get("/api/v1/best?gpu=" + k_h200 + "&op=gemm&dtype=bf16&shape=" + k_asked + "&repo=lib-b").status, 200);
  // The asks of one library, and only its own, as that library's measure requests.
  auto asks_of = [&](const std::string& repo) {
    std::map<std::string, std::int64_t> out;  // repo -> asks of the gemm key
    auto list = get("/api/v1/best/requests" + (repo.empty() ? std::string() : "?repo=" + repo));
    EXPECT_EQ(list.status, 200) << list.raw;
    if (list.status != 200) return out;
    for (const auto& a : list.body.at("unmeasured_asks").as_array())
      if (text(a, "shape") == k_asked_key && text(a, "op") == "gemm") out[text(a, "repo")] += a.at("asks").as_int64();
    return out;
  };
  using Counts = std::map<std::string, std::int64_t>;
  EXPECT_EQ(asks_of(""), (Counts{{"lib-a", 2}, {"lib-b", 1}}));
  EXPECT_EQ(asks_of("lib-a"), (Counts{{"lib-a", 2}}));
  EXPECT_EQ(asks_of("lib-b"), (Counts{{"lib-b", 1}}));
  // A request counts its own library's asks.
  auto b = post("/api/v1/best/requests", of_library(ask_body(), "lib-b"), k_admin);
  ASSERT_EQ(b.status, 201) << b.raw;
  EXPECT_EQ(b.body.at("asked").as_int64(), 1) << b.raw;
  ASSERT_EQ(proc->terminate(), 0);  // SIGTERM: the coordinator writes what it counted
  start();
  EXPECT_EQ(asks_of(""), (Counts{{"lib-a", 2}, {"lib-b", 1}}));
  EXPECT_EQ(asks_of("lib-b"), (Counts{{"lib-b", 1}}));
  auto stored = get("/api/v1/best/requests/" + std::to_string(b.body.at("id").as_int64()));
  ASSERT_EQ(stored.status, 200) << stored.raw;
  EXPECT_EQ(stored.body.at("asked").as_int64(), 1) << stored.raw;
}

TEST_F(LibraryBestRequestTest, TheKernelPageKeepsTwoLibrariesInstancesOfOneNameApart) {
  // lib-c publishes an instance named as one of lib-a's, timed faster at the same case.
  const std::string sha_c = commit_sha(3);
  build("lib-c", sha_c, {{"gemm", "gemm.tiles.a128"}});
  check_with({gemm_result("gemm.tiles.a128", k_grid, 70.0)});
  auto page = [&](const std::string& query) { return get("/api/v1/dashboard/kernels/gemm.tiles.a128" + query); };
  auto history = [&](const JsonReply& r) {
    std::vector<std::pair<std::string, double>> out;  // (commit, median) per point
    for (const auto& sv : r.body.at("series").as_array()) {
      const auto& points = sv.at("points");
      for (std::size_t i = 0; i < points.at("commit").as_array().size(); ++i)
        out.emplace_back(std::string(points.at("commit").as_array()[i].as_string()),
                         points.at("median_us").as_array()[i].to_number<double>());
    }
    return out;
  };
  using History = std::vector<std::pair<std::string, double>>;
  const json::array both{"lib-a", "lib-c"};
  auto c = page("?repo=lib-c");
  ASSERT_EQ(c.status, 200) << c.raw;
  EXPECT_EQ(text(c.body, "repo"), "lib-c");
  EXPECT_EQ(c.body.at("libraries"), both);
  EXPECT_EQ(history(c), (History{{sha_c, 70.0}})) << c.raw;
  auto a = page("?repo=lib-a&dtype=bf16&shape=" + k_grid);
  ASSERT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(text(a.body, "repo"), "lib-a");
  EXPECT_EQ(history(a), (History{{m_sha_a, 100.0}})) << a.raw;
  // A bare link shows one library's (the first by name) and names the others.
  auto bare = page("");
  ASSERT_EQ(bare.status, 200) << bare.raw;
  EXPECT_EQ(text(bare.body, "repo"), "lib-a");
  EXPECT_EQ(bare.body.at("libraries"), both);
  EXPECT_EQ(history(bare), history(a));
  // A library without an instance of the name, and one kport does not know: not found.
  auto b = page("?repo=lib-b");
  ASSERT_EQ(b.status, 404) << b.raw;
  EXPECT_NE(text(b.body.at("error"), "message").find("'lib-b'"), std::string::npos) << b.raw;
  auto z = page("?repo=lib-z");
  ASSERT_EQ(z.status, 404) << z.raw;
  EXPECT_NE(text(z.body.at("error"), "message").find("'lib-z'"), std::string::npos) << z.raw;
}

TEST_F(LibraryBestRequestTest, ANewDriverReChecksEveryLibraryWithABuildOnItsOwnBuild) {
  json::object caps{{"arch", "9.0"}, {"gpu_model", "NVIDIA H200"}, {"driver", "600.1"}, {"gpu_uuid", "GPU-2"}};
  ASSERT_EQ(post("/api/v1/runners/register", json::object{{"name", "gpu-2"}, {"role", "gpu"}, {"capabilities", caps}},
                 k_registration)
                .status,
            201);
  auto opened = post("/api/v1/revalidations", json::object{{"gpu_model", "NVIDIA H200"}, {"driver", "600.1"}}, k_admin);
  ASSERT_EQ(opened.status, 201) << opened.raw;
  EXPECT_EQ(opened.body.at("jobs").to_number<std::int64_t>(), 2) << "lib-a's build as well as lib-b's, built last";
  auto p = get("/api/v1/pipelines/" + std::to_string(opened.body.at("pipeline").to_number<std::int64_t>()));
  ASSERT_EQ(p.status, 200) << p.raw;
  std::map<std::int64_t, json::value> by_build;
  for (const auto& j : p.body.at("jobs").as_array()) by_build[j.at("depends_on").as_int64()] = j;
  ASSERT_EQ(by_build.size(), 2u) << p.raw;
  ASSERT_TRUE(by_build.count(m_build_a) && by_build.count(m_build_b)) << p.raw;
  EXPECT_EQ(text(by_build[m_build_a], "commit"), m_sha_a);
  EXPECT_EQ(text(by_build[m_build_b], "commit"), m_sha_b);
  // Each library's own best on the model: lib-a's a128; lib-b has none there, so all of it.
  EXPECT_EQ(by_build[m_build_a].at("payload").at("instances"), (json::array{"gemm.tiles.a128"}));
  EXPECT_FALSE(by_build[m_build_b].at("payload").as_object().contains("instances")) << by_build[m_build_b];
}

}  // namespace kport::testing
