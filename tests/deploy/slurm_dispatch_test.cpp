// The coordinator's Slurm dispatch, end to end. The first test starts a one-node Slurm
// (slurm_cluster.h) and lets the coordinator submit deploy/slurm/kport-runner.sbatch:
// the build runner that Slurm starts claims the waiting build job, builds it and
// leaves. The others put stand-in sbatch/squeue programs behind the same options to
// show what is submitted, what is recovered from squeue, the bound, and the backoff.
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
    auto p = post("/api/v1/pipelines",
                  object{{"commit", sha}, {"repo", "kernels"}, {"targets", boost::json::array{target}}}, k_admin);
    EXPECT_EQ(p.status, 201) << p.raw;
    return p.status == 201 ? p.body.at("jobs").as_array()[0].at("id").as_int64() : 0;
  }
};

TEST_F(SlurmDispatch, ARunnerStartedThroughSbatchClaimsAndCompletesTheWaitingBuild) {
  if (auto missing = SlurmCluster::missing_programs(); !missing.empty())
    GTEST_SKIP() << "Slurm is not installed (missing " << missing
                 << "; deploy/install-deps.sh installs slurm-wlm and munge)";
  if (std::system("git --version > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "the git CLI is needed to create the test repository";
  SlurmCluster slurm(dir.path());
  std::string why;
  ASSERT_TRUE(slurm.start(why)) << why;

  // What the runner job inherits through sbatch's default --export=ALL.
  ::setenv("KPORT_RUNNER_BIN", KPORT_RUNNER_BIN, 1);
  ::setenv("KPORT_RUNNER_WORKDIR", (dir.path() / "runner-work").c_str(), 1);
  ::setenv("KPORT_CLAIM_WAIT", "1", 1);
  ::setenv("KPORT_COMPILE_TIMEOUT", "300", 1);
  auto logs = dir.path() / "slurm-logs";
  extra_args = {"--slurm-partition",
                "kport",
                "--slurm-roles",
                "build",
                "--slurm-script",
                KPORT_SBATCH_SCRIPT,
                "--slurm-interval-ms",
                "300",
                "--slurm-max-jobs",
                "1",
                "--slurm-runner-max-jobs",
                "1",
                "--slurm-args",
                "--cpus-per-task=1",
                "--slurm-log-dir",
                logs.string()};
  start();

  std::string sha = make_repository();
  add_target("sm_80", "8.0");
  ASSERT_EQ(post("/api/v1/repositories", object{{"name", "kernels"}, {"url", origin}}, k_admin).status, 201);
  auto job = open_pipeline(sha, "sm_80");
  ASSERT_GT(job, 0);

  // No build runner is online: the dispatcher submits one runner job, and only one.
  std::string slurm_id;
  ASSERT_TRUE(eventually(
      [&] {
        auto jobs = slurm_state().at("jobs").as_array();
        if (!jobs.empty()) slurm_id = std::string(jobs[0].at("id").as_string());
        return !jobs.empty();
      },
      30))
      << slurm_state() << slurm.logs();
  EXPECT_EQ(slurm_state().at("jobs").as_array()[0].at("key").as_string(), "build");

  boost::json::value j;
  ASSERT_TRUE(eventually(
      [&] {
        j = get("/api/v1/jobs/" + std::to_string(job)).body;
        std::string s(j.at("status").as_string());
        return s == "succeeded" || s == "failed";
      },
      300))
      << j << "\n"
      << read_file(logs / ("kport-runner-" + slurm_id + ".out")) << slurm.logs();

  // The runner Slurm started did it: its name carries the Slurm job id.
  ASSERT_TRUE(j.at("runner").is_int64()) << j;
  auto runner = get("/api/v1/runners/" + std::to_string(j.at("runner").as_int64()));
  EXPECT_EQ(std::string(runner.body.at("name").as_string()).rfind("slurm-" + slurm_id + "-", 0), 0u) << runner.raw;
  EXPECT_EQ(runner.body.at("role").as_string(), "build");
  EXPECT_EQ(j.at("attempt").as_int64(), 1);
  auto log = call_raw(client, "GET", url("/api/v1/jobs/" + std::to_string(job) + "/log?format=text"), "");
  EXPECT_FALSE(log.raw.empty());
  if (nvcc_available()) {
    // The fixture tree has one variant that does not compile: it is recorded as such, and
    // the job completes with the harness of the variants that built.
    EXPECT_EQ(j.at("status").as_string(), "succeeded") << j;
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

// Stand-ins with the command lines of sbatch and squeue. squeue prints squeue.txt;
// sbatch records its arguments and environment in sbatch.calls, then either refuses
// like a wrong partition (when the file "refuse" exists) or queues a pending job.
class SlurmStandIns : public SlurmDispatch {
 protected:
  void start_with_stand_ins(const std::string& backoff_ms) {
    auto d = dir.path().string();
    write_script(dir.path() / "squeue", "cat " + d + "/squeue.txt\n");
    write_script(dir.path() / "sbatch",
                 "echo \"$* | $KPORT_RUNNER_ROLE | $KPORT_SERVER | $KPORT_REGISTRATION_TOKEN_FILE\" >> " + d +
                     "/sbatch.calls\n"
                     "if [ -e " +
                     d +
                     "/refuse ]; then echo 'sbatch: error: invalid partition specified: gpu' >&2; exit 1; fi\n"
                     "id=$((5000 + $(wc -l < " +
                     d +
                     "/sbatch.calls)))\n"
                     "for a in \"$@\"; do case $a in --comment=*) c=${a#--comment=};; esac; done\n"
                     "echo \"$id|PENDING|$c\" >> " +
                     d + "/squeue.txt\necho \"$id;cluster\"\n");
    extra_args = {"--slurm-partition",      "gpu",
                  "--slurm-roles",          "gpu",
                  "--slurm-script",         KPORT_SBATCH_SCRIPT,
                  "--slurm-sbatch",         d + "/sbatch",
                  "--slurm-squeue",         d + "/squeue",
                  "--slurm-interval-ms",    "150",
                  "--slurm-backoff-ms",     backoff_ms,
                  "--slurm-max-jobs",       "2",
                  "--slurm-gpu-constraint", "sm{arch}"};
    start();
    add_target();
    builder = register_runner("builder-1", "build");
  }
  // A build that succeeds, so one check job of arch 9.0 waits for a GPU runner.
  void finish_build(int n) {
    start_pipeline(commit_sha(n));
    auto b = claim(builder);
    ASSERT_TRUE(b.is_object());
    auto done = post("/api/v1/jobs/" + std::to_string(b.at("id").as_int64()) + "/complete",
                     object{{"attempt", 1}, {"status", "succeeded"}}, builder);
    ASSERT_EQ(done.status, 200) << done.raw;
  }
  std::int64_t awaiting() {
    auto jobs = get("/api/v1/queue").body.at("jobs").as_object();
    return jobs.contains("awaiting_runner") ? jobs.at("awaiting_runner").as_int64() : 0;
  }
  std::vector<std::string> calls() {
    std::vector<std::string> out;
    std::istringstream in(read_file(dir.path() / "sbatch.calls"));
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::string builder;
};

TEST_F(SlurmStandIns, RecoversItsJobsFromSqueueAndSubmitsOnlyWhatIsMissingUpToTheBound) {
  // A runner job left by an earlier coordinator, and another user's job of the same name.
  std::ofstream(dir.path() / "squeue.txt") << "4242|PENDING|kport:gpu:9.0\n77|RUNNING|not ours\n";
  start_with_stand_ins("600000");

  // One check awaits a 9.0 runner; the recovered pending job 4242 already serves it.
  finish_build(1);
  ASSERT_TRUE(eventually([&] { return awaiting() == 1; }, 5));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_TRUE(calls().empty()) << read_file(dir.path() / "sbatch.calls");
  auto state = slurm_state();
  ASSERT_EQ(state.at("jobs").as_array().size(), 1u) << state;
  EXPECT_EQ(state.at("jobs").as_array()[0].at("id").as_string(), "4242");
  EXPECT_EQ(state.at("jobs").as_array()[0].at("key").as_string(), "gpu:9.0");

  // Three checks wait, but --slurm-max-jobs 2 allows one more runner job only.
  finish_build(2);
  finish_build(3);
  ASSERT_TRUE(eventually([&] { return awaiting() == 3 && !calls().empty(); }, 5)) << slurm_state();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  auto lines = calls();
  ASSERT_EQ(lines.size(), 1u) << read_file(dir.path() / "sbatch.calls");
  EXPECT_NE(lines[0].find("--partition=gpu"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("--comment=kport:gpu:9.0"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("--constraint=sm90"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("--gres=none"), std::string::npos) << "a GPU runner keeps the script's --gres=gpu:1";
  EXPECT_NE(lines[0].find(std::string(KPORT_SBATCH_SCRIPT) + " | gpu | " + url("")), std::string::npos) << lines[0];
  std::string token_file = lines[0].substr(lines[0].rfind("| ") + 2);
  EXPECT_EQ(read_file(token_file), k_registration + "\n");
  EXPECT_EQ(fs::status(token_file).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
  state = slurm_state();
  ASSERT_EQ(state.at("jobs").as_array().size(), 2u) << state;
  EXPECT_EQ(state.at("jobs").as_array()[1].at("id").as_string(), "5001");  // "5001;cluster" from --parsable

  // Both leave Slurm without a runner ever registering: each counts as a failure, and
  // the backoff holds further submissions although three checks still wait.
  std::ofstream(dir.path() / "squeue.txt", std::ios::trunc) << "";
  ASSERT_TRUE(eventually([&] { return slurm_state().at("jobs").as_array().empty(); }, 5)) << slurm_state();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  state = slurm_state();
  EXPECT_EQ(state.at("backoff").at("gpu:9.0").at("failures").as_int64(), 2) << state;
  EXPECT_NE(std::string(state.at("last_error").as_string()).find("ended before its runner registered"),
            std::string::npos)
      << state;
  EXPECT_EQ(calls().size(), 1u) << read_file(dir.path() / "sbatch.calls");
}

TEST_F(SlurmStandIns, ARefusedSubmissionBacksOffThenRetries) {
  std::ofstream(dir.path() / "squeue.txt") << "";
  std::ofstream(dir.path() / "refuse") << "";
  start_with_stand_ins("1000");
  finish_build(1);
  ASSERT_TRUE(eventually([&] { return !calls().empty(); }, 5)) << slurm_state();
  auto state = slurm_state();
  EXPECT_EQ(state.at("backoff").at("gpu:9.0").at("failures").as_int64(), 1) << state;
  EXPECT_NE(std::string(state.at("last_error").as_string()).find("invalid partition"), std::string::npos) << state;
  // Rounds come every 150 ms, but the next try waits the 1 s backoff.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(calls().size(), 1u) << read_file(dir.path() / "sbatch.calls");
  // Once sbatch accepts, the retry goes through and the job is tracked.
  fs::remove(dir.path() / "refuse");
  ASSERT_TRUE(eventually([&] { return slurm_state().at("jobs").as_array().size() == 1; }, 5)) << slurm_state();
  EXPECT_EQ(calls().size(), 2u) << read_file(dir.path() / "sbatch.calls");
}

TEST_F(SlurmStandIns, BadOptionsStopTheCoordinatorWithAReason) {
  std::string out;
  EXPECT_NE(run_to_exit(KPORT_COORDINATOR_BIN,
                        {"--db", (dir.path() / "a.db").string(), "--listen", "127.0.0.1:0", "--slurm-partition", "gpu",
                         "--slurm-roles", "gpu,tpu"},
                        out),
            0);
  EXPECT_NE(out.find("'tpu' is not gpu or build"), std::string::npos) << out;
  EXPECT_NE(run_to_exit(KPORT_COORDINATOR_BIN,
                        {"--db", (dir.path() / "b.db").string(), "--listen", "127.0.0.1:0", "--slurm-partition", "gpu",
                         "--slurm-script", "/nonexistent.sbatch"},
                        out),
            0);
  EXPECT_NE(out.find("/nonexistent.sbatch does not exist"), std::string::npos) << out;
}

}  // namespace
}  // namespace kport::testing
