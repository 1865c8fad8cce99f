// The coordinator's Slurm dispatch, end to end. The first test starts a one-node Slurm
// (slurm_cluster.h) and lets the coordinator submit deploy/slurm/kport-runner.sbatch:
// the build runner that Slurm starts claims the waiting build job, builds it and
// leaves. The second puts stand-in sbatch/squeue programs behind the same options to
// show what is submitted, what is recovered from squeue and how failures back off.
#include <sys/stat.h>

#include <sstream>

#include "build_runner/runner_fixture.h"
#include "slurm_cluster.h"

namespace kport::testing {
namespace {

namespace fs = std::filesystem;
using boost::json::object;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_script(const fs::path& p, const std::string& body) {
  std::ofstream(p) << "#!/bin/sh\n" << body;
  fs::permissions(p, fs::perms::owner_all);
}

template <typename F>
bool eventually(F ready, int seconds) {
  for (int i = 0; i < seconds * 10; ++i) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

class SlurmDispatch : public BuildRunnerTest {
 protected:
  void SetUp() override {}  // each test starts the coordinator once its options are known

  boost::json::value slurm_state() { return get("/api/v1/queue").body.at("slurm"); }

  std::int64_t open_pipeline(const std::string& sha, const std::string& target) {
    auto p = post("/api/v1/pipelines", object{{"commit", sha}, {"repo", "kernels"}, {"targets", boost::json::array{target}}}, k_admin);
    EXPECT_EQ(p.status, 201) << p.raw;
    return p.status == 201 ? p.body.at("jobs").as_array()[0].at("id").as_int64() : 0;
  }
};

TEST_F(SlurmDispatch, ARunnerStartedThroughSbatchClaimsAndCompletesTheWaitingBuild) {
  if (auto missing = SlurmCluster::missing_programs(); !missing.empty())
    GTEST_SKIP() << "Slurm is not installed (missing " << missing << "; deploy/install-deps.sh installs slurm-wlm and munge)";
  if (std::system("git --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "the git CLI is needed to create the test repository";
  SlurmCluster slurm(dir.path());
  std::string why;
  ASSERT_TRUE(slurm.start(why)) << why;

  // What the runner job inherits through sbatch's default --export=ALL.
  ::setenv("KPORT_RUNNER_BIN", KPORT_RUNNER_BIN, 1);
  ::setenv("KPORT_RUNNER_WORKDIR", (dir.path() / "runner-work").c_str(), 1);
  ::setenv("KPORT_CLAIM_WAIT", "1", 1);
  ::setenv("KPORT_COMPILE_TIMEOUT", "300", 1);
  auto logs = dir.path() / "slurm-logs";
  extra_args = {"--slurm-partition", "kport", "--slurm-roles", "build", "--slurm-script", KPORT_SBATCH_SCRIPT,
                "--slurm-interval-ms", "300", "--slurm-max-jobs", "1", "--slurm-runner-max-jobs", "1",
                "--slurm-args", "--cpus-per-task=1", "--slurm-log-dir", logs.string()};
  start();

  std::string sha = make_repository();
  add_target("sm_80", "8.0");
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "kernels"}, {"url", origin}}, k_admin).status, 201);
  auto job = open_pipeline(sha, "sm_80");
  ASSERT_GT(job, 0);

  // No build runner is online: the dispatcher submits one runner job, and only one.
  std::string slurm_id;
  ASSERT_TRUE(eventually([&] {
    auto jobs = slurm_state().at("jobs").as_array();
    if (!jobs.empty()) slurm_id = std::string(jobs[0].at("id").as_string());
    return !jobs.empty();
  }, 30)) << slurm_state() << slurm.logs();
  EXPECT_EQ(slurm_state().at("jobs").as_array()[0].at("key").as_string(), "build");

  boost::json::value j;
  ASSERT_TRUE(eventually([&] {
    j = get("/api/v1/jobs/" + std::to_string(job)).body;
    std::string s(j.at("status").as_string());
    return s == "succeeded" || s == "failed";
  }, 300)) << j << "\n" << read_file(logs / ("kport-runner-" + slurm_id + ".out")) << slurm.logs();

  // The runner Slurm started did it: its name carries the Slurm job id.
  ASSERT_TRUE(j.at("runner").is_int64()) << j;
  auto runner = get("/api/v1/runners/" + std::to_string(j.at("runner").as_int64()));
  EXPECT_EQ(std::string(runner.body.at("name").as_string()).rfind("slurm-" + slurm_id + "-", 0), 0u) << runner.raw;
  EXPECT_EQ(runner.body.at("role").as_string(), "build");
  EXPECT_EQ(j.at("attempt").as_int64(), 1);
  auto log = call_raw(client, "GET", url("/api/v1/jobs/" + std::to_string(job) + "/log?format=text"), "");
  EXPECT_FALSE(log.raw.empty());
  if (nvcc_available()) {
    // The fixture tree has one variant that does not compile; the rest are recorded.
    EXPECT_EQ(j.at("status").as_string(), "failed") << j;
    EXPECT_EQ(records_of(job, "sm_80").size(), 4u) << read_file(logs / ("kport-runner-" + slurm_id + ".out"));
  }

  // After its one job (--slurm-runner-max-jobs 1) the runner leaves, Slurm ends the job,
  // and the dispatcher forgets it without counting a failure or submitting again.
  ASSERT_TRUE(eventually([&] { return slurm_state().at("jobs").as_array().empty(); }, 60)) << slurm_state();
  EXPECT_TRUE(slurm_state().at("backoff").as_object().empty()) << slurm_state();
  std::string out;
  run_to_exit(SlurmCluster::which("squeue"), {"--noheader", "--name=kport-runner"}, out);
  EXPECT_EQ(out, "");
  std::string runner_out = read_file(logs / ("kport-runner-" + slurm_id + ".out"));
  EXPECT_NE(runner_out.find("kport runner slurm-" + slurm_id), std::string::npos) << runner_out;
  EXPECT_EQ(runner_out.find(k_registration), std::string::npos) << "the token must not be printed";
}

TEST_F(SlurmDispatch, SubmitsWhatIsMissingRecoversFromSqueueAndBacksOff) {
  // Stand-ins with the command lines of sbatch and squeue: squeue prints squeue.txt,
  // sbatch records its arguments and environment and refuses like a wrong partition.
  auto calls = dir.path() / "sbatch.calls";
  write_script(dir.path() / "squeue", "cat " + (dir.path() / "squeue.txt").string() + "\n");
  write_script(dir.path() / "sbatch", "echo \"$* | $KPORT_RUNNER_ROLE | $KPORT_SERVER | $KPORT_REGISTRATION_TOKEN_FILE\" >> " +
                                          calls.string() + "\necho 'sbatch: error: invalid partition specified: gpu' >&2\nexit 1\n");
  // A runner job left by an earlier coordinator, and another user's job of the same name.
  std::ofstream(dir.path() / "squeue.txt") << "4242|PENDING|kport:gpu:9.0\n77|RUNNING|not ours\n";
  extra_args = {"--slurm-partition", "gpu", "--slurm-roles", "gpu", "--slurm-script", KPORT_SBATCH_SCRIPT,
                "--slurm-sbatch", (dir.path() / "sbatch").string(), "--slurm-squeue", (dir.path() / "squeue").string(),
                "--slurm-interval-ms", "150", "--slurm-backoff-ms", "600000", "--slurm-gpu-constraint", "sm{arch}"};
  start();
  add_target();
  auto builder = register_runner("builder-1", "build");
  auto finish_build = [&](int n) {
    start_pipeline(commit_sha(n));
    auto b = claim(builder);
    ASSERT_TRUE(b.is_object());
    auto done = post("/api/v1/jobs/" + std::to_string(b.at("id").as_int64()) + "/complete",
                     object{{"attempt", 1}, {"status", "succeeded"}}, builder);
    ASSERT_EQ(done.status, 200) << done.raw;
  };

  // One check awaits a 9.0 runner; the recovered pending job 4242 already serves it.
  finish_build(1);
  ASSERT_TRUE(eventually([&] { return get("/api/v1/queue").body.at("jobs").as_object().contains("awaiting_runner"); }, 5));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_FALSE(fs::exists(calls)) << read_file(calls);
  auto state = slurm_state();
  ASSERT_EQ(state.at("jobs").as_array().size(), 1u) << state;
  EXPECT_EQ(state.at("jobs").as_array()[0].at("id").as_string(), "4242");
  EXPECT_EQ(state.at("jobs").as_array()[0].at("key").as_string(), "gpu:9.0");

  // A second waiting check needs a second runner: one sbatch, refused, then backoff.
  finish_build(2);
  ASSERT_TRUE(eventually([&] { return fs::exists(calls); }, 5)) << slurm_state();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  std::string lines = read_file(calls);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 1) << lines;
  EXPECT_NE(lines.find("--partition=gpu"), std::string::npos) << lines;
  EXPECT_NE(lines.find("--comment=kport:gpu:9.0"), std::string::npos) << lines;
  EXPECT_NE(lines.find("--constraint=sm90"), std::string::npos) << lines;
  EXPECT_NE(lines.find(std::string(KPORT_SBATCH_SCRIPT) + " | gpu | " + url("")), std::string::npos) << lines;
  auto token_file = lines.substr(lines.rfind("| ") + 2);
  token_file.pop_back();
  EXPECT_EQ(read_file(token_file), k_registration + "\n");
  EXPECT_EQ(fs::status(token_file).permissions() & fs::perms::group_all, fs::perms::none);
  state = slurm_state();
  EXPECT_EQ(state.at("backoff").at("gpu:9.0").at("failures").as_int64(), 1) << state;
  EXPECT_NE(std::string(state.at("last_error").as_string()).find("invalid partition"), std::string::npos) << state;

  // Job 4242 leaves Slurm without its runner ever registering: one more failure.
  std::ofstream(dir.path() / "squeue.txt", std::ios::trunc) << "";
  ASSERT_TRUE(eventually([&] { return slurm_state().at("jobs").as_array().empty(); }, 5)) << slurm_state();
  state = slurm_state();
  EXPECT_EQ(state.at("backoff").at("gpu:9.0").at("failures").as_int64(), 2) << state;
  EXPECT_NE(std::string(state.at("last_error").as_string()).find("4242 ended before its runner registered"), std::string::npos)
      << state;
  lines = read_file(calls);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 1) << "backing off, nothing is submitted: " << lines;
}

TEST_F(SlurmDispatch, BadOptionsStopTheCoordinatorWithAReason) {
  std::string out;
  EXPECT_NE(run_to_exit(KPORT_COORDINATOR_BIN, {"--db", (dir.path() / "a.db").string(), "--listen", "127.0.0.1:0",
                                                "--slurm-partition", "gpu", "--slurm-roles", "gpu,tpu"}, out), 0);
  EXPECT_NE(out.find("'tpu' is not gpu or build"), std::string::npos) << out;
  EXPECT_NE(run_to_exit(KPORT_COORDINATOR_BIN, {"--db", (dir.path() / "b.db").string(), "--listen", "127.0.0.1:0",
                                                "--slurm-partition", "gpu", "--slurm-script", "/nonexistent.sbatch"}, out), 0);
  EXPECT_NE(out.find("/nonexistent.sbatch does not exist"), std::string::npos) << out;
}

}  // namespace
}  // namespace kport::testing
