// Commit verdicts from pushes, with build and GPU results uploaded through the real
// runner API exactly as kport-runner does: new build failures, resource growth, new
// numerics failures, and slowdowns re-measured before anything is decided on them.
#include <gtest/gtest.h>

#include "hook_fixture.h"

namespace kport::testing {
namespace {

using boost::json::array;
using boost::json::object;

object build_record(const std::string& variant, const std::string& status, std::int64_t smem, std::int64_t spills = 0) {
  object r{{"family", "gemm"},
           {"variant", variant},
           {"status", status},
           {"message", status == "ok" ? "" : "error: tile_k undeclared"}};
  if (status == "ok") {
    r["registers"] = 96;
    r["shared_mem_bytes"] = smem;
    r["spill_stores_bytes"] = spills;
    r["spill_loads_bytes"] = spills;
  }
  return r;
}

object result(const std::string& variant, double median_us, const std::string& status = "passed") {
  return object{{"family", "gemm"},
                {"variant", variant},
                {"instance", "gemm." + variant + ".default"},
                {"dtype", "bf16"},
                {"shape", "m=4096,n=4096,k=4096"},
                {"toolkit", "13.0"},
                {"gpu_model", "NVIDIA H200"},
                {"gpu_uuid", "GPU-1"},
                {"arch", "9.0"},
                {"driver", "580.1"},
                {"status", status},
                {"max_rel_err", status == "passed" ? 1e-3 : 0.5},
                {"tolerance", 1e-2},
                {"median_us", median_us},
                {"stddev_us", 0.5},
                {"samples", 100}};
}

class Verdicts : public HookTest {
 protected:
  void SetUp() override {
    HookTest::SetUp();
    add_target("sm_90a", "9.0");
    ASSERT_EQ(
        post("/api/v1/repositories", object{{"name", "org/kernels"}, {"url", "/srv/git/kernels.git"}}, k_admin).status,
        201);
    builder = register_runner("builder", "build");
    gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  }

  void push(const std::string& sha, const std::string& parent) {
    auto r = github(
        push_body("org/kernels", "refs/heads/main", parent.empty() ? std::string(40, '0') : parent, sha, false, parent),
        "delivery-" + sha);
    ASSERT_EQ(r.status, 201) << r.raw;
  }
  // Claims the next job with `token`, uploads `records` under `key`, completes it.
  std::int64_t run_job(const std::string& token, const std::string& key, array records,
                       const std::string& expect_commit) {
    auto job = claim(token);
    EXPECT_TRUE(job.is_object()) << "nothing to claim";
    if (!job.is_object()) return 0;
    EXPECT_EQ(job.at("commit").as_string(), expect_commit);
    std::int64_t id = job.at("id").to_number<std::int64_t>();
    std::int64_t attempt = job.at("attempt").to_number<std::int64_t>();
    std::string base = "/api/v1/jobs/" + std::to_string(id);
    auto up = post(base + (key == "records" ? "/builds" : "/results"),
                   object{{"attempt", attempt}, {key, std::move(records)}}, token);
    EXPECT_EQ(up.status, 200) << up.raw;
    auto done = post(base + "/complete", object{{"attempt", attempt}, {"status", "succeeded"}}, token);
    EXPECT_EQ(done.status, 200) << done.raw;
    return id;
  }
  boost::json::value verdict(const std::string& sha) {
    auto r = get("/api/v1/commits/" + sha + "/verdict");
    EXPECT_EQ(r.status, 200) << r.raw;
    return r.body;
  }
  static std::string reasons_text(const boost::json::value& v) { return boost::json::serialize(v.at("reasons")); }

  std::string builder, gpu;
};

TEST_F(Verdicts, ComparesWithTheParentAndReMeasuresSlowdownsOnce) {
  const std::string a = commit_sha(1), b = commit_sha(2), c = commit_sha(3);
  // A: the baseline; everything builds and passes.
  push(a, "");
  EXPECT_EQ(verdict(a).at("status").as_string(), "pending");
  run_job(builder, "records", array{build_record("tiny_mma", "ok", 1024), build_record("simt", "ok", 0)}, a);
  EXPECT_EQ(verdict(a).at("status").as_string(), "pending") << "its check has not run";
  run_job(gpu, "results", array{result("tiny_mma", 100.0), result("simt", 400.0)}, a);
  auto va = verdict(a);
  EXPECT_EQ(va.at("status").as_string(), "pass") << va;
  EXPECT_TRUE(va.at("baseline").is_null());

  // B: simt no longer compiles, tiny_mma uses more shared memory and is 10% slower.
  push(b, a);
  run_job(builder, "records", array{build_record("tiny_mma", "ok", 2048), build_record("simt", "compile_error", 0)}, b);
  auto vb = verdict(b);
  EXPECT_EQ(vb.at("status").as_string(), "fail") << vb;
  EXPECT_EQ(vb.at("baseline").as_string(), a);
  std::string text = reasons_text(vb);
  EXPECT_NE(text.find("build: gemm.simt on sm_90a: compile_error (built at " + a.substr(0, 12) + ")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("resources: gemm.tiny_mma on sm_90a: shared memory 1024 -> 2048 B"), std::string::npos) << text;
  run_job(gpu, "results", array{result("tiny_mma", 110.0)}, b);
  vb = verdict(b);
  text = reasons_text(vb);
  EXPECT_EQ(text.find("perf_regression"), std::string::npos) << "not before its re-measure: " << text;
  // The slowdown asked for one re-measure, pinned to the GPU model that saw it.
  auto rm = claim(gpu);
  ASSERT_TRUE(rm.is_object());
  EXPECT_EQ(rm.at("commit").as_string(), b);
  EXPECT_EQ(rm.at("gpu_model"), boost::json::value("NVIDIA H200")) << rm;
  EXPECT_NE(boost::json::serialize(rm.at("payload")).find("remeasure"), std::string::npos) << rm;
  std::int64_t rm_id = rm.at("id").to_number<std::int64_t>();
  std::string base = "/api/v1/jobs/" + std::to_string(rm_id);
  ASSERT_EQ(post(base + "/results", object{{"attempt", 1}, {"results", array{result("tiny_mma", 111.0)}}}, gpu).status,
            200);
  ASSERT_EQ(post(base + "/complete", object{{"attempt", 1}, {"status", "succeeded"}}, gpu).status, 200);
  vb = verdict(b);
  text = reasons_text(vb);
  // The series has no A/A history beyond this pair: the slowdown is neither counted nor
  // passed (noise_test.cpp shows the same slowdown counted on a calibrated series).
  EXPECT_EQ(text.find("perf_regression"), std::string::npos) << text;
  ASSERT_EQ(vb.at("insufficient_data").as_array().size(), 1u) << vb;
  EXPECT_EQ(vb.at("insufficient_data").as_array()[0].at("instance").as_string(), "gemm.tiny_mma.default");
  EXPECT_NEAR(vb.at("insufficient_data").as_array()[0].at("change").to_number<double>(), 0.11, 1e-9);
  EXPECT_TRUE(claim(gpu).is_null()) << "one re-measure only";

  // C (child of A): a slowdown the re-measure does not confirm is no regression.
  push(c, a);
  run_job(builder, "records", array{build_record("tiny_mma", "ok", 1024), build_record("simt", "ok", 0)}, c);
  run_job(gpu, "results", array{result("tiny_mma", 108.0), result("simt", 401.0)}, c);
  EXPECT_EQ(verdict(c).at("status").as_string(), "pending");
  run_job(gpu, "results", array{result("tiny_mma", 100.4)}, c);
  auto vc = verdict(c);
  EXPECT_EQ(vc.at("status").as_string(), "pass") << vc;
  // Within the noise: 401 vs 400 us is +0.25%.
  EXPECT_TRUE(vc.at("reasons").as_array().empty()) << vc;
  // Ambiguous prefixes are 409; unknown commits are 404; text no rev can be is 400.
  EXPECT_EQ(get("/api/v1/commits/" + c.substr(0, 10) + "/verdict").status, 409) << "a prefix several commits share";
  EXPECT_EQ(get("/api/v1/commits/" + std::string(40, 'f') + "/verdict").status, 404);
  EXPECT_EQ(get("/api/v1/commits/xyz~1/verdict").status, 400);
  // A branch names the head its last push reported.
  EXPECT_EQ(get("/api/v1/commits/main/verdict").body.at("commit").as_string(), c);
  EXPECT_EQ(get("/api/v1/commits/refs%2Fheads%2Fmain/verdict").body.at("commit").as_string(), c);
  EXPECT_EQ(get("/api/v1/commits/topic/verdict").status, 404);
}

TEST_F(Verdicts, NewNumericsFailuresAndFailedJobsCount) {
  const std::string a = commit_sha(1), b = commit_sha(2);
  push(a, "");
  run_job(builder, "records", array{build_record("tiny_mma", "ok", 1024)}, a);
  run_job(gpu, "results", array{result("tiny_mma", 100.0)}, a);
  push(b, a);
  run_job(builder, "records", array{build_record("tiny_mma", "ok", 1024)}, b);
  run_job(gpu, "results", array{result("tiny_mma", 100.0, "failed")}, b);
  auto vb = verdict(b);
  EXPECT_EQ(vb.at("status").as_string(), "fail");
  std::string text = reasons_text(vb);
  EXPECT_NE(text.find("numerics: gemm.tiny_mma.default bf16 m=4096,n=4096,k=4096 on sm_90a / NVIDIA H200: failed, max "
                      "rel err 0.500000 "
                      "(tolerance 0.010000) (passed at " +
                      a.substr(0, 12) + ")"),
            std::string::npos)
      << text;
  // A build job that fails without records (the checkout failed) is a reason too.
  const std::string d = commit_sha(4);
  push(d, a);
  auto job = claim(builder);
  ASSERT_TRUE(job.is_object());
  auto id = std::to_string(job.at("id").to_number<std::int64_t>());
  ASSERT_EQ(post("/api/v1/jobs/" + id + "/complete",
                 object{{"attempt", 1}, {"status", "failed"}, {"reason", "cannot check out commit"}}, builder)
                .status,
            200);
  auto vd = verdict(d);
  EXPECT_EQ(vd.at("status").as_string(), "fail");
  EXPECT_NE(reasons_text(vd).find("build job " + id + " (sm_90a) failed: cannot check out commit"), std::string::npos)
      << vd;
}

}  // namespace
}  // namespace kport::testing
