// Another team's library end to end with real parts: registered with the coordinator, a
// bare repository with deploy/git-hooks/post-receive, real `git push`es, the real
// kport-runner --role build building it from its kport.json with nvcc, a GPU runner's
// check finding that harness through its build; then a push that breaks the manifest
// fails that commit's build job once, with the validation error, and nothing else.
#include <gtest/gtest.h>

#include "foreign_library.h"
#include "runner_fixture.h"

namespace kport::testing {
namespace {

using boost::json::object;

const std::string k_secret = "manifest-push-secret";

class ManifestPush : public BuildRunnerTest {
 protected:
  ManifestPush() {
    extra_args = {"--hook-secret", k_secret};
    max_attempts = 3;    // a refusal must fail on its first attempt all the same
    retry_base_ms = 50;  // a retry, were there one, would come back at once
  }
  void SetUp() override {
    if (!nvcc_available()) GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
    for (const char* tool : {"git", "curl", "openssl"})
      if (std::system((std::string("command -v ") + tool + " > /dev/null 2>&1").c_str()) != 0)
        GTEST_SKIP() << tool << " is needed by the post-receive hook";
    BuildRunnerTest::SetUp();
  }
  // origin.git holding the CUDA library (pushed before the hook is installed).
  std::string make_library() {
    const std::filesystem::path src = dir.path() / "src";
    write_cuda_library(src);
    origin = (dir.path() / "origin.git").string();
    git("git init -q --bare " + origin);
    git("cd " + src.string() + " && git init -q -b main && git add -A && git commit -q -m library && git push -q " +
        origin + " main");
    return shell_out("cd " + src.string() + " && git rev-parse HEAD");
  }
  void install_hook(const std::string& repo) {
    namespace fs = std::filesystem;
    fs::path hook = fs::path(origin) / "hooks" / "post-receive";
    fs::copy_file(KPORT_POST_RECEIVE, hook, fs::copy_options::overwrite_existing);
    fs::permissions(hook, fs::perms::owner_all, fs::perm_options::add);
    git("git -C " + origin + " config kport.url " + url(""));
    git("git -C " + origin + " config kport.secret " + k_secret);
    git("git -C " + origin + " config kport.repo " + repo);
  }
  // The commit's one build job once it left queued/running (null when it did not in time).
  object build_job_of(const std::string& sha, std::chrono::seconds limit = std::chrono::seconds(300)) {
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      auto jobs = get("/api/v1/jobs?kind=build&commit=" + sha);
      const auto& items = jobs.body.at("items").as_array();
      if (items.size() == 1) {
        const auto& s = items[0].at("status").as_string();
        if (s != "queued" && s != "running") return items[0].as_object();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return {};
  }
};

TEST_F(ManifestPush, ALibraryPushedThroughItsHookIsBuiltFromItsManifestAndABrokenOneFailsOnlyItsOwnBuild) {
  make_library();
  install_hook("scale-lib");
  add_target("sm_90a", "9.0");
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "scale-lib"}, {"url", origin}}, k_admin).status, 201);
  start_runner();

  // 1. A pushed kernel change: the hook reports it, the runner builds it from kport.json.
  const std::string tuned = commit_change("echo '// tuned' >> src/ops/scale.cu", "scale: tuned");
  auto pipelines = get("/api/v1/pipelines?commit=" + tuned);
  ASSERT_EQ(pipelines.body.at("items").as_array().size(), 1u)
      << "the post-receive hook queued nothing: " << proc->log();
  EXPECT_EQ(pipelines.body.at("items").as_array()[0].at("reason").as_string(), "push");
  EXPECT_EQ(pipelines.body.at("items").as_array()[0].at("repo").as_string(), "scale-lib");
  auto build = build_job_of(tuned);
  ASSERT_FALSE(build.empty()) << runner_output();
  ASSERT_EQ(build.at("status").as_string(), "succeeded") << boost::json::serialize(build) << runner_output();
  const auto build_id = build.at("id").to_number<std::int64_t>();
  auto recs = records_of(build_id, "sm_90a");
  ASSERT_EQ(recs.size(), 2u) << runner_output();
  EXPECT_EQ(recs["scale.v1"].at("status").as_string(), "ok");
  EXPECT_EQ(recs["scale.tc"].at("status").as_string(), "not_applicable");

  // Its check job waits for a GPU of arch 9.0; the runner that claims it finds this
  // library's harness through the build it depends on.
  auto checks = get("/api/v1/jobs?kind=check&commit=" + tuned);
  ASSERT_FALSE(checks.body.at("items").as_array().empty()) << checks.raw;
  const std::string gpu = register_runner("h200", "gpu", "9.0", "NVIDIA H200");
  auto job = claim(gpu);
  ASSERT_TRUE(job.is_object()) << "no check job to claim";
  EXPECT_EQ(job.at("commit").as_string(), tuned);
  EXPECT_EQ(job.at("kind").as_string(), "check");
  auto harness = get("/api/v1/builds?job=" + std::to_string(job.at("depends_on").to_number<std::int64_t>()));
  std::string artifact;
  for (const auto& r : harness.body.at("items").as_array())
    if (r.at("artifact").is_string()) artifact = std::string(r.at("artifact").as_string());
  ASSERT_FALSE(artifact.empty()) << harness.raw;
  auto meta = get("/api/v1/artifacts/" + artifact + "?meta=1");
  ASSERT_EQ(meta.status, 200) << meta.raw;
  EXPECT_EQ(meta.body.at("name").as_string(), "scale_harness");

  // 2. A push that breaks the manifest: that commit's build fails once, saying where.
  write_file(dir.path() / "src" / "kport.json", R"({
  "manifest_version": 1,
  "name": "scale-lib",
  "build": {"cmake": {"target": "scale_harness", "options": ["-DSCALE_ARCH={arch}", "-DSCALE_TARGET={target}"]}},
  "targets": ["sm_90a"],
  "varaints": []
}
)");
  const std::string broken = commit_change("true", "kport.json: a typo");
  auto failed = build_job_of(broken);
  ASSERT_FALSE(failed.empty()) << runner_output();
  ASSERT_EQ(failed.at("status").as_string(), "failed") << boost::json::serialize(failed) << runner_output();
  EXPECT_EQ(failed.at("attempt").to_number<std::int64_t>(), 1) << "a broken manifest is not worth a retry";
  const std::string why(failed.at("failure_reason").as_string());
  EXPECT_NE(why.find("kport.json:6: unknown key 'varaints' (the manifest takes manifest_version, name, build, "
                     "targets, variants, families, shapes, tolerances, env)"),
            std::string::npos)
      << why;
  EXPECT_TRUE(get("/api/v1/jobs?kind=check&commit=" + broken).body.at("items").as_array().empty())
      << "a failed build spawns no check";
  // Nothing else: the earlier commit's build, records and claimed check are as they were.
  EXPECT_EQ(get("/api/v1/jobs/" + std::to_string(build_id)).body.at("status").as_string(), "succeeded");
  EXPECT_EQ(records_of(build_id, "sm_90a").size(), 2u);
  EXPECT_EQ(get("/api/v1/jobs/" + std::to_string(job.at("id").to_number<std::int64_t>())).body.at("status").as_string(),
            "running");
  EXPECT_EQ(stop_runner(), 0) << runner_output();
}

}  // namespace
}  // namespace kport::testing
