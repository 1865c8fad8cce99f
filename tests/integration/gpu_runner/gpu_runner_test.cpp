// kport-runner --role gpu against the real coordinator, with a stand-in harness (the
// artifact a build uploads) that passes, fails numerics, segfaults, hangs, prints text
// that is not JSON and reports a kernel fault. The runner must turn each into a stored
// result, keep going, and fail the job with a reason that names them.
#include <sys/wait.h>

#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "build_runner/runner_fixture.h"
#include "kport/common/crypto.h"

namespace kport::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

class GpuRunnerTest : public BuildRunnerTest {
 protected:
  GpuRunnerTest() {
    max_attempts = 2;
    lease_seconds = 4;
  }
  void TearDown() override {
    ::unsetenv("KPORT_STAND_IN_SICK");
  }

  // Queues a pipeline for sm_90a and plays the build runner: the stand-in harness goes
  // up as the build's artifact. Returns the spawned check job's id.
  std::int64_t build_with_stand_in(const std::string& sha) {
    add_target("sm_90a", "9.0");
    auto p = start_pipeline(sha);
    std::string builder = register_runner("builder", "build");
    auto job = claim(builder, 2);
    EXPECT_TRUE(job.is_object());
    if (!job.is_object()) return 0;
    std::int64_t build_id = job.at("id").to_number<std::int64_t>();
    int attempt = static_cast<int>(job.at("attempt").to_number<std::int64_t>());
    std::ifstream in(KPORT_STAND_IN_HARNESS, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::string hash = crypto::sha256_hex(bytes.str());
    auto put = call_raw(client, "PUT", url("/api/v1/artifacts/" + hash + "?name=kport-harness-sm_90a&kind=harness"), bytes.str(),
                        builder, "application/octet-stream");
    EXPECT_EQ(put.status, 201) << put.raw;
    json::object rec{{"family", "gemm"}, {"variant", "good"}, {"status", "ok"}, {"artifact", hash}};
    auto b = post("/api/v1/jobs/" + std::to_string(build_id) + "/builds",
                  json::object{{"attempt", attempt}, {"records", json::array{rec}}}, builder);
    EXPECT_EQ(b.status, 200) << b.raw;
    auto done = post("/api/v1/jobs/" + std::to_string(build_id) + "/complete", json::object{{"attempt", attempt}}, builder);
    EXPECT_EQ(done.status, 200) << done.raw;
    auto pipeline = get("/api/v1/pipelines/" + std::to_string(p.at("id").as_int64()));
    for (const auto& j : pipeline.body.at("jobs").as_array())
      if (j.at("kind").as_string() == "check") return j.at("id").to_number<std::int64_t>();
    ADD_FAILURE() << "the build spawned no check job";
    return 0;
  }

  void start_gpu_runner(const std::string& name, const std::string& arch = "9.0") {
    fs::path inventory = dir.path() / "gpus.json";
    std::ofstream(inventory) << R"([{"index":0,"name":"NVIDIA H200","uuid":"GPU-0badc0de-0000-4000-8000-000000000001",)"
                             << R"("arch":")" << arch << R"(","sm_count":132,"memory_mib":143771,"driver":"580.95.05"}])";
    spawn_runner({KPORT_RUNNER_BIN, "--role", "gpu", "--server", url(""), "--registration-token", k_registration, "--workdir",
                  (dir.path() / ("work-" + name)).string(), "--name", name, "--gpus", inventory.string(), "--claim-wait", "1",
                  "--kernel-timeout", "1", "--process-timeout", "5", "--bench-time-cap-ms", "50"});
  }

  json::object wait_job(std::int64_t id, std::chrono::seconds limit, const std::string& want = "") {
    json::object job;
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      job = get("/api/v1/jobs/" + std::to_string(id)).body.as_object();
      std::string s(job.at("status").as_string());
      if (want.empty() ? (s == "succeeded" || s == "failed" || s == "cancelled") : s == want) return job;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "job " << id << " did not reach " << (want.empty() ? "an end" : want) << ": " << json::serialize(job)
                  << "\n" << runner_output();
    return job;
  }

  // Results of a commit keyed "instance shape".
  std::map<std::string, json::object> results_of(const std::string& sha) {
    std::map<std::string, json::object> out;
    auto page = get("/api/v1/results?commit=" + sha + "&limit=1000");
    for (const auto& r : page.body.at("items").as_array())
      out[std::string(r.at("instance").as_string()) + " " + std::string(r.at("shape").as_string())] = r.as_object();
    return out;
  }
};

const std::string k_small = "m=128,n=128,k=128", k_mid = "m=256,n=256,k=256", k_big = "m=512,n=512,k=512";

TEST_F(GpuRunnerTest, EveryFaultBecomesAResultAndTheRunnerGoesOn) {
  std::string sha = commit_sha(7);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  start_gpu_runner("gpu-host");
  auto job = wait_job(check, std::chrono::seconds(120));
  EXPECT_EQ(job.at("status").as_string(), "failed");
  std::string reason(job.at("failure_reason").as_string());
  EXPECT_NE(reason.find("gemm.crash.segv bf16 m=256,n=256,k=256: crashed"), std::string::npos) << reason;
  EXPECT_NE(reason.find("gemm.hang.sleep bf16 m=256,n=256,k=256: timeout"), std::string::npos) << reason;
  EXPECT_NE(reason.find("gemm.wrong.numerics bf16 m=256,n=256,k=256: failed"), std::string::npos) << reason;

  auto res = results_of(sha);
  ASSERT_EQ(res.size(), 18u) << runner_output();  // 6 instances x 3 shapes, every case stored
  // The good instance: passed and timed, with its environment.
  for (const auto& shape : {k_small, k_mid, k_big}) {
    const auto& r = res.at("gemm.good.steady " + shape);
    EXPECT_EQ(r.at("status").as_string(), "passed");
    EXPECT_GT(r.at("timing").at("median_us").to_number<double>(), 0.0);
    // Two bench rounds (the runner's default), each its own process of 20 samples.
    EXPECT_EQ(r.at("timing").at("samples").to_number<std::int64_t>(), 40);
    EXPECT_EQ(r.at("env").at("timing").at("rounds").as_array().size(), 2u) << json::serialize(r);
    EXPECT_EQ(r.at("timing").at("baseline").as_string(), "cpu loop");
    EXPECT_EQ(r.at("gpu_model").as_string(), "NVIDIA H200");
    EXPECT_EQ(r.at("driver").as_string(), "580.95.05");
    EXPECT_EQ(r.at("arch").as_string(), "9.0");
    EXPECT_EQ(r.at("toolkit").as_string(), "13.0");
    EXPECT_DOUBLE_EQ(r.at("sm_clock_mhz").to_number<double>(), 1975.0);
    EXPECT_TRUE(r.at("env").as_object().contains("clock_before")) << json::serialize(r);
  }
  // Numerics failure: stored with its errors, never timed.
  const auto& wrong = res.at("gemm.wrong.numerics " + k_mid);
  EXPECT_EQ(wrong.at("status").as_string(), "failed");
  EXPECT_NEAR(wrong.at("numerics").at("normwise_rel_err").to_number<double>(), 0.031, 1e-9);
  EXPECT_TRUE(wrong.at("timing").at("median_us").is_null());
  EXPECT_EQ(res.at("gemm.wrong.numerics " + k_big).at("status").as_string(), "passed");
  // A segfault costs only its case: the shapes after it ran in their own processes.
  EXPECT_EQ(res.at("gemm.crash.segv " + k_mid).at("status").as_string(), "crashed");
  EXPECT_NE(std::string(res.at("gemm.crash.segv " + k_mid).at("message").as_string()).find("signal 11"), std::string::npos);
  EXPECT_EQ(res.at("gemm.crash.segv " + k_small).at("status").as_string(), "passed");
  EXPECT_EQ(res.at("gemm.crash.segv " + k_big).at("status").as_string(), "passed");
  // A hang is killed at the limit and recorded as a timeout.
  EXPECT_EQ(res.at("gemm.hang.sleep " + k_mid).at("status").as_string(), "timeout");
  EXPECT_NE(std::string(res.at("gemm.hang.sleep " + k_mid).at("message").as_string()).find("killed after"), std::string::npos);
  EXPECT_EQ(res.at("gemm.hang.sleep " + k_big).at("status").as_string(), "passed");
  // Output that is not JSON is a crash, with what was printed.
  const auto& garbage = res.at("gemm.garbage.text " + k_small);
  EXPECT_EQ(garbage.at("status").as_string(), "crashed");
  EXPECT_NE(std::string(garbage.at("message").as_string()).find("no JSON report"), std::string::npos);
  // A kernel fault the harness reported itself keeps its reason.
  const auto& fault = res.at("gemm.fault.kernel " + k_mid);
  EXPECT_EQ(fault.at("status").as_string(), "crashed");
  EXPECT_NE(std::string(fault.at("message").as_string()).find("illegal memory access"), std::string::npos);
  EXPECT_EQ(res.at("gemm.fault.kernel " + k_big).at("status").as_string(), "passed");

  // The GPU was checked after each abnormal end, and the runner is still online.
  EXPECT_NE(runner_output().find("GPU healthy after"), std::string::npos);
  auto runners = get("/api/v1/runners").body;
  bool online = false;
  for (const auto& r : runners.at("items").as_array()) online |= r.at("name").as_string() == "gpu-host-gpu0";
  EXPECT_TRUE(online) << json::serialize(runners);

  // SIGTERM: exits 0 and deregisters.
  EXPECT_EQ(stop_runner(), 0) << runner_output();
  runners = get("/api/v1/runners").body;
  for (const auto& r : runners.at("items").as_array()) EXPECT_NE(r.at("name").as_string(), "gpu-host-gpu0");
}

TEST_F(GpuRunnerTest, SigtermFinishesTheJobInHandThenDeregisters) {
  std::string sha = commit_sha(10);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  start_gpu_runner("leaving");
  wait_job(check, std::chrono::seconds(60), "running");
  ::kill(runner_pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(runner_pid, &status, 0), runner_pid);
  runner_pid = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << runner_output();
  // The job was finished, not abandoned: its one attempt ended and every case is stored.
  auto job = get("/api/v1/jobs/" + std::to_string(check)).body.as_object();
  EXPECT_EQ(job.at("status").as_string(), "failed") << json::serialize(job);  // the stand-in's faults
  EXPECT_EQ(job.at("attempt").to_number<std::int64_t>(), 1);
  EXPECT_EQ(results_of(sha).size(), 18u);
  auto runners = get("/api/v1/runners").body;
  for (const auto& r : runners.at("items").as_array()) EXPECT_NE(r.at("name").as_string(), "leaving-gpu0");
}

TEST_F(GpuRunnerTest, AnUnhealthyGpuGivesTheJobBackAndTakesNoWorkUntilItAnswers) {
  fs::path sick = dir.path() / "gpu-sick";
  ::setenv("KPORT_STAND_IN_SICK", sick.c_str(), 1);
  std::string sha = commit_sha(8);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  start_gpu_runner("flaky");
  // The segfault leaves the GPU "sick": the attempt fails for retry and the job is queued again.
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(90); std::chrono::steady_clock::now() < end;) {
    if (runner_output().find("not taking work") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_NE(runner_output().find("not taking work"), std::string::npos) << runner_output();
  auto job = get("/api/v1/jobs/" + std::to_string(check)).body.as_object();
  EXPECT_EQ(job.at("status").as_string(), "queued") << json::serialize(job);
  EXPECT_NE(std::string(job.at("failure_reason").as_string()).find("health check"), std::string::npos) << json::serialize(job);
  // Healthy again: the runner takes the job back and runs it to its end (attempt 2).
  fs::remove(sick);
  job = wait_job(check, std::chrono::seconds(120));
  EXPECT_EQ(job.at("attempt").to_number<std::int64_t>(), 2);
  EXPECT_NE(runner_output().find("GPU answers again"), std::string::npos);
  EXPECT_EQ(results_of(sha).size(), 18u);
}

// Processes of this machine whose command line contains `needle` (read from /proc).
int processes_with(const std::string& needle) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmd, arg;
    while (std::getline(in, arg, '\0')) cmd += arg + ' ';  // arguments are NUL-separated
    if (cmd.find(needle) != std::string::npos) ++n;
  }
  return n;
}

TEST_F(GpuRunnerTest, AKilledRunnersJobComesBackByLeaseExpiryAndRunsElsewhere) {
  std::string sha = commit_sha(9);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  start_gpu_runner("doomed");
  wait_job(check, std::chrono::seconds(60), "running");
  // Let it get into the hang (the fourth instance), then kill it outright.
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60); std::chrono::steady_clock::now() < end;) {
    if (runner_output().find("gemm.hang.sleep") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string doomed_work = (dir.path() / "work-doomed" / "gpu0" / "harness").string();
  EXPECT_EQ(processes_with(doomed_work), 1) << "the hanging harness should be running";
  ::kill(runner_pid, SIGKILL);
  ::waitpid(runner_pid, nullptr, 0);
  runner_pid = -1;
  // Its hanging harness dies with it: nothing of a killed runner keeps the GPU busy.
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       processes_with(doomed_work) > 0 && std::chrono::steady_clock::now() < end;)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(processes_with(doomed_work), 0);
  auto stored_before = results_of(sha).size();
  EXPECT_GE(stored_before, 6u);  // what was acknowledged before the kill stays
  start_gpu_runner("rescuer");
  auto job = wait_job(check, std::chrono::seconds(120));
  EXPECT_EQ(job.at("status").as_string(), "failed");  // the stand-in's faults, not the kill
  EXPECT_EQ(job.at("attempt").to_number<std::int64_t>(), 2);
  EXPECT_EQ(results_of(sha).size(), 18u);
  // Both attempts' results of the good instance are kept: results are immutable.
  auto good = get("/api/v1/results?commit=" + sha + "&instance=gemm.good.steady&limit=100").body.at("items").as_array();
  EXPECT_EQ(good.size(), 6u);
}

// No artifact from the build: the GPU runner checks the commit out and builds the harness
// itself (real nvcc, the fixture kernels). The fixture's harness answers `device` without a
// GPU's compute capability, so the runner calls the GPU unusable and the attempt goes back
// to the queue with that reason.
TEST_F(GpuRunnerTest, WithoutAHarnessArtifactTheRunnerBuildsOne) {
  if (!nvcc_available()) GTEST_SKIP() << "no nvcc here: the runner's local build needs a CUDA toolkit";
  std::string sha = make_repository();
  add_target("sm_80", "8.0");
  ASSERT_EQ(post("/api/v1/repositories", json::object{{"name", "kernels"}, {"url", origin}}, k_admin).status, 201);
  auto p = post("/api/v1/pipelines", json::object{{"commit", sha}, {"repo", "kernels"}, {"targets", json::array{"sm_80"}}}, k_admin);
  ASSERT_EQ(p.status, 201) << p.raw;
  auto reg = post("/api/v1/runners/register",
                  json::object{{"name", "builder"}, {"role", "build"}, {"capabilities", json::object{{"targets", json::array{"sm_80"}}}}},
                  k_registration);
  ASSERT_EQ(reg.status, 201) << reg.raw;
  std::string builder(reg.body.at("token").as_string());
  auto job = claim(builder, 2);
  ASSERT_TRUE(job.is_object());
  std::string build_id = std::to_string(job.at("id").to_number<std::int64_t>());
  int attempt = static_cast<int>(job.at("attempt").to_number<std::int64_t>());
  json::object rec{{"family", "softmax"}, {"variant", "tiny"}, {"status", "ok"}};  // no artifact
  ASSERT_EQ(post("/api/v1/jobs/" + build_id + "/builds", json::object{{"attempt", attempt}, {"records", json::array{rec}}}, builder).status, 200);
  ASSERT_EQ(post("/api/v1/jobs/" + build_id + "/complete", json::object{{"attempt", attempt}}, builder).status, 200);
  std::int64_t check = 0;
  auto pipeline = get("/api/v1/pipelines/" + std::to_string(p.body.at("id").as_int64()));
  for (const auto& j : pipeline.body.at("jobs").as_array())
    if (j.at("kind").as_string() == "check") check = j.at("id").to_number<std::int64_t>();
  ASSERT_GT(check, 0);

  start_gpu_runner("builds-its-own", "8.0");
  json::object state;
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(400); std::chrono::steady_clock::now() < end;) {
    state = get("/api/v1/jobs/" + std::to_string(check)).body.as_object();
    std::string st(state.at("status").as_string());
    if ((st == "queued" && state.at("attempt").to_number<std::int64_t>() >= 1) || st == "failed" || st == "succeeded") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::string out = runner_output();
  EXPECT_NE(out.find("no harness artifact"), std::string::npos) << out;
  EXPECT_NE(out.find("building it here"), std::string::npos) << out;
  bool linked = false;
  for (const auto& e : fs::recursive_directory_iterator(dir.path() / "work-builds-its-own"))
    linked |= e.path().filename() == "kport-harness-sm_80";
  EXPECT_TRUE(linked) << out;
  ASSERT_EQ(state.at("status").as_string(), "queued") << json::serialize(state) << out;
  EXPECT_NE(std::string(state.at("failure_reason").as_string()).find("not usable"), std::string::npos) << json::serialize(state);
}

}  // namespace
}  // namespace kport::testing
