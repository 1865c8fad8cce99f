// Another team's library through the whole build path: registered with the coordinator,
// pushed to a bare repository, built by the real kport-runner --role build from its
// kport.json (real nvcc, one arch), its harness stored and its variants published from
// the harness's list; a broken manifest and a checkout with none fail their build job at
// once with the reason, and nothing else.
#include <gtest/gtest.h>

#include <regex>

#include "foreign_library.h"
#include "runner_fixture.h"

namespace kport::testing {
namespace {

using boost::json::object;

class ManifestRunner : public BuildRunnerTest {
 protected:
  ManifestRunner() {
    max_attempts = 3;    // a refusal must fail on its first attempt all the same
    retry_base_ms = 50;  // a retry, were there one, would come back at once
  }
  void SetUp() override {
    if (!nvcc_available()) GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
    if (std::system("git --version > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "the git CLI is needed to create the test repository";
    BuildRunnerTest::SetUp();
  }
  // origin.git holding what `write` puts in src/; returns the commit sha.
  std::string make_library(const std::function<void(const std::filesystem::path&)>& write) {
    const std::filesystem::path src = dir.path() / "src";
    write(src);
    origin = (dir.path() / "origin.git").string();
    git("git init -q --bare " + origin);
    git("cd " + src.string() + " && git init -q -b main && git add -A && git commit -q -m library && git push -q " +
        origin + " main");
    return shell_out("cd " + src.string() + " && git rev-parse HEAD");
  }
  // Waits for a terminal status of `job`; returns the job.
  object wait_job(std::int64_t job, std::chrono::seconds limit = std::chrono::seconds(120)) {
    object j;
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      j = get("/api/v1/jobs/" + std::to_string(job)).body.as_object();
      const auto& s = j.at("status").as_string();
      if (s == "succeeded" || s == "failed" || s == "cancelled") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return j;
  }
  std::int64_t queue_build(const std::string& sha, const std::string& repo) {
    auto p = post("/api/v1/pipelines",
                  object{{"commit", sha}, {"repo", repo}, {"targets", boost::json::array{"sm_90a"}}}, k_admin);
    EXPECT_EQ(p.status, 201) << p.raw;
    return p.body.at("jobs").as_array().at(0).at("id").to_number<std::int64_t>();
  }
};

TEST_F(ManifestRunner, AnotherTeamsCudaLibraryIsBuiltFromItsManifest) {
  const std::string sha = make_library(write_cuda_library);
  add_target("sm_90a", "9.0");
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "scale-lib"}, {"url", origin}}, k_admin).status, 201);
  start_runner();

  std::string out;
  int rc = cli({"build", "--commit", sha, "--target", "sm_90a"}, out);
  EXPECT_EQ(rc, 0) << out << runner_output();
  const std::int64_t job = job_in(out);
  ASSERT_GT(job, 0) << out;
  auto build_job = get("/api/v1/jobs/" + std::to_string(job));
  EXPECT_EQ(build_job.body.at("status").as_string(), "succeeded") << build_job.raw << runner_output();

  // The records are the harness's variants, planned for sm_90a.
  auto recs = records_of(job, "sm_90a");
  ASSERT_EQ(recs.size(), 2u) << out << runner_output();
  EXPECT_EQ(recs["scale.v1"].at("status").as_string(), "ok");
  EXPECT_EQ(recs["scale.tc"].at("status").as_string(), "not_applicable");
  EXPECT_EQ(recs["scale.tc"].at("message").as_string(), "missing features: tcgen05");

  // The harness is stored by its sha256 under its own name and still speaks `list`.
  ASSERT_TRUE(recs["scale.v1"].at("artifact").is_string()) << boost::json::serialize(recs["scale.v1"]);
  const std::string artifact(recs["scale.v1"].at("artifact").as_string());
  auto meta = get("/api/v1/artifacts/" + artifact + "?meta=1");
  ASSERT_EQ(meta.status, 200) << meta.raw;
  EXPECT_EQ(meta.body.at("name").as_string(), "scale_harness");
  auto bytes = call_raw(client, "GET", url("/api/v1/artifacts/" + artifact), "");
  ASSERT_EQ(bytes.status, 200);
  const std::filesystem::path harness = dir.path() / "downloaded-harness";
  std::ofstream(harness, std::ios::binary) << bytes.raw;
  std::filesystem::permissions(harness, std::filesystem::perms::owner_all);
  std::string listed;
  ASSERT_EQ(run_to_exit(harness.string(), {"list"}, listed), 0) << listed;
  EXPECT_NE(listed.find("scale.v1.block256"), std::string::npos) << listed;

  // Its instances are published as the list names them, with their dtypes and config.
  auto kernels = get("/api/v1/kernels");
  bool found = false;
  for (const auto& k : kernels.body.at("items").as_array())
    if (k.at("name") == "scale.v1.block256") {
      found = true;
      EXPECT_EQ(k.at("family"), "scale") << k;
      EXPECT_EQ(k.at("dtypes"), (boost::json::array{"fp32"})) << k;
    }
  EXPECT_TRUE(found) << kernels.raw;
  auto log = call_raw(client, "GET", url("/api/v1/jobs/" + std::to_string(job) + "/log?format=text"), "");
  EXPECT_NE(log.raw.find("library scale-lib (kport.json, manifest_version 1)"), std::string::npos) << log.raw;
  EXPECT_NE(log.raw.find("scale.v1 sm_90a: ok"), std::string::npos) << log.raw;
}

TEST_F(ManifestRunner, ABrokenManifestFailsItsJobOnceWithTheValidationError) {
  const std::string sha = make_library([](const std::filesystem::path& src) {
    write_command_library(src);
    write_file(src / "kport.json",
               "{\n  \"manifest_version\": 1,\n  \"name\": \"swiglu-lib\",\n  \"build\": {\"command\": [\"make\"], "
               "\"harness\": \"h\"},\n  \"targets\": \"all\",\n  \"variants\": [\n    {\"name\": \"fused\", "
               "\"family\": \"swiglu\"},\n    {\"name\": \"fused\", \"family\": \"swiglu\"}\n  ]\n}\n");
  });
  add_target("sm_90a", "9.0");
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "swiglu-lib"}, {"url", origin}}, k_admin).status, 201);
  const std::int64_t job = queue_build(sha, "swiglu-lib");
  start_runner();
  auto j = wait_job(job);
  ASSERT_EQ(j.at("status").as_string(), "failed") << boost::json::serialize(j) << runner_output();
  EXPECT_EQ(j.at("attempt").to_number<std::int64_t>(), 1) << "a broken manifest is not worth a retry";
  const std::string why(j.at("failure_reason").as_string());
  EXPECT_NE(why.find("kport.json:8: key 'variants[1]': variant 'swiglu.fused' is declared twice (first at line 7)"),
            std::string::npos)
      << why;
  // Nothing was built or recorded for it.
  EXPECT_TRUE(records_of(job, "sm_90a").empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(get("/api/v1/jobs/" + std::to_string(job)).body.at("attempt").to_number<std::int64_t>(), 1);

  // The fix, pushed as the next commit, builds the command library from its manifest.
  const std::string src = (dir.path() / "src").string();
  write_command_library(src);
  git("cd " + src + " && git add -A && git commit -q -m 'fix the manifest' && git push -q " + origin + " main");
  const std::string fixed = shell_out("cd " + src + " && git rev-parse HEAD");
  const std::int64_t next = queue_build(fixed, "swiglu-lib");
  auto n = wait_job(next);
  ASSERT_EQ(n.at("status").as_string(), "succeeded") << boost::json::serialize(n) << runner_output();
  auto recs = records_of(next, "sm_90a");
  ASSERT_EQ(recs.size(), 3u) << runner_output();
  EXPECT_EQ(recs["swiglu.fused"].at("status").as_string(), "ok");
  // Its declared source is where a check run's annotation points.
  EXPECT_EQ(recs["swiglu.fused"].at("source_path").as_string(), "ops/swiglu.py")
      << boost::json::serialize(recs["swiglu.fused"]);
  EXPECT_EQ(recs["swiglu.tc"].at("status").as_string(), "not_applicable");
}

// A family kport does not ship, declared in the library's kport.json: the build runner
// reports it, and the coordinator, the best-kernel query and the CLI handle it as they
// handle kport's own.
TEST_F(ManifestRunner, AFamilyTheLibraryDeclaresIsLearnedFromItsBuildAndAnswered) {
  const std::string sha = make_library(write_command_library);
  add_target("sm_90a", "9.0");
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "swiglu-lib"}, {"url", origin}}, k_admin).status, 201);
  const std::string best_url = "/api/v1/best?gpu=NVIDIA%20H200&op=layernorm&dtype=bf16&shape=cols=8192,rows=4096";

  // Before a build reports it, layernorm is no op kport knows; the answer names those it does.
  auto before = get(best_url);
  ASSERT_EQ(before.status, 400) << before.raw;
  ASSERT_TRUE(before.body.is_object() && before.body.as_object().contains("error")) << before.raw;
  EXPECT_EQ(before.body.at("error").at("message").as_string(),
            "op 'layernorm' is not one of gemm, attention, gemm_fp8, grouped_gemm, grouped_gemm_fp8, rmsnorm, softmax "
            "(GET /api/v1/families lists the families)")
      << before.raw;

  const std::int64_t job = queue_build(sha, "swiglu-lib");
  start_runner();
  auto j = wait_job(job);
  ASSERT_EQ(j.at("status").as_string(), "succeeded") << boost::json::serialize(j) << runner_output();

  // The families its manifest declares are known, with who declared them, after kport's own.
  auto families = get("/api/v1/families");
  ASSERT_EQ(families.status, 200) << families.raw;
  std::vector<std::string> names;
  const boost::json::object* layernorm = nullptr;
  for (const auto& f : families.body.at("families").as_array()) {
    names.emplace_back(f.at("name").as_string());
    if (f.at("name") == "layernorm") layernorm = &f.as_object();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"gemm", "attention", "gemm_fp8", "grouped_gemm", "grouped_gemm_fp8",
                                             "rmsnorm", "softmax", "swiglu", "layernorm"}))
      << families.raw;
  ASSERT_NE(layernorm, nullptr) << families.raw;
  EXPECT_EQ(layernorm->at("library"), "swiglu-lib");
  EXPECT_EQ(layernorm->at("repo"), "swiglu-lib");
  EXPECT_EQ(layernorm->at("bound"), "memory");
  EXPECT_EQ(layernorm->at("bytes"), "(2*rows*cols + 2*cols)*bytes_per_elem");
  EXPECT_EQ(layernorm->at("dtypes"), (boost::json::array{"bf16", "e4m3"}));
  EXPECT_EQ(layernorm->at("dims").as_array().size(), 2u);
  EXPECT_EQ(layernorm->at("example"), "rows=4096,cols=8192");

  // A GPU runner's check of the build measures the two layernorm instances.
  const std::string gpu = register_runner("gpu-1", "gpu");
  auto check = claim(gpu, 5);
  ASSERT_TRUE(check.is_object()) << runner_output();
  const std::string cid = std::to_string(check.at("id").as_int64());
  boost::json::array results{testing::row_result("layernorm", "rows", "layernorm.rows.w256", "bf16", 40.0),
                             testing::row_result("layernorm", "rows", "layernorm.rows.w64", "bf16", 55.0),
                             testing::row_result("layernorm", "rows", "layernorm.rows.w64", "e4m3", 30.0)};
  auto up = post("/api/v1/jobs/" + cid + "/results", object{{"attempt", 1}, {"results", results}}, gpu);
  ASSERT_EQ(up.status, 200) << up.raw;
  ASSERT_EQ(post("/api/v1/jobs/" + cid + "/complete", object{{"attempt", 1}}, gpu).status, 200);
  // The harness counted no work; the figure is the declared bytes over the median.
  const std::int64_t first = up.body.at("ids").at(0).to_number<std::int64_t>();
  auto stored = get("/api/v1/results/" + std::to_string(first));
  ASSERT_EQ(stored.status, 200) << stored.raw;
  ASSERT_TRUE(stored.body.as_object().contains("timing")) << stored.raw;
  const auto& timing = stored.body.at("timing");
  EXPECT_NEAR(timing.at("gbps").to_number<double>(), (2.0 * 4096 * 8192 + 2 * 8192) * 2 / 40e-6 / 1e9, 1e-6)
      << stored.raw;
  EXPECT_TRUE(timing.at("tflops").is_null()) << "layernorm states no flops";

  auto best = get(best_url);
  ASSERT_EQ(best.status, 200) << best.raw;
  ASSERT_TRUE(best.body.as_object().contains("query")) << best.raw;
  EXPECT_EQ(best.body.at("kind"), "measured") << best.raw;
  EXPECT_EQ(best.body.at("best"), "layernorm.rows.w256") << best.raw;
  EXPECT_EQ(best.body.at("query").at("shape"), "cols=8192,rows=4096") << best.raw;
  auto e4m3 = get("/api/v1/best?gpu=NVIDIA%20H200&op=layernorm&dtype=e4m3&shape=rows=4096,cols=8192");
  ASSERT_EQ(e4m3.status, 200) << e4m3.raw;
  EXPECT_EQ(e4m3.body.at("best"), "layernorm.rows.w64") << e4m3.raw;
  // Its shapes are checked by its own dims: one it cannot run gets no measure offer.
  auto other = get("/api/v1/best?gpu=NVIDIA%20H200&op=layernorm&dtype=bf16&shape=rows=4096,cols=4096");
  ASSERT_EQ(other.status, 200) << other.raw;
  ASSERT_TRUE(other.body.as_object().contains("measure")) << other.raw;
  EXPECT_EQ(other.body.at("measure").at("body").at("shape"), "rows=4096,cols=4096") << other.raw;
  auto bad =
      post("/api/v1/best/requests",
           object{{"gpu", "NVIDIA H200"}, {"op", "layernorm"}, {"dtype", "bf16"}, {"shape", "rows=4096,k=2"}}, k_admin);
  EXPECT_EQ(bad.status, 400) << bad.raw;
  EXPECT_NE(
      bad.raw.find("field 'shape': shape key 'k' is not a dimension of layernorm (layernorm shapes are rows,cols)"),
      std::string::npos)
      << bad.raw;

  // The CLI asks the same question and prints the answer.
  std::string out;
  ASSERT_EQ(
      cli({"best", "--gpu", "NVIDIA H200", "--op", "layernorm", "--dtype", "bf16", "--shape", "rows=4096,cols=8192"},
          out),
      0)
      << out;
  EXPECT_NE(out.find("layernorm bf16 cols=8192,rows=4096 on NVIDIA H200: layernorm.rows.w256 (measured)"),
            std::string::npos)
      << out;
  std::string listed;
  ASSERT_EQ(cli({"families"}, listed), 0) << listed;
  // The columns are as wide as the longest family name, so the dims follow after some spaces.
  EXPECT_TRUE(std::regex_search(listed, std::regex("\nlayernorm +rows,cols +bf16,e4m3 +memory"))) << listed;
  EXPECT_NE(listed.find("swiglu-lib (swiglu-lib)"), std::string::npos) << listed;
  EXPECT_NE(listed.find("causal=0"), std::string::npos) << listed;
  EXPECT_NE(listed.find("9 op families"), std::string::npos) << listed;
  std::string refused;
  EXPECT_NE(cli({"best", "--gpu", "NVIDIA H200", "--op", "conv2d", "--shape", "n=1"}, refused), 0) << refused;
  EXPECT_NE(refused.find("op 'conv2d' is not one of gemm, attention, gemm_fp8, grouped_gemm, grouped_gemm_fp8, "
                         "rmsnorm, softmax, swiglu, layernorm"),
            std::string::npos)
      << refused;
}

TEST_F(ManifestRunner, ACheckoutWithoutAManifestFailsItsJobNamingKportJson) {
  const std::string sha = make_library([](const std::filesystem::path& src) {
    write_file(src / "src" / "ops" / "scale.cu", "__global__ void k() {}\n");
  });
  add_target("sm_90a", "9.0");
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "bare-lib"}, {"url", origin}}, k_admin).status, 201);
  const std::int64_t job = queue_build(sha, "bare-lib");
  start_runner();
  auto j = wait_job(job);
  ASSERT_EQ(j.at("status").as_string(), "failed") << boost::json::serialize(j) << runner_output();
  EXPECT_EQ(j.at("attempt").to_number<std::int64_t>(), 1);
  const std::string why(j.at("failure_reason").as_string());
  EXPECT_NE(why.find("the checkout has no kport.json at its root (the library manifest, docs/MANIFEST.md)"),
            std::string::npos)
      << why;
}

}  // namespace
}  // namespace kport::testing
