// The whole push path with real parts only: a bare repository with
// deploy/git-hooks/post-receive installed, real `git push`es of kernel changes, the
// coordinator's webhook, the real kport-runner --role build compiling with nvcc, check
// results uploaded through the runner API, and the verdict through the API and
// `kport status`.
#include <gtest/gtest.h>

#include "kport/common/crypto.h"
#include "runner_fixture.h"

namespace kport::testing {
namespace {

using boost::json::array;
using boost::json::object;

const std::string k_secret = "post-receive-secret";

class PushEndToEnd : public BuildRunnerTest {
 protected:
  PushEndToEnd() { extra_args = {"--hook-secret", k_secret}; }
  void SetUp() override {
    if (!nvcc_available()) GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
    for (const char* tool : {"git", "curl", "openssl"})
      if (std::system((std::string("command -v ") + tool + " > /dev/null 2>&1").c_str()) != 0)
        GTEST_SKIP() << tool << " is needed by the post-receive hook";
    BuildRunnerTest::SetUp();
  }

  void install_hook() {
    namespace fs = std::filesystem;
    fs::path hook = fs::path(origin) / "hooks" / "post-receive";
    fs::copy_file(KPORT_POST_RECEIVE, hook, fs::copy_options::overwrite_existing);
    fs::permissions(hook, fs::perms::owner_all, fs::perm_options::add);
    git("git -C " + origin + " config kport.url " + url(""));
    git("git -C " + origin + " config kport.secret " + k_secret);
    git("git -C " + origin + " config kport.repo kernels");
  }

  // Waits for every job of the commit to leave queued/running, or the limit.
  bool wait_for_build(const std::string& sha, std::chrono::seconds limit) {
    for (auto t = std::chrono::milliseconds(0); t < limit; t += std::chrono::milliseconds(250)) {
      auto jobs = get("/api/v1/jobs?kind=build&commit=" + sha);
      const auto& items = jobs.body.at("items").as_array();
      bool done = !items.empty();
      for (const auto& j : items) {
        auto s = j.at("status").as_string();
        if (s == "queued" || s == "running") done = false;
      }
      if (done) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return false;
  }

  int status_cli(const std::string& rev, std::string& out) {
    return run_to_exit(KPORT_CLI_BIN, {"--server", url(""), "status", rev}, out);
  }
};

TEST_F(PushEndToEnd, APushedKernelChangeIsBuiltAndJudgedAgainstItsParent) {
  std::string base = make_repository();
  install_hook();
  add_target("sm_80", "8.0");
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "kernels"}, {"url", origin}}, k_admin).status, 201);
  start_runner();
  // The baseline: the fixture tree as first pushed (one variant of it never compiles).
  std::string out;
  cli({"build", "--commit", base, "--target", "sm_80"}, out);
  ASSERT_TRUE(wait_for_build(base, std::chrono::seconds(300))) << out << runner_output();

  // 1. A push that doubles the softmax tile: the hook reports it, the runner builds it,
  //    and the verdict names the shared memory growth against the parent.
  std::string grown =
      commit_change("sed -i s/64/128/g kernels/softmax/tiny/softmax_tiny.cu", "double the softmax tile");
  auto pipelines = get("/api/v1/pipelines?commit=" + grown);
  ASSERT_EQ(pipelines.body.at("items").as_array().size(), 1u)
      << "the post-receive hook queued nothing: " << proc->log();
  const auto& p = pipelines.body.at("items").as_array()[0];
  EXPECT_EQ(p.at("reason").as_string(), "push");
  EXPECT_EQ(p.at("ref").as_string(), "refs/heads/main");
  EXPECT_EQ(p.at("repo").as_string(), "kernels");
  auto recorded = get("/api/v1/commits/" + grown);
  EXPECT_EQ(recorded.body.at("commit").at("parent"), boost::json::value(base)) << recorded.raw;
  ASSERT_TRUE(wait_for_build(grown, std::chrono::seconds(300))) << runner_output();
  auto v = get("/api/v1/commits/" + grown + "/verdict");
  ASSERT_EQ(v.status, 200) << v.raw;
  EXPECT_EQ(v.body.at("status").as_string(), "fail") << v.raw;
  EXPECT_EQ(v.body.at("baseline").as_string(), base);
  int rc = status_cli(grown.substr(0, 12), out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("resources: softmax.tiny on sm_80: shared memory 256 -> 512 B than " + base.substr(0, 12)),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("build_failure"), std::string::npos) << "the baseline fails to compile it too: not new\n" << out;
  EXPECT_NE(
      out.find("note: build: gemm.broken on sm_80 still fails to compile (compile_error), as at " + base.substr(0, 12)),
      std::string::npos)
      << "not counted, not hidden either\n"
      << out;

  // 2. A push that restores the tile and removes the broken variant: it builds, its
  //    check waits for a GPU runner of arch 8.0, and passes once one reports.
  std::string fixed =
      commit_change("git rm -q -r kernels/gemm/broken && sed -i s/128/64/g kernels/softmax/tiny/softmax_tiny.cu",
                    "drop the broken gemm, restore the tile");
  ASSERT_TRUE(wait_for_build(fixed, std::chrono::seconds(300))) << runner_output();
  rc = status_cli(fixed, out);
  EXPECT_EQ(rc, 4) << out;
  EXPECT_NE(out.find("awaiting_runner"), std::string::npos) << out;
  // The baseline's and the grown tile's builds validated the variants that built
  // (gemm.broken left out), so their checks wait for a GPU too; this runner is for the fix.
  for (const auto& earlier : {base, grown}) {
    auto checks = get("/api/v1/jobs?kind=check&commit=" + earlier);
    ASSERT_FALSE(checks.body.at("items").as_array().empty()) << "a build with a failed variant still spawns checks\n"
                                                             << checks.raw;
    for (const auto& j : checks.body.at("items").as_array())
      ASSERT_EQ(
          post("/api/v1/jobs/" + std::to_string(j.at("id").to_number<std::int64_t>()) + "/cancel", object{}, k_admin)
              .status,
          200);
  }
  std::string gpu = register_runner("a100", "gpu", "8.0", "NVIDIA A100");
  auto job = claim(gpu);
  ASSERT_TRUE(job.is_object());
  ASSERT_EQ(job.at("commit").as_string(), fixed);
  std::string jid = std::to_string(job.at("id").to_number<std::int64_t>());
  array results;
  for (const std::string variant : {"tiny_mma", "tiny"}) {
    std::string family = variant == "tiny" ? "softmax" : "gemm";
    results.push_back(object{{"family", family},
                             {"variant", variant},
                             {"instance", family + "." + variant + ".default"},
                             {"dtype", "f32"},
                             {"shape", family == "gemm" ? "m=1024,n=1024,k=1024" : "rows=1024,cols=1024"},
                             {"gpu_model", "NVIDIA A100"},
                             {"arch", "8.0"},
                             {"driver", "550.1"},
                             {"status", "passed"},
                             {"max_rel_err", 1e-6},
                             {"tolerance", 1e-4},
                             {"median_us", 12.0},
                             {"stddev_us", 0.1},
                             {"samples", 50}});
  }
  ASSERT_EQ(post("/api/v1/jobs/" + jid + "/results", object{{"attempt", 1}, {"results", results}}, gpu).status, 200);
  ASSERT_EQ(post("/api/v1/jobs/" + jid + "/complete", object{{"attempt", 1}, {"status", "succeeded"}}, gpu).status,
            200);
  rc = status_cli(fixed, out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find(fixed + ": pass (compared with " + grown.substr(0, 12) + ")"), std::string::npos) << out;
  // The branch and the newest push name the same commit.
  EXPECT_EQ(status_cli("main", out), 0) << out;
  EXPECT_NE(out.find(fixed + ": pass"), std::string::npos) << out;
  EXPECT_EQ(run_to_exit(KPORT_CLI_BIN, {"--server", url(""), "status"}, out), 0) << out;
  EXPECT_NE(out.find(fixed + ": pass"), std::string::npos) << out;
  EXPECT_EQ(status_cli("no such branch", out), 2) << out;

  // 3. The same ref update reported again (a re-run hook) is one delivery.
  std::string again =
      shell_out("cd " + origin + " && echo '" + grown + " " + fixed + " refs/heads/main' | sh hooks/post-receive 2>&1");
  EXPECT_NE(again.find("pipeline"), std::string::npos) << again;
  EXPECT_EQ(get("/api/v1/pipelines?commit=" + fixed).body.at("items").as_array().size(), 1u);
  EXPECT_EQ(stop_runner(), 0) << runner_output();
}

}  // namespace
}  // namespace kport::testing
