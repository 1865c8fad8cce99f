// The whole build path, real processes only: kport build queues a pipeline, the real
// kport-runner clones the bare repository with libgit2, compiles the fixture kernels
// with nvcc through the porting driver and uploads records the CLI then prints.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <iostream>

#include "runner_fixture.h"

namespace kport::testing {
namespace {

using boost::json::object;
namespace json = boost::json;

class BuildRunnerEndToEnd : public BuildRunnerTest {
 protected:
  void SetUp() override {
    if (!nvcc_available()) GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
    if (std::system("git --version > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "the git CLI is needed to create the test repository";
    BuildRunnerTest::SetUp();
  }

  // A stand-in for cuobjdump that prints real captured SASS (tests/unit/porting/fixtures/
  // sass, captured for sm_90a) relabelled as `target`'s code: the mma_sync kernel for
  // gemm.tiny_mma; for softmax.tiny, the spilling kernel once the checked-out softmax
  // source has a 128-wide tile, else a plain simt kernel.
  std::string fake_cuobjdump(const std::string& target) {
    const std::string fx = KPORT_SASS_FIXTURES, relabel = " | sed s/sm_90a/" + target + "/g";
    std::filesystem::path tool = dir.path() / "fake-cuobjdump";
    std::ofstream(tool) << "#!/bin/sh\n[ \"$1\" = -sass ] || exit 2\ncase \"$2\" in\n"
                        << "  *tiny_mma*) cat " << fx << "/kport_gemm_mma_sync_sm_90a__gemm_mma_sync_sm80.sass"
                        << relabel << " ;;\n"
                        << "  *softmax*) src=$(find " << (dir.path() / "work" / "repos").string()
                        << " -name softmax_tiny.cu | head -n 1)\n"
                        << "    if grep -q 128 \"$src\"; then cat " << fx << "/spill__sm_90a.sass" << relabel << "\n"
                        << "    else cat " << fx << "/kport_softmax_simt_sm_90a__softmax_simt.sass" << relabel
                        << "; fi ;;\n"
                        << "  *) cat " << fx << "/kport_softmax_simt_sm_90a__softmax_simt.sass" << relabel
                        << " ;;\nesac\n";
    std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
    return tool.string();
  }
};

TEST_F(BuildRunnerEndToEnd, BuildsRecordsAndReportsEveryVariant) {
  std::string sha = make_repository();
  add_target("sm_80", "8.0");
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "kernels"}, {"url", origin}}, k_admin).status, 201);
  start_runner({"--cuobjdump", fake_cuobjdump("sm_80")});

  // 1. One variant fails to compile: the job still completes with a harness of the
  //    variants that built, its check jobs are spawned, and the records hold the failure.
  std::string out;
  int rc = cli({"build", "--commit", sha, "--target", "sm_80"}, out);
  EXPECT_EQ(rc, 0) << out << runner_output();
  EXPECT_NE(out.find("gemm.broken"), std::string::npos) << out;
  EXPECT_NE(out.find("compile_error"), std::string::npos) << out;
  std::int64_t job = job_in(out);
  auto build_job = get("/api/v1/jobs/" + std::to_string(job));
  EXPECT_EQ(build_job.body.at("status").as_string(), "succeeded") << build_job.raw;
  auto recs = records_of(job, "sm_80");
  ASSERT_EQ(recs.size(), 4u) << out << runner_output();
  EXPECT_EQ(recs["softmax.tiny"].at("status").as_string(), "ok");
  EXPECT_GT(recs["softmax.tiny"].at("registers").to_number<std::int64_t>(), 0);
  EXPECT_EQ(recs["softmax.tiny"].at("shared_mem_bytes").to_number<std::int64_t>(), 256);
  EXPECT_EQ(recs["softmax.tiny"].at("spill_stores_bytes").to_number<std::int64_t>(), 0);
  EXPECT_EQ(recs["gemm.tiny_mma"].at("status").as_string(), "ok");
  const auto& audit = recs["gemm.tiny_mma"].at("instruction_audit").as_object();
  const auto& ptx = audit.at("ptx").as_object();
  EXPECT_EQ(ptx.at("source").as_string(), "ptx");
  EXPECT_GE(ptx.at("counts").at("mma_sync").to_number<std::int64_t>(), 1);
  EXPECT_TRUE(ptx.at("passed").as_bool());
  // The machine-code audit beside it, from the disassembler's output (the mma_sync kernel).
  const auto& sass = audit.at("sass").as_object();
  ASSERT_TRUE(sass.at("audited").as_bool()) << json::serialize(sass) << runner_output();
  EXPECT_EQ(sass.at("tool").as_string(), "cuobjdump -sass");
  EXPECT_EQ(sass.at("counts").at("mma_sync").to_number<std::int64_t>(), 32) << json::serialize(sass);
  EXPECT_TRUE(sass.at("passed").as_bool());
  EXPECT_EQ(
      recs["softmax.tiny"].at("instruction_audit").at("sass").at("counts").at("local_store").to_number<std::int64_t>(),
      0);
  EXPECT_NE(out.find("mma_sync " + std::to_string(ptx.at("counts").at("mma_sync").to_number<std::int64_t>()) +
                     " ok, sass ok"),
            std::string::npos)
      << "the CLI's table shows both audits\n"
      << out;
  EXPECT_EQ(recs["gemm.broken"].at("status").as_string(), "compile_error");
  EXPECT_NE(recs["gemm.broken"].at("message").as_string().find("undeclared_tile_value"), std::string::npos);
  EXPECT_FALSE(recs["gemm.broken"].contains("artifact") && recs["gemm.broken"].at("artifact").is_string())
      << "a variant that did not build is not in the harness";
  EXPECT_EQ(recs["attention.hopper"].at("status").as_string(), "not_applicable");
  EXPECT_EQ(recs["attention.hopper"].at("message").as_string(), "missing features: wgmma, tma");

  // A check job of this build exists (the target's own arch checks it).
  auto checks = get("/api/v1/jobs?kind=check");
  std::int64_t spawned = 0;
  for (const auto& j : checks.body.at("items").as_array())
    if (j.at("depends_on").is_int64() && j.at("depends_on").as_int64() == job) ++spawned;
  EXPECT_GE(spawned, 1) << checks.raw;

  // The harness is stored by its sha256 and lists the variants that built, not the broken one.
  ASSERT_TRUE(recs["softmax.tiny"].at("artifact").is_string());
  std::string artifact(recs["softmax.tiny"].at("artifact").as_string());
  auto meta = get("/api/v1/artifacts/" + artifact + "?meta=1");
  EXPECT_EQ(meta.status, 200) << meta.raw;
  EXPECT_EQ(meta.body.at("name").as_string(), "kport-harness-sm_80");
  auto bytes = call_raw(client, "GET", url("/api/v1/artifacts/" + artifact), "");
  ASSERT_EQ(bytes.status, 200);
  std::filesystem::path harness = dir.path() / "downloaded-harness";
  std::ofstream(harness, std::ios::binary) << bytes.raw;
  std::filesystem::permissions(harness, std::filesystem::perms::owner_all);
  std::string listed;
  ASSERT_EQ(run_to_exit(harness.string(), {"list"}, listed), 0) << listed;
  EXPECT_NE(listed.find("gemm.tiny_mma"), std::string::npos) << listed;
  EXPECT_NE(listed.find("softmax.tiny"), std::string::npos) << listed;
  EXPECT_EQ(listed.find("gemm.broken"), std::string::npos) << listed;
  auto kernels = get("/api/v1/kernels");
  EXPECT_NE(kernels.raw.find("gemm.tiny_mma.default"), std::string::npos) << kernels.raw;
  EXPECT_EQ(kernels.raw.find("gemm.broken"), std::string::npos) << kernels.raw;
  // The dtypes the harness lists travel with each instance (provisional answers filter on them).
  for (const auto& k : kernels.body.at("items").as_array())
    EXPECT_EQ(k.at("dtypes"), (boost::json::array{"fp32"})) << k;
  // The log and the job's summary name the failed variant.
  auto log = call_raw(client, "GET", url("/api/v1/jobs/" + std::to_string(job) + "/log?format=text"), "");
  EXPECT_NE(log.raw.find("gemm.broken sm_80: compile_error"), std::string::npos) << log.raw;
  EXPECT_NE(log.raw.find("succeeded: 2 variants built, 1 not applicable on sm_80; 1 of 4 variants failed on sm_80: "
                         "gemm.broken (compile_error)"),
            std::string::npos)
      << log.raw;

  // 2. The fix: every applicable variant builds, the job succeeds, the CLI exits 0; the
  //    softmax tile doubled in the same commit is flagged against the parent's build.
  std::string fixed =
      commit_change("git rm -q -r kernels/gemm/broken && sed -i s/64/128/g kernels/softmax/tiny/softmax_tiny.cu",
                    "drop the broken gemm, double the softmax tile");
  rc = cli({"build", "--commit", fixed, "--target", "sm_80"}, out);
  EXPECT_EQ(rc, 0) << out << runner_output();
  EXPECT_NE(out.find("succeeded"), std::string::npos) << out;
  auto again = records_of(job_in(out), "sm_80");
  EXPECT_EQ(again.size(), 3u);
  ASSERT_EQ(again.count("gemm.tiny_mma"), 1u);
  EXPECT_EQ(again["gemm.tiny_mma"].at("commit").as_string(), fixed);
  std::string softmax_message(again["softmax.tiny"].at("message").as_string());
  EXPECT_NE(
      softmax_message.find("resource change since " + sha.substr(0, 12) + " on sm_80: shared memory 256 -> 512 B"),
      std::string::npos)
      << softmax_message;
  // The doubled tile also spills (the disassembler now shows local stores): flagged too.
  EXPECT_NE(softmax_message.find("SASS local loads (LDL) 0 -> 29, SASS local stores (STL) 0 -> 64"), std::string::npos)
      << softmax_message;
  EXPECT_EQ(std::string(again["gemm.tiny_mma"].at("message").as_string()).find("resource change"), std::string::npos);

  // 3. A commit the repository does not have: an explained failure, and the runner goes on.
  rc = cli({"build", "--commit", std::string(40, 'b'), "--target", "sm_80"}, out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("cannot check out commit"), std::string::npos) << out;

  // 4. A repository that cannot be reached.
  ASSERT_EQ(
      post("/api/v1/repositories", object{{"name", "ghost"}, {"url", (dir.path() / "nowhere.git").string()}}, k_admin)
          .status,
      201);
  rc = cli({"build", "--commit", fixed, "--target", "sm_80", "--repo", "ghost"}, out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("cannot open or clone"), std::string::npos) << out;

  // 5. SIGTERM between jobs: deregister and exit 0.
  EXPECT_EQ(stop_runner(), 0) << runner_output();
  auto runners = get("/api/v1/runners?all=1");
  EXPECT_FALSE(runners.body.at("items").as_array().at(0).at("online").as_bool()) << runners.raw;
  EXPECT_NE(runner_output().find("deregistered"), std::string::npos);
}

}  // namespace
}  // namespace kport::testing

namespace kport::testing {
namespace {

class BuildRunnerCancel : public BuildRunnerEndToEnd {
 protected:
  BuildRunnerCancel() { lease_seconds = 3; }  // heartbeats every second
};

TEST_F(BuildRunnerCancel, CancelKillsAHungCompileAndTheRunnerStaysUp) {
  namespace fs = std::filesystem;
  make_repository();
  fs::path fifo = dir.path() / "never-written";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::path hang = dir.path() / "src" / "kernels" / "rmsnorm" / "hang";
  fs::create_directories(hang);
  std::ofstream(hang / "CMakeLists.txt")
      << "kport_kernel_variant(FAMILY rmsnorm VARIANT hang FEATURES simt SOURCES hang.cu)\n";
  std::ofstream(hang / "hang.cu") << "#include \"" << fifo.string() << "\"\n";
  std::string sha = commit_change("true", "add a variant whose compile never ends");
  add_target("sm_80", "8.0");
  ASSERT_EQ(post("/api/v1/repositories", boost::json::object{{"name", "kernels"}, {"url", origin}}, k_admin).status,
            201);
  start_runner();
  auto p = post("/api/v1/pipelines", boost::json::object{{"commit", sha}, {"repo", "kernels"}, {"targets", {"sm_80"}}},
                k_admin);
  ASSERT_EQ(p.status, 201) << p.raw;
  std::string job = std::to_string(p.body.at("jobs").as_array().at(0).at("id").to_number<std::int64_t>());
  auto wait_status = [&](const std::string& want, std::chrono::seconds limit) {
    for (auto t = std::chrono::milliseconds(0); t < limit; t += std::chrono::milliseconds(250)) {
      if (get("/api/v1/jobs/" + job).body.at("status").as_string() == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return false;
  };
  ASSERT_TRUE(wait_status("running", std::chrono::seconds(60))) << runner_output();
  // Wait until the hung compile is in flight (its work folder appears when it starts).
  auto compiling = [&] {
    std::error_code ec;
    for (const auto& ws : fs::directory_iterator(dir.path() / "work" / "build", ec))
      if (fs::exists(ws.path() / "sm_80" / "kport-driver" / "rmsnorm.hang")) return true;
    return false;
  };
  for (int i = 0; i < 600 && !compiling(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(compiling()) << runner_output();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto c = post("/api/v1/jobs/" + job + "/cancel", boost::json::object{}, k_admin);
  ASSERT_EQ(c.status, 200) << c.raw;
  auto cancelled_at = std::chrono::steady_clock::now();
  EXPECT_TRUE(wait_status("cancelled", std::chrono::seconds(120))) << runner_output();
  // Well before the 300 s compile limit the runner was started with.
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, std::chrono::seconds(120));
  EXPECT_NE(runner_output().find("cancel requested"), std::string::npos) << runner_output();
  EXPECT_EQ(::waitpid(runner_pid, nullptr, WNOHANG), 0) << "the runner must survive a cancelled job";
  if (std::getenv("KPORT_TEST_VERBOSE")) std::cerr << runner_output();
  EXPECT_EQ(stop_runner(), 0) << runner_output();
}

}  // namespace
}  // namespace kport::testing

namespace kport::testing {
namespace {

// Issue 14, item 9: a permanent error was retried for nothing. Three attempts allowed,
// a repository that does not exist: the real build runner fails the job on its first
// attempt, with the reason, and never claims it again.
class BuildRunnerPermanentFailure : public BuildRunnerTest {
 protected:
  BuildRunnerPermanentFailure() {
    max_attempts = 3;
    retry_base_ms = 50;  // a retry, were there one, would come back at once
  }
};

TEST_F(BuildRunnerPermanentFailure, ABuildOfARepositoryThatDoesNotExistFailsAtOnceWithItsReason) {
  if (!nvcc_available()) GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
  const std::string missing = (dir.path() / "no-such-repository.git").string();
  add_target("sm_80", "8.0");
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "ghost"}, {"url", missing}}, k_admin).status, 201);
  const std::string sha = commit_sha(5);
  ASSERT_EQ(post("/api/v1/commits", object{{"sha", sha}, {"repo", "ghost"}, {"message", "x"}}, k_admin).status, 201);
  auto p = post("/api/v1/pipelines",
                object{{"commit", sha}, {"repo", "ghost"}, {"targets", boost::json::array{"sm_80"}}}, k_admin);
  ASSERT_EQ(p.status, 201) << p.raw;
  auto jobs = get("/api/v1/jobs?commit=" + sha);
  ASSERT_EQ(jobs.body.at("items").as_array().size(), 1u) << jobs.raw;
  const auto id = jobs.body.at("items").as_array().at(0).at("id").to_number<std::int64_t>();
  start_runner();

  boost::json::object job;
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       std::chrono::steady_clock::now() < end;) {
    job = get("/api/v1/jobs/" + std::to_string(id)).body.as_object();
    if (job.at("status").as_string() == "failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(job.at("status").as_string(), "failed") << boost::json::serialize(job) << "\n" << runner_output();
  EXPECT_EQ(job.at("attempt").to_number<std::int64_t>(), 1) << "a missing repository is not worth a retry";
  const std::string why(job.at("failure_reason").as_string());
  EXPECT_NE(why.find("repository " + missing + " does not exist"), std::string::npos) << why;
  EXPECT_EQ(why.find("(attempt"), std::string::npos) << why;
  // Given time for a retry, none comes: the runner claimed it once.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const std::string out = runner_output();
  std::size_t claims = 0;
  for (auto at = out.find("claimed job"); at != std::string::npos; at = out.find("claimed job", at + 1)) ++claims;
  EXPECT_EQ(claims, 1u) << out;
}

}  // namespace
}  // namespace kport::testing
