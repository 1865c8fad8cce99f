// kport-runner --role gpu against the real coordinator, with a stand-in harness (the
// artifact a build uploads) that passes, fails numerics, segfaults, hangs, prints text
// that is not JSON and reports a kernel fault, and writes stray lines to stderr all along.
// The runner must turn each into a stored result, keep going, and fail the job with a
// reason that names them; figures whose bench rounds disagree are re-measured and stored
// as unstable when they still do; every result's repro command replays the runner's run.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "build_runner/runner_fixture.h"
#include "kport/common/crypto.h"
#include "kport/http/client.h"
#include "kport/http/server.h"

namespace kport::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class GpuRunnerTest : public BuildRunnerTest {
 protected:
  GpuRunnerTest() {
    max_attempts = 2;
    lease_seconds = 4;
  }
  void TearDown() override {
    for (const char* v :
         {"KPORT_STAND_IN_SICK", "KPORT_STAND_IN_SICK_GPU", "KPORT_STAND_IN_ONLY", "KPORT_STAND_IN_BENCH_MS",
          "KPORT_STAND_IN_CALLS", "KPORT_STAND_IN_EXTRA_SHAPE", "KPORT_STAND_IN_FAMILY_OF", "KPORT_STAND_IN_CHECK_MS",
          "KPORT_STAND_IN_SICK_BY", "KPORT_STAND_IN_SPANS"})
      ::unsetenv(v);
  }

  // Queues a pipeline for sm_90a and plays the build runner: the stand-in harness goes
  // up as the build's artifact. Returns the (first) spawned check job's id.
  // `harness_env`: the library's env its build records carry (kport.json `env`);
  // `variants`: the (family, variant) of each build record.
  std::int64_t build_with_stand_in(const std::string& sha, const json::object& harness_env = {},
                                   const std::vector<std::pair<std::string, std::string>>& variants = {
                                       {"gemm", "good"}}) {
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
    auto put = call_raw(client, "PUT",
                        url("/api/v1/artifacts/" + hash + "?name=kport-harness-sm_90a&kind=harness&job=" +
                            std::to_string(build_id) + "&attempt=" + std::to_string(attempt)),
                        bytes.str(), builder, "application/octet-stream");
    EXPECT_EQ(put.status, 201) << put.raw;
    json::array records;
    for (const auto& [family, variant] : variants) {
      json::object rec{{"family", family}, {"variant", variant}, {"status", "ok"}, {"artifact", hash}};
      if (!harness_env.empty()) rec["harness_env"] = harness_env;
      records.push_back(std::move(rec));
    }
    auto b = post("/api/v1/jobs/" + std::to_string(build_id) + "/builds",
                  json::object{{"attempt", attempt}, {"records", records}}, builder);
    EXPECT_EQ(b.status, 200) << b.raw;
    auto done =
        post("/api/v1/jobs/" + std::to_string(build_id) + "/complete", json::object{{"attempt", attempt}}, builder);
    EXPECT_EQ(done.status, 200) << done.raw;
    auto pipeline = get("/api/v1/pipelines/" + std::to_string(p.at("id").as_int64()));
    for (const auto& j : pipeline.body.at("jobs").as_array())
      if (j.at("kind").as_string() == "check") return j.at("id").to_number<std::int64_t>();
    ADD_FAILURE() << "the build spawned no check job";
    return 0;
  }

  // The UUID of GPU i of start_gpu_runner's inventory.
  static std::string gpu_uuid(int i) { return "GPU-0badc0de-0000-4000-8000-00000000000" + std::to_string(i + 1); }

  void start_gpu_runner(const std::string& name, const std::string& arch = "9.0",
                        const std::vector<std::string>& extra = {}, const std::string& server = "", int gpus = 1) {
    fs::path inventory = dir.path() / "gpus.json";
    std::ofstream list(inventory);
    list << "[";
    for (int i = 0; i < gpus; ++i)
      list << (i ? "," : "") << R"({"index":)" << i << R"(,"name":"NVIDIA H200","uuid":")" << gpu_uuid(i)
           << R"(","arch":")" << arch << R"(","sm_count":132,"memory_mib":143771,"driver":"580.95.05"})";
    list << "]";
    list.close();
    std::vector<std::string> args{KPORT_RUNNER_BIN,
                                  "--role",
                                  "gpu",
                                  "--server",
                                  server.empty() ? url("") : server,
                                  "--registration-token",
                                  k_registration,
                                  "--workdir",
                                  (dir.path() / ("work-" + name)).string(),
                                  "--name",
                                  name,
                                  "--gpus",
                                  inventory.string(),
                                  "--claim-wait",
                                  "1",
                                  "--kernel-timeout",
                                  "1",
                                  "--process-timeout",
                                  "5",
                                  "--bench-time-cap-ms",
                                  "50"};
    args.insert(args.end(), extra.begin(), extra.end());
    spawn_runner(std::move(args));
  }

  // Every attempt's log of job `id`, as the coordinator keeps it.
  std::string job_log(std::int64_t id) {
    std::string text;
    const auto answer = get("/api/v1/jobs/" + std::to_string(id) + "/log");
    if (const auto* chunks = answer.body.is_object() ? answer.body.as_object().if_contains("chunks") : nullptr)
      for (const auto& c : chunks->as_array()) text += std::string(c.at("text").as_string());
    return text;
  }

  json::object wait_job(std::int64_t id, std::chrono::seconds limit, const std::string& want = "") {
    json::object job;
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      job = get("/api/v1/jobs/" + std::to_string(id)).body.as_object();
      std::string s(job.at("status").as_string());
      if (want.empty() ? (s == "succeeded" || s == "failed" || s == "cancelled") : s == want) return job;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "job " << id << " did not reach " << (want.empty() ? "an end" : want) << ": "
                  << json::serialize(job) << "\n"
                  << runner_output();
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
    EXPECT_FALSE(r.at("timing").at("unstable").as_bool()) << json::serialize(r);  // steady rounds agree
  }
  // Screening: where instances compete (m=128 and m=512, which five instances pass), each
  // was timed briefly first; the others, 20 % slower there, keep their screen figure with
  // the baseline of the shape, and only the fastest was measured in precise rounds. At
  // m=256 only gemm.good.steady passed: nothing to screen against, measured precisely.
  for (const auto& shape : {k_small, k_big}) {
    const auto& fast = res.at("gemm.good.steady " + shape);
    EXPECT_EQ(fast.at("env").at("timing").at("precision").as_string(), "precise") << json::serialize(fast);
    EXPECT_TRUE(fast.at("env").at("timing").as_object().contains("screen")) << json::serialize(fast);
    for (const char* slower : {"gemm.wrong.numerics", "gemm.crash.segv", "gemm.hang.sleep", "gemm.fault.kernel"}) {
      const auto& r = res.at(std::string(slower) + " " + shape);
      ASSERT_EQ(r.at("status").as_string(), "passed") << json::serialize(r);
      EXPECT_EQ(r.at("env").at("timing").at("precision").as_string(), "screen") << json::serialize(r);
      EXPECT_FALSE(r.at("env").at("timing").as_object().contains("rounds")) << json::serialize(r);
      EXPECT_NEAR(r.at("timing").at("median_us").to_number<double>(),
                  1.2 * fast.at("timing").at("median_us").to_number<double>(), 1e-6);
      EXPECT_EQ(r.at("timing").at("baseline").as_string(), "cpu loop");
    }
  }
  EXPECT_EQ(res.at("gemm.good.steady " + k_mid).at("env").at("timing").at("precision").as_string(), "precise");
  EXPECT_FALSE(res.at("gemm.good.steady " + k_mid).at("env").at("timing").as_object().contains("screen"));
  EXPECT_NE(runner_output().find("screened"), std::string::npos) << runner_output();
  // Every harness process wrote stray lines to stderr, some shaped like JSON; the reports
  // were read from stdout regardless, and the stray lines went to the job log.
  EXPECT_NE(runner_output().find("stderr: {\"warning\":\"stand-in: lazy loading is off\"}"), std::string::npos);
  // Numerics failure: stored with its errors, never timed.
  const auto& wrong = res.at("gemm.wrong.numerics " + k_mid);
  EXPECT_EQ(wrong.at("status").as_string(), "failed");
  EXPECT_NEAR(wrong.at("numerics").at("normwise_rel_err").to_number<double>(), 0.031, 1e-9);
  EXPECT_TRUE(wrong.at("timing").at("median_us").is_null());
  EXPECT_EQ(res.at("gemm.wrong.numerics " + k_big).at("status").as_string(), "passed");
  // A segfault costs only its case: the shapes after it ran in their own processes.
  EXPECT_EQ(res.at("gemm.crash.segv " + k_mid).at("status").as_string(), "crashed");
  EXPECT_NE(std::string(res.at("gemm.crash.segv " + k_mid).at("message").as_string()).find("signal 11"),
            std::string::npos);
  EXPECT_EQ(res.at("gemm.crash.segv " + k_small).at("status").as_string(), "passed");
  EXPECT_EQ(res.at("gemm.crash.segv " + k_big).at("status").as_string(), "passed");
  // A hang is killed at the limit and recorded as a timeout.
  EXPECT_EQ(res.at("gemm.hang.sleep " + k_mid).at("status").as_string(), "timeout");
  EXPECT_NE(std::string(res.at("gemm.hang.sleep " + k_mid).at("message").as_string()).find("killed after"),
            std::string::npos);
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
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(90);
       std::chrono::steady_clock::now() < end;) {
    if (runner_output().find("not taking work") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_NE(runner_output().find("not taking work"), std::string::npos) << runner_output();
  auto job = get("/api/v1/jobs/" + std::to_string(check)).body.as_object();
  EXPECT_EQ(job.at("status").as_string(), "queued") << json::serialize(job);
  EXPECT_NE(std::string(job.at("failure_reason").as_string()).find("health check"), std::string::npos)
      << json::serialize(job);
  // Healthy again: the runner takes the job back and runs it to its end (attempt 2).
  fs::remove(sick);
  job = wait_job(check, std::chrono::seconds(120));
  EXPECT_EQ(job.at("attempt").to_number<std::int64_t>(), 2);
  EXPECT_NE(runner_output().find("GPU answers again"), std::string::npos);
  EXPECT_EQ(results_of(sha).size(), 18u);
}

// The same with the sick file named by the library's env: the runner's health check of
// that harness runs with the env too, so it keeps seeing the GPU sick while the file is
// there (without it, the check would find no sick file and take work at once).
TEST_F(GpuRunnerTest, TheHealthCheckOfALibrarysHarnessRunsWithItsEnvironment) {
  std::string sha = commit_sha(21);
  std::int64_t check = build_with_stand_in(sha, json::object{{"KPORT_STAND_IN_SICK", "{build_dir}/gpu-sick"}});
  ASSERT_GT(check, 0);
  start_gpu_runner("flaky-env");
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(90);
       std::chrono::steady_clock::now() < end;) {
    if (runner_output().find("not taking work") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_NE(runner_output().find("not taking work"), std::string::npos) << runner_output();
  const fs::path sick = dir.path() / "work-flaky-env" / "gpu0" / "harness" /
                        crypto::sha256_hex(slurp(KPORT_STAND_IN_HARNESS)) / "gpu-sick";
  ASSERT_TRUE(fs::exists(sick)) << runner_output();
  // Still sick a few health checks later: the job waits.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(get("/api/v1/jobs/" + std::to_string(check)).body.at("status").as_string(), "queued") << runner_output();
  EXPECT_EQ(runner_output().find("GPU answers again"), std::string::npos) << runner_output();
  fs::remove(sick);
  auto job = wait_job(check, std::chrono::seconds(120));
  EXPECT_EQ(job.at("attempt").to_number<std::int64_t>(), 2);
  EXPECT_NE(runner_output().find("GPU answers again"), std::string::npos);
}

// Only the steady instance, whose bench rounds measure what `medians` says, one line a round.
void steady_only_with_rounds(const fs::path& script, const std::string& medians) {
  std::ofstream(script) << medians;
  ::setenv("KPORT_STAND_IN_ONLY", "gemm.good.steady", 1);
  ::setenv("KPORT_STAND_IN_BENCH_MS", script.c_str(), 1);
}

bool have_curl() { return std::system("command -v curl > /dev/null 2>&1") == 0; }

TEST_F(GpuRunnerTest, RoundsThatStillDisagreeAfterReMeasuringAreStoredUnstable) {
  // Rounds of 4.50 and 0.43 ms, then two re-measures that agree with neither nor each other.
  steady_only_with_rounds(dir.path() / "rounds", "4.5\n0.43\n2.0\n1.0\n");
  std::string sha = commit_sha(11);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  start_gpu_runner("wobbly");
  auto job = wait_job(check, std::chrono::seconds(120));
  EXPECT_EQ(job.at("status").as_string(), "succeeded")
      << json::serialize(job);  // numerics passed; the figure is flagged
  auto res = results_of(sha);
  ASSERT_EQ(res.size(), 3u) << runner_output();
  for (const auto& [key, r] : res) {
    EXPECT_EQ(r.at("status").as_string(), "passed") << key;
    EXPECT_TRUE(r.at("timing").at("unstable").as_bool()) << json::serialize(r);
    // The spread holds the disagreement: about the sample stddev of 4.5, 0.43, 2 and 1 ms.
    EXPECT_NEAR(r.at("timing").at("stddev_us").to_number<double>(), 1800.0, 20.0) << json::serialize(r);
    EXPECT_EQ(r.at("env").at("timing").at("rounds").as_array().size(), 4u);  // two rounds and the two re-measures
    std::string message(r.at("message").as_string());
    EXPECT_NE(message.find("timing unstable"), std::string::npos) << message;
    EXPECT_NE(message.find("4.5, 0.43, 2, 1 ms"), std::string::npos) << message;
  }
  EXPECT_NE(runner_output().find("re-measuring, round 2 of at most 2"), std::string::npos) << runner_output();
  EXPECT_EQ(slurp(dir.path() / "rounds"), "");  // every scripted round was used, none more
}

TEST_F(GpuRunnerTest, AReMeasureThatSettlesTheRoundsStoresAStableFigure) {
  // 4.50 then 0.43 ms disagree; the re-measure says 0.431, siding with the second.
  steady_only_with_rounds(dir.path() / "rounds", "4.5\n0.43\n0.431\n");
  std::string sha = commit_sha(12);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  start_gpu_runner("settles");
  auto job = wait_job(check, std::chrono::seconds(120));
  EXPECT_EQ(job.at("status").as_string(), "succeeded") << json::serialize(job);
  auto res = results_of(sha);
  ASSERT_EQ(res.size(), 3u) << runner_output();
  for (const auto& [key, r] : res) {
    EXPECT_FALSE(r.at("timing").at("unstable").as_bool()) << json::serialize(r);
    EXPECT_NEAR(r.at("timing").at("median_us").to_number<double>(), 430.5, 1e-6) << json::serialize(r);
    const auto& rounds = r.at("env").at("timing").at("rounds").as_array();
    ASSERT_EQ(rounds.size(), 3u);
    EXPECT_TRUE(rounds[0].at("outlier").as_bool());                         // the 4.5 ms round
    EXPECT_EQ(r.at("timing").at("samples").to_number<std::int64_t>(), 40);  // the two rounds behind the figure
  }
  EXPECT_NE(runner_output().find("re-measuring, round 1 of at most 2"), std::string::npos);
  EXPECT_EQ(runner_output().find("re-measuring, round 2"), std::string::npos);  // settled: no further round
}

// The words of a command line the runner recorded as "| seeds ..." lines (KPORT_STAND_IN_CALLS).
struct Call {
  std::vector<std::string> args;
  std::vector<std::string> seeds;
};
std::vector<Call> calls_in(const std::string& text) {
  std::vector<Call> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    Call c;
    std::istringstream words(line);
    bool after_bar = false;
    for (std::string w; words >> w;) {
      if (w == "|")
        after_bar = true;
      else if (after_bar && w != "seeds")
        c.seeds.push_back(w);
      else if (!after_bar)
        c.args.push_back(w);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// The options after a command's selection and seed: what decides how it samples.
std::vector<std::string> flags_of(const std::vector<std::string>& args) {
  auto it = std::find(args.begin(), args.end(), "--timeout-s");
  return {it, args.end()};
}

TEST_F(GpuRunnerTest, ThePrintedReproduceCommandReplaysTheRunnersInputsAndFlags) {
  if (!have_curl()) GTEST_SKIP() << "no curl here: the printed command downloads the harness with curl";
  ::setenv("KPORT_STAND_IN_ONLY", "gemm.good.steady", 1);
  fs::path calls = dir.path() / "calls";
  ::setenv("KPORT_STAND_IN_CALLS", calls.c_str(), 1);
  std::string sha = commit_sha(13);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  // A base seed above 2^63: the one that used to be masked to 63 bits.
  const std::uint64_t base = 0xFEDCBA9876543210ull;
  start_gpu_runner("repro", "9.0", {"--seed", std::to_string(base), "--bench-l2-flush", "read"});
  auto job = wait_job(check, std::chrono::seconds(120));
  ASSERT_EQ(job.at("status").as_string(), "succeeded") << json::serialize(job) << runner_output();
  ::unsetenv("KPORT_STAND_IN_CALLS");

  // What the runner's own processes were given and used.
  auto runs = calls_in(slurp(calls));
  const Call* runner_check = nullptr;
  const Call* runner_bench = nullptr;
  for (const auto& c : runs) {
    // The runner's multi-case processes (--case lists); a screen would carry --no-baseline,
    // but a lone instance has no competitor, so every bench here is a precise round.
    const bool listed = std::find(c.args.begin(), c.args.end(), "--case") != c.args.end();
    const bool screen = std::find(c.args.begin(), c.args.end(), "--no-baseline") != c.args.end();
    if (listed && c.args[0] == "check") runner_check = &c;
    if (listed && c.args[0] == "bench" && !screen && !runner_bench) runner_bench = &c;
  }
  ASSERT_TRUE(runner_check && runner_bench) << slurp(calls);
  ASSERT_EQ(runner_check->seeds.size(), 3u);

  auto res = results_of(sha);
  const auto& stored = res.at("gemm.good.steady " + k_mid);
  auto one = get("/api/v1/results/" + std::to_string(stored.at("id").as_int64()));
  ASSERT_EQ(one.status, 200) << one.raw;
  const auto& result = one.body.as_object();
  // The full 64-bit seed, shown unsigned: the second case of the grid, base + golden * 2.
  const std::uint64_t case_seed = base + 0x9E3779B97F4A7C15ull * 2;
  EXPECT_EQ(json::serialize(result.at("numerics").at("seed")), std::to_string(case_seed));
  EXPECT_EQ(runner_check->seeds[1], std::to_string(case_seed));

  const auto& repro = result.at("reproduce").as_object();
  EXPECT_TRUE(repro.at("exact").as_bool()) << json::serialize(repro);
  std::string harness_sha = crypto::sha256_hex(slurp(KPORT_STAND_IN_HARNESS));
  EXPECT_EQ(repro.at("download_url").as_string(), url("/api/v1/artifacts/" + harness_sha));

  // Run each printed command as a user would, in an empty directory: it downloads the
  // very harness, makes it executable and runs the one case.
  for (const char* which : {"check", "bench"}) {
    SCOPED_TRACE(which);
    fs::path where = dir.path() / (std::string("replay-") + which);
    fs::create_directories(where);
    std::string command(repro.at(which).as_string());
    ASSERT_EQ(command.rfind("curl -fsSLo kport-harness-sm_90a ", 0), 0u) << command;
    std::string full = "cd '" + where.string() + "' && " + command + " > report.json 2> stderr.txt";
    ASSERT_EQ(std::system(full.c_str()), 0) << command << "\n" << slurp(where / "stderr.txt");
    EXPECT_EQ(crypto::sha256_hex(slurp(where / "kport-harness-sm_90a")), harness_sha);
    auto report = json::parse(slurp(where / "report.json")).as_object();
    const auto& entry = report.at("results").as_array().at(0).as_object();
    EXPECT_EQ(entry.at("shape_text").as_string(), k_mid);
    std::vector<std::string> printed_args;
    for (const auto& a : repro.at(std::string(which) + "_args").as_array()) printed_args.emplace_back(a.as_string());
    const Call& original = std::string(which) == "check" ? *runner_check : *runner_bench;
    if (std::string(which) == "check") {
      // The same inputs as the runner's check of this case.
      EXPECT_EQ(json::serialize(entry.at("seed")), runner_check->seeds[1]);
    } else {
      // The same inputs as the runner's bench rounds of this case.
      ASSERT_EQ(runner_bench->seeds.size(), 3u);
      EXPECT_EQ(json::serialize(entry.at("seed")), runner_bench->seeds[1]);
      EXPECT_EQ(std::string(report.at("settings").at("l2-flush").as_string()), "read");
    }
    // The same sampling flags, word for word.
    EXPECT_FALSE(flags_of(printed_args).empty());
    EXPECT_EQ(flags_of(printed_args), flags_of(original.args));
  }
}

// A shape a user asked kport to measure (POST /api/v1/best/requests): the runner checks and
// times exactly that case on every instance of the family, and /best then answers it as
// measured at that very shape.
// The library's kport.json env reaches every harness process the GPU runner starts, its
// placeholders expanded there: here it narrows the stand-in to its one good instance
// (list, check and bench all see it) and names the file each process records its call in.
TEST_F(GpuRunnerTest, TheLibrarysEnvironmentReachesTheHarnessProcessesOnTheGpuRunner) {
  std::string sha = commit_sha(17);
  const json::object library_env{{"KPORT_STAND_IN_ONLY", "gemm.good.steady"},
                                 {"KPORT_STAND_IN_CALLS", "{build_dir}/calls-{target}-{arch}"}};
  std::int64_t check = build_with_stand_in(sha, library_env);
  ASSERT_GT(check, 0);
  auto records = get("/api/v1/builds?commit=" + sha);
  ASSERT_EQ(records.status, 200) << records.raw;
  EXPECT_EQ(records.body.at("items").at(0).at("harness_env"), library_env) << records.raw;
  start_gpu_runner("with-env");
  auto job = wait_job(check, std::chrono::seconds(120));
  // Without the env, the stand-in's failing and crashing instances would fail the job.
  ASSERT_EQ(job.at("status").as_string(), "succeeded") << json::serialize(job) << runner_output();
  auto res = results_of(sha);
  ASSERT_FALSE(res.empty());
  for (const auto& [key, r] : res) EXPECT_EQ(r.at("instance").as_string(), "gemm.good.steady") << key;

  // {build_dir} is the folder the runner keeps the harness in; check and bench both ran with it.
  const std::string harness_sha = crypto::sha256_hex(slurp(KPORT_STAND_IN_HARNESS));
  const fs::path calls = dir.path() / "work-with-env" / "gpu0" / "harness" / harness_sha / "calls-sm_90a-90a";
  ASSERT_TRUE(fs::exists(calls)) << runner_output();
  auto runs = calls_in(slurp(calls));
  bool checked = false, timed = false;
  for (const auto& c : runs) {
    checked = checked || c.args.at(0) == "check";
    timed = timed || c.args.at(0) == "bench";
  }
  EXPECT_TRUE(checked && timed) << slurp(calls);
  EXPECT_NE(
      runner_output().find(
          "the library's environment for its harness (kport.json env): KPORT_STAND_IN_CALLS, KPORT_STAND_IN_ONLY"),
      std::string::npos)
      << runner_output();
  // A result's repro command runs the harness with the same env.
  auto one = get("/api/v1/results/" + std::to_string(res.begin()->second.at("id").as_int64()));
  ASSERT_EQ(one.status, 200) << one.raw;
  const std::string bench(one.body.at("reproduce").at("bench").as_string());
  EXPECT_NE(bench.find("KPORT_STAND_IN_ONLY=gemm.good.steady ./kport-harness-sm_90a bench"), std::string::npos)
      << bench;
}

// A harness whose grid holds a shape its family does not have (gemm without k): the
// coordinator refuses that result, naming it, and stores nothing of its batch; the
// runner sends the rest again, so every other figure is kept, and the job fails naming
// the refused case.
TEST_F(GpuRunnerTest, AResultWhoseShapeIsNotOfItsFamilyIsRefusedAndTheRestOfItsBatchKept) {
  ::setenv("KPORT_STAND_IN_ONLY", "gemm.good.steady", 1);
  ::setenv("KPORT_STAND_IN_EXTRA_SHAPE", "m=64,n=64", 1);
  std::string sha = commit_sha(19);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  start_gpu_runner("refused");
  auto job = wait_job(check, std::chrono::seconds(120));
  ASSERT_EQ(job.at("status").as_string(), "failed") << json::serialize(job) << runner_output();
  EXPECT_EQ(job.at("attempt").to_number<std::int64_t>(), 1) << "a wrong shape is the harness's: no retry";
  const std::string why(job.at("failure_reason").as_string());
  EXPECT_NE(why.find("1 result(s) refused by the coordinator, their shapes not of their family"), std::string::npos)
      << why;
  EXPECT_NE(why.find("gemm.good.steady bf16 m=64,n=64"), std::string::npos) << why;
  // Every case of the grid is stored, checked and timed; the refused one is not.
  auto res = results_of(sha);
  EXPECT_EQ(res.size(), 3u);
  for (const auto& shape : {k_small, k_mid, k_big}) {
    ASSERT_TRUE(res.count("gemm.good.steady " + shape)) << shape;
    EXPECT_EQ(res.at("gemm.good.steady " + shape).at("status").as_string(), "passed") << shape;
  }
  EXPECT_NE(runner_output().find("field 'results["), std::string::npos) << runner_output();
  EXPECT_NE(runner_output().find("].shape': 'm=64,n=64' is not a shape of gemm: shape has no 'k' (gemm shapes are "
                                 "m,n,k)"),
            std::string::npos)
      << runner_output();
}

TEST_F(GpuRunnerTest, AMeasureRequestIsCheckedAndTimedAtExactlyTheAskedShape) {
  ::setenv("KPORT_STAND_IN_ONLY", "gemm.good.steady", 1);
  fs::path calls = dir.path() / "calls";
  std::string sha = commit_sha(14);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  start_gpu_runner("asked");
  ASSERT_EQ(wait_job(check, std::chrono::seconds(120)).at("status").as_string(), "succeeded") << runner_output();
  const std::string asked = "m=384,n=384,k=384";
  auto before = get("/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=" + asked);
  ASSERT_EQ(before.status, 200) << before.raw;
  EXPECT_FALSE(before.body.at("exact_shape").as_bool()) << before.raw;
  ::setenv("KPORT_STAND_IN_CALLS", calls.c_str(), 1);
  auto req = post("/api/v1/best/requests",
                  json::object{{"gpu", "NVIDIA H200"}, {"op", "gemm"}, {"dtype", "bf16"}, {"shape", asked}}, k_admin);
  ASSERT_EQ(req.status, 201) << req.raw;
  const std::int64_t job_id = req.body.at("job").as_int64();
  ASSERT_EQ(wait_job(job_id, std::chrono::seconds(120)).at("status").as_string(), "succeeded") << runner_output();
  ::unsetenv("KPORT_STAND_IN_CALLS");
  // Only the asked case ran: one check and one bench process per round, each of that shape alone.
  for (const auto& c : calls_in(slurp(calls))) {
    if (c.args.empty() || (c.args[0] != "check" && c.args[0] != "bench")) continue;
    auto shape = std::find(c.args.begin(), c.args.end(), "--shape");
    ASSERT_NE(shape, c.args.end()) << "a lone case runs in the single-case form";
    EXPECT_EQ(*(shape + 1), asked);
  }
  int at_shape = 0;
  for (const auto& [key, r] : results_of(sha))
    if (r.at("shape").as_string() == asked) {
      ++at_shape;
      EXPECT_EQ(r.at("status").as_string(), "passed") << json::serialize(r);
      EXPECT_GT(r.at("timing").at("median_us").to_number<double>(), 0.0);
    }
  EXPECT_EQ(at_shape, 1);
  auto after = get("/api/v1/best?gpu=NVIDIA%20H200&op=gemm&dtype=bf16&shape=" + asked);
  ASSERT_EQ(after.status, 200) << after.raw;
  EXPECT_TRUE(after.body.at("exact_shape").as_bool()) << after.raw;
  auto state = get("/api/v1/best/requests/" + std::to_string(req.body.at("id").as_int64()));
  EXPECT_EQ(state.body.at("state").as_string(), "measured") << state.raw;
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

// Two GPUs in one runner process: a worker each, registered with its GPU's UUID, the two
// pipelines' check jobs taken one by each. A fault leaves only the second GPU sick (a
// segfault, or a hung kernel the runner kills at its timeout): its worker gives its job back
// and takes no more work, the first worker goes on, and the job given back runs to its end
// there (its second attempt, every result of it on the first GPU).
// The lease is longer than the fixture's: a healthy job's heartbeats, late by seconds on a
// loaded two-core machine, must not lose it (that is a second attempt the test does not
// count on), and the sick worker gives its job back without waiting for the lease.
class GpuRunnerSickGpu : public GpuRunnerTest, public ::testing::WithParamInterface<const char*> {
 protected:
  GpuRunnerSickGpu() { lease_seconds = 12; }
};

INSTANTIATE_TEST_SUITE_P(Faults, GpuRunnerSickGpu, ::testing::Values("gemm.crash.segv", "gemm.hang.sleep"),
                         [](const auto& fault) {
                           return std::string(fault.param) == "gemm.crash.segv" ? "Segfault" : "HungKernel";
                         });

TEST_P(GpuRunnerSickGpu, OfTwoGpusASickOneTakesOnlyItsOwnWorkerOutAndItsJobRunsOnTheOther) {
  ::setenv("KPORT_STAND_IN_SICK", (dir.path() / "gpu-sick").c_str(), 1);
  ::setenv("KPORT_STAND_IN_SICK_GPU", gpu_uuid(1).c_str(), 1);
  ::setenv("KPORT_STAND_IN_SICK_BY", GetParam(), 1);
  const std::string first = commit_sha(21), second = commit_sha(22);
  const std::int64_t a = build_with_stand_in(first), b = build_with_stand_in(second);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  start_gpu_runner("pair", "9.0", {}, "", 2);
  const auto job_a = wait_job(a, std::chrono::seconds(180)), job_b = wait_job(b, std::chrono::seconds(180));
  // Two workers, one per GPU, each with its own UUID.
  std::vector<std::string> uuids;
  const auto runners = get("/api/v1/runners");
  for (const auto& r : runners.body.at("items").as_array())
    if (r.at("role").as_string() == "gpu") uuids.emplace_back(r.at("capabilities").at("gpu_uuid").as_string());
  std::sort(uuids.begin(), uuids.end());
  EXPECT_EQ(uuids, (std::vector<std::string>{gpu_uuid(0), gpu_uuid(1)}));
  EXPECT_NE(runner_output().find("not taking work"), std::string::npos) << runner_output();
  // Both ended (failed by the stand-in's faults, as on one GPU); exactly one came back.
  for (const auto* job : {&job_a, &job_b}) EXPECT_EQ(job->at("status").as_string(), "failed") << json::serialize(*job);
  const auto attempts = job_a.at("attempt").to_number<std::int64_t>() + job_b.at("attempt").to_number<std::int64_t>();
  EXPECT_EQ(attempts, 3) << "one job given back by the sick GPU's worker, the other run once\n"
                         << json::serialize(job_a) << "\n"
                         << json::serialize(job_b);
  // Every result of a job's last attempt came from the healthy GPU; the sick one's are of a
  // first attempt only, and it took no job after.
  for (const auto& [sha, job] : {std::pair{first, &job_a}, std::pair{second, &job_b}}) {
    const auto last = job->at("attempt").to_number<std::int64_t>();
    int of_last = 0;
    const auto page = get("/api/v1/results?commit=" + sha + "&limit=1000");
    for (const auto& r : page.body.at("items").as_array()) {
      const std::string uuid(r.at("gpu_uuid").as_string());
      if (r.at("attempt").to_number<std::int64_t>() == last) {
        ++of_last;
        EXPECT_EQ(uuid, gpu_uuid(0)) << json::serialize(r);
      } else {
        EXPECT_EQ(uuid, gpu_uuid(1)) << json::serialize(r);
        EXPECT_EQ(r.at("attempt").to_number<std::int64_t>(), 1) << json::serialize(r);
      }
    }
    EXPECT_EQ(of_last, 18) << sha;
  }
  // What each attempt did and why it ended, from every side, when anything above failed.
  if (HasFailure())
    ADD_FAILURE() << "job " << a << ":\n"
                  << job_log(a) << "\njob " << b << ":\n"
                  << job_log(b) << "\nrunner:\n"
                  << runner_output() << "\ncoordinator:\n"
                  << proc->log();
}

// A check or bench process of the stand-in as KPORT_STAND_IN_SPANS recorded it: its GPU, its
// command and when it ran (end is absent for a process that died or was killed).
struct Span {
  std::string pid, gpu, command;
  long long start = 0;
  std::optional<long long> end;
};
std::vector<Span> spans_in(const std::string& text) {
  std::vector<Span> out;
  std::map<std::string, std::size_t> of_pid;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string kind, pid;
    words >> kind >> pid;
    if (kind == "start") {
      Span sp;
      sp.pid = pid;
      words >> sp.gpu >> sp.command >> sp.start;
      of_pid[pid] = out.size();
      out.push_back(std::move(sp));
    } else if (auto at = of_pid.find(pid); kind == "end" && at != of_pid.end()) {
      long long t = 0;
      words >> t;
      out[at->second].end = t;
    }
  }
  return out;
}

// One pipeline on a host of two GPUs: the build's check is split by family into two jobs
// (both GPUs were online when it was spawned), each GPU's worker takes one, checks and
// times only its shard's families, and together they cover the harness, each case once.
TEST_F(GpuRunnerTest, OnePipelinesCheckIsSplitByFamilyOverTwoGpus) {
  ::setenv("KPORT_STAND_IN_ONLY", "gemm.good.steady,gemm.wrong.numerics", 1);
  ::setenv("KPORT_STAND_IN_FAMILY_OF", "gemm.wrong.numerics:lite", 1);
  // Each check process takes 3 s, so neither worker can end its shard and take the
  // other's before that one's worker, woken by the same spawn, has claimed it.
  ::setenv("KPORT_STAND_IN_CHECK_MS", "3000", 1);
  const fs::path spans_file = dir.path() / "spans";
  ::setenv("KPORT_STAND_IN_SPANS", spans_file.c_str(), 1);
  add_target("sm_90a", "9.0");
  start_gpu_runner("pair", "9.0", {}, "", 2);
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);;) {
    int gpus = 0;
    const auto runners = get("/api/v1/runners");
    for (const auto& r : runners.body.at("items").as_array()) gpus += r.at("role").as_string() == "gpu";
    if (gpus == 2) break;
    ASSERT_LT(std::chrono::steady_clock::now(), end) << "two GPU workers never registered\n" << runner_output();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string sha = commit_sha(31);
  ASSERT_GT(build_with_stand_in(sha, {}, {{"gemm", "good"}, {"lite", "wrong"}}), 0);
  std::vector<std::int64_t> checks;
  const auto listed = get("/api/v1/jobs?commit=" + sha + "&kind=check");
  for (const auto& j : listed.body.at("items").as_array()) checks.push_back(j.at("id").to_number<std::int64_t>());
  ASSERT_EQ(checks.size(), 2u);
  std::map<std::string, std::string> family_gpu;  // family -> the GPU that ran its shard
  for (auto id : checks) {
    const auto job = wait_job(id, std::chrono::seconds(120));
    const auto& payload = job.at("payload").as_object();
    const auto shard = payload.at("shard").as_object();
    EXPECT_EQ(shard.at("count").to_number<std::int64_t>(), 2);
    // gemm and lite weigh one variant each: gemm (first by name) alone, lite the rest.
    const bool first = shard.at("index").to_number<std::int64_t>() == 0;
    EXPECT_EQ(json::serialize(payload.at(first ? "families" : "families_except")), R"(["gemm"])")
        << json::serialize(payload);
    // lite's instance fails its numerics at m=256 (the stand-in's fault): only its shard fails.
    EXPECT_EQ(job.at("status").as_string(), first ? "succeeded" : "failed") << json::serialize(job);
    const std::string log = job_log(id);
    EXPECT_NE(log.find(first ? "shard 1/2 of this arch's check, split over its GPUs by family: gemm\n"
                             : "shard 2/2 of this arch's check, split over its GPUs by family: lite\n"),
              std::string::npos)
        << log;
  }
  const auto res = results_of(sha);
  ASSERT_EQ(res.size(), 6u) << runner_output();  // two instances x three shapes, each once
  for (const auto& [key, r] : res) {
    const std::string family(r.at("family").as_string());
    const std::string uuid(r.at("gpu_uuid").as_string());
    EXPECT_EQ(family, key.starts_with("gemm.good") ? "gemm" : "lite") << key;
    auto [at, fresh] = family_gpu.emplace(family, uuid);
    EXPECT_EQ(at->second, uuid) << "a family's cases all ran on its shard's GPU: " << key;
  }
  ASSERT_EQ(family_gpu.size(), 2u);
  EXPECT_NE(family_gpu["gemm"], family_gpu["lite"]) << "the two shards ran on the two GPUs\n" << runner_output();
  // The harness processes of the two shards: the GPUs worked at once, and no case was timed
  // while another process ran on its GPU.
  const auto spans = spans_in(slurp(spans_file));
  std::set<std::string> gpus_timing;
  bool gpus_at_once = false;
  for (const auto& p : spans) {
    ASSERT_TRUE(p.end) << "process " << p.pid << " (" << p.command << " on " << p.gpu << ") never ended\n"
                       << slurp(spans_file);
    if (p.command == "bench") gpus_timing.insert(p.gpu);
    for (const auto& q : spans) {
      if (&p == &q || !q.end || q.start >= *p.end || p.start >= *q.end) continue;  // apart in time
      if (q.gpu != p.gpu) gpus_at_once = true;
      EXPECT_FALSE(p.command == "bench" && q.gpu == p.gpu) << "process " << q.pid << " (" << q.command << ") ran on "
                                                           << p.gpu << " while " << p.pid << " timed cases there\n"
                                                           << slurp(spans_file);
    }
  }
  EXPECT_EQ(gpus_timing, (std::set<std::string>{gpu_uuid(0), gpu_uuid(1)})) << slurp(spans_file);
  EXPECT_TRUE(gpus_at_once) << "the two GPUs' harness processes never ran at once\n" << slurp(spans_file);
  ::unsetenv("KPORT_STAND_IN_SPANS");  // the revalidation below is not judged on them

  // A revalidation of this GPU model (the fleet changed) checks that build again, split the
  // same way over the two GPUs: one part each, each pinned to the model.
  const auto opened =
      post("/api/v1/revalidations", json::object{{"gpu_model", "NVIDIA H200"}, {"driver", "580.95.05"}}, k_admin);
  ASSERT_EQ(opened.status, 201) << opened.raw;
  EXPECT_EQ(opened.body.at("jobs").to_number<std::int64_t>(), 2) << opened.raw;
  const auto pipeline =
      get("/api/v1/pipelines/" + std::to_string(opened.body.at("pipeline").to_number<std::int64_t>()));
  ASSERT_EQ(pipeline.status, 200) << pipeline.raw;
  std::set<std::string> runners;
  for (const auto& j : pipeline.body.at("jobs").as_array()) {
    const auto job = wait_job(j.at("id").to_number<std::int64_t>(), std::chrono::seconds(120));
    EXPECT_EQ(job.at("gpu_model").as_string(), "NVIDIA H200") << json::serialize(job);
    const auto& payload = job.at("payload").as_object();
    const bool first = payload.at("shard").at("index").to_number<std::int64_t>() == 0;
    EXPECT_EQ(json::serialize(payload.at(first ? "families" : "families_except")), R"(["gemm"])")
        << json::serialize(payload);
    EXPECT_EQ(job.at("status").as_string(), first ? "succeeded" : "failed") << json::serialize(job);
    runners.insert(json::serialize(job.at("runner")));
  }
  EXPECT_EQ(runners.size(), 2u) << "the revalidation's two parts ran on the two GPUs\n" << runner_output();
}

// Two runner processes given one GPU (two services on a host, or a copy started by
// mistake): the second does not register while the first holds the GPU's lock, and says
// who holds it; once the first has ended, the second registers and runs the job.
TEST_F(GpuRunnerTest, ASecondRunnerProcessOfTheSameGpuWaitsUntilTheFirstEnds) {
  ::setenv("KPORT_STAND_IN_ONLY", "gemm.good.steady", 1);
  add_target("sm_90a", "9.0");
  start_gpu_runner("first");
  const pid_t first = runner_pid;
  auto gpu_runners = [&] {
    std::vector<std::string> names;
    const auto runners = get("/api/v1/runners");
    for (const auto& r : runners.body.at("items").as_array())
      if (r.at("role").as_string() == "gpu") names.emplace_back(r.at("name").as_string());
    return names;
  };
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30); gpu_runners().empty();) {
    ASSERT_LT(std::chrono::steady_clock::now(), end) << runner_output();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // The second: the same inventory, and the lock directory the fixture gives every runner.
  const fs::path second_log = dir.path() / "second.log";
  std::vector<std::string> args{KPORT_RUNNER_BIN,
                                "--role",
                                "gpu",
                                "--server",
                                url(""),
                                "--registration-token",
                                k_registration,
                                "--workdir",
                                (dir.path() / "work-second").string(),
                                "--name",
                                "second",
                                "--gpus",
                                (dir.path() / "gpus.json").string(),
                                "--claim-wait",
                                "1"};
  const pid_t second = spawn_process(args, second_log);
  ASSERT_GT(second, 0);
  struct Reap {
    pid_t pid;
    ~Reap() {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
    }
  } reap{second};
  const std::string held = "GPU " + gpu_uuid(0) + " is in use by another kport-runner on this host (pid " +
                           std::to_string(first) + ", runner first-gpu0, host ";
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       slurp(second_log).find(held) == std::string::npos;) {
    ASSERT_LT(std::chrono::steady_clock::now(), end) << slurp(second_log);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(gpu_runners(), std::vector<std::string>{"first-gpu0"}) << "the waiting one is not registered";
  // The first ends (deregistering, its lock gone with it); the second takes the GPU.
  EXPECT_EQ(stop_runner(), 0);
  const std::int64_t check = build_with_stand_in(commit_sha(41));
  ASSERT_GT(check, 0);
  const auto job = wait_job(check, std::chrono::seconds(60));
  EXPECT_EQ(job.at("status").as_string(), "succeeded") << json::serialize(job) << "\n" << slurp(second_log);
  EXPECT_EQ(gpu_runners(), std::vector<std::string>{"second-gpu0"}) << slurp(second_log);
}

TEST_F(GpuRunnerTest, AKilledRunnersJobComesBackByLeaseExpiryAndRunsElsewhere) {
  std::string sha = commit_sha(9);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  // One instance checked at a time, so the hanging harness is the only one running when killed;
  // a kernel timeout far beyond the test's look at it, which a loaded machine may delay past
  // the fixture's 1 s (the test kills the runner itself).
  start_gpu_runner("doomed", "9.0", {"--check-parallel", "1", "--kernel-timeout", "60", "--process-timeout", "120"});
  wait_job(check, std::chrono::seconds(60), "running");
  // Let it get into the hang (the fourth instance), then kill it outright.
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       std::chrono::steady_clock::now() < end;) {
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
  // What was acknowledged before the kill stays: the cases that did not pass their check
  // go up as soon as each instance is checked (wrong.numerics and crash.segv at m=256);
  // passed cases go up once timed, after every instance was checked.
  auto stored_before = results_of(sha).size();
  EXPECT_GE(stored_before, 2u);
  start_gpu_runner("rescuer");
  auto job = wait_job(check, std::chrono::seconds(120));
  EXPECT_EQ(job.at("status").as_string(), "failed");  // the stand-in's faults, not the kill
  EXPECT_EQ(job.at("attempt").to_number<std::int64_t>(), 2);
  EXPECT_EQ(results_of(sha).size(), 18u);
  // Both attempts' results are kept, results being immutable: the first attempt's failure of
  // gemm.wrong.numerics beside the second attempt's three cases.
  auto wrong =
      get("/api/v1/results?commit=" + sha + "&instance=gemm.wrong.numerics&limit=100").body.at("items").as_array();
  EXPECT_EQ(wrong.size(), 4u);
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
  auto p = post("/api/v1/pipelines",
                json::object{{"commit", sha}, {"repo", "kernels"}, {"targets", json::array{"sm_80"}}}, k_admin);
  ASSERT_EQ(p.status, 201) << p.raw;
  auto reg = post(
      "/api/v1/runners/register",
      json::object{
          {"name", "builder"}, {"role", "build"}, {"capabilities", json::object{{"targets", json::array{"sm_80"}}}}},
      k_registration);
  ASSERT_EQ(reg.status, 201) << reg.raw;
  std::string builder(reg.body.at("token").as_string());
  auto job = claim(builder, 2);
  ASSERT_TRUE(job.is_object());
  std::string build_id = std::to_string(job.at("id").to_number<std::int64_t>());
  int attempt = static_cast<int>(job.at("attempt").to_number<std::int64_t>());
  json::object rec{{"family", "softmax"}, {"variant", "tiny"}, {"status", "ok"}};  // no artifact
  ASSERT_EQ(post("/api/v1/jobs/" + build_id + "/builds",
                 json::object{{"attempt", attempt}, {"records", json::array{rec}}}, builder)
                .status,
            200);
  ASSERT_EQ(post("/api/v1/jobs/" + build_id + "/complete", json::object{{"attempt", attempt}}, builder).status, 200);
  std::int64_t check = 0;
  auto pipeline = get("/api/v1/pipelines/" + std::to_string(p.body.at("id").as_int64()));
  for (const auto& j : pipeline.body.at("jobs").as_array())
    if (j.at("kind").as_string() == "check") check = j.at("id").to_number<std::int64_t>();
  ASSERT_GT(check, 0);

  start_gpu_runner("builds-its-own", "8.0");
  json::object state;
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(400);
       std::chrono::steady_clock::now() < end;) {
    state = get("/api/v1/jobs/" + std::to_string(check)).body.as_object();
    std::string st(state.at("status").as_string());
    if ((st == "queued" && state.at("attempt").to_number<std::int64_t>() >= 1) || st == "failed" || st == "succeeded")
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::string out = runner_output();
  EXPECT_NE(out.find("no harness artifact"), std::string::npos) << out;
  EXPECT_NE(out.find("building it here"), std::string::npos) << out;
  fs::path linked;
  for (const auto& e : fs::recursive_directory_iterator(dir.path() / "work-builds-its-own"))
    if (e.path().filename() == "kport-harness-sm_80") linked = e.path();
  ASSERT_FALSE(linked.empty()) << out;
  // Uploaded, so the repro commands of its results can download it.
  EXPECT_NE(out.find("uploaded the locally built harness"), std::string::npos) << out;
  EXPECT_EQ(get("/api/v1/artifacts/" + crypto::sha256_hex(slurp(linked)) + "?meta=1").status, 200);
  ASSERT_EQ(state.at("status").as_string(), "queued") << json::serialize(state) << out;
  EXPECT_NE(std::string(state.at("failure_reason").as_string()).find("not usable"), std::string::npos)
      << json::serialize(state);
}

// A proxy in front of the real coordinator, as a runner often has one: it forwards
// every request, except that it answers the first `html_beats` heartbeats of a job
// itself with a 200 HTML page (what nginx or a captive portal sends when the upstream
// hiccups), and answers the first `lost_uploads` result batches with a 503 after the
// coordinator has stored them (an answer lost on its way back).
class FaultProxy {
 public:
  FaultProxy(std::string upstream, int html_beats, int lost_uploads = 0)
      : m_upstream(std::move(upstream)), m_html_left(html_beats), m_lost_left(lost_uploads) {
    auto router = std::make_shared<http::Router>();
    for (const char* method : {"GET", "POST", "PUT", "DELETE"})
      router->add_sync(method, "/{path...}", [this](const http::Request& req) { return forward(req); });
    m_server = std::make_unique<http::Server>(http::ServerOptions{}, router);
    m_ok = m_server->start().ok();
  }
  ~FaultProxy() { m_server->stop(); }
  bool ok() const { return m_ok; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_server->port()); }
  int html_sent() const { return m_html_sent; }
  int beats_forwarded() const { return m_forwarded; }
  int uploads_lost() const { return m_lost_sent; }

 private:
  http::Response forward(const http::Request& req) {
    const bool beat = req.path == "/api/v1/runners/heartbeat";
    if (beat && json::parse(req.body).as_object().contains("job")) {
      if (m_html_left.fetch_sub(1) > 0) {
        ++m_html_sent;
        return http::text_response(200, "<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>", "text/html");
      }
      ++m_forwarded;
    }
    http::HeaderList headers;
    for (const char* h : {"Authorization", "Content-Type"})
      if (auto v = req.header(h); !v.empty()) headers.emplace_back(h, std::string(v));
    auto r = http::fetch(req.method, m_upstream + req.target, req.body, headers, std::chrono::milliseconds(60'000));
    if (!r.ok()) return http::text_response(502, "upstream: " + r.error().message, "text/plain");
    if (req.method == "POST" && req.path.ends_with("/results") && r->status == 200 && m_lost_left.fetch_sub(1) > 0) {
      ++m_lost_sent;
      return http::text_response(503, "<html><body><h1>503 Service Unavailable</h1></body></html>", "text/html");
    }
    std::string type(r->header("Content-Type"));
    return http::text_response(r->status, r->body, type.empty() ? "application/json" : type);
  }

  std::string m_upstream;
  std::atomic<int> m_html_left, m_lost_left, m_html_sent{0}, m_forwarded{0}, m_lost_sent{0};
  std::unique_ptr<http::Server> m_server;
  bool m_ok = false;
};

// Issue 14, item 1: a 200 HTML heartbeat answer mid-job (what a proxy sends) aborted
// the runner. Now it is logged, the next beat goes out as usual, and the job in hand
// runs to its end with every result stored.
TEST_F(GpuRunnerTest, A200HtmlHeartbeatAnswerMidJobIsLoggedAndTheJobStillFinishes) {
  std::string sha = commit_sha(8);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  FaultProxy proxy(url(""), 1);
  ASSERT_TRUE(proxy.ok());
  start_gpu_runner("gpu-behind-proxy", "9.0", {}, proxy.url());
  auto job = wait_job(check, std::chrono::seconds(120));
  // The job ran to its end on its first attempt (the faults of the stand-in harness
  // fail it, with their reasons): its lease was never lost.
  EXPECT_EQ(job.at("status").as_string(), "failed") << json::serialize(job);
  EXPECT_EQ(job.at("attempt").to_number<std::int64_t>(), 1) << json::serialize(job);
  EXPECT_NE(std::string(job.at("failure_reason").as_string()).find("gemm.crash.segv"), std::string::npos)
      << json::serialize(job);
  EXPECT_EQ(results_of(sha).size(), 18u) << runner_output();
  EXPECT_EQ(proxy.html_sent(), 1);
  EXPECT_GE(proxy.beats_forwarded(), 1) << "the runner did not heartbeat again after the HTML answer\n"
                                        << runner_output();
  const std::string out = runner_output();
  EXPECT_NE(out.find("heartbeat failed; the lease holds until it expires"), std::string::npos) << out;
  EXPECT_NE(out.find("502 Bad Gateway"), std::string::npos) << "the log must say what came back\n" << out;
  EXPECT_EQ(out.find("lease lost"), std::string::npos) << out;
  // Still up, waiting for its next job.
  int status = 0;
  EXPECT_EQ(::waitpid(runner_pid, &status, WNOHANG), 0) << "the runner ended (status " << status << ")\n" << out;
}

// A batch of results whose answer is lost (the coordinator stored it, the proxy answered
// 503) is sent again, and the coordinator stores each result once: the job ends on its first
// attempt with every result, where before it went back to the queue with the attempt's
// results and its time lost.
TEST_F(GpuRunnerTest, AResultBatchWhoseAnswerIsLostIsSentAgainAndStoredOnce) {
  std::string sha = commit_sha(9);
  std::int64_t check = build_with_stand_in(sha);
  ASSERT_GT(check, 0);
  FaultProxy proxy(url(""), 0, 1);
  ASSERT_TRUE(proxy.ok());
  start_gpu_runner("gpu-lossy-proxy", "9.0", {}, proxy.url());
  auto job = wait_job(check, std::chrono::seconds(120));
  EXPECT_EQ(job.at("status").as_string(), "failed") << json::serialize(job);  // the stand-in's faults
  EXPECT_EQ(job.at("attempt").to_number<std::int64_t>(), 1) << json::serialize(job) << runner_output();
  EXPECT_EQ(proxy.uploads_lost(), 1);
  const auto page = get("/api/v1/results?commit=" + sha + "&limit=1000");
  ASSERT_EQ(page.status, 200) << page.raw;
  EXPECT_EQ(page.body.at("items").as_array().size(), 18u) << runner_output();  // each case once
  EXPECT_NE(runner_output().find("the upload was not answered; sending it again"), std::string::npos)
      << runner_output();
}

}  // namespace
}  // namespace kport::testing
