// The GPU runner against a harness whose report it cannot read: a report of another
// schema_version, or of none, stops the stage with an Error that says which version came
// (kport::api::parse_harness_report), instead of turning every case into a crash; so does a
// harness that does not start at all.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

#include "harness_exec.h"

namespace fs = std::filesystem;
using namespace kport;
using namespace kport::runner;

namespace {

// A harness that prints `report` on stdout for every command and exits 0.
class ScriptedHarness : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("kport-harness-exec-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  Harness with_report(const std::string& report) {
    const fs::path script = m_dir / "kport-harness-sm_90a";
    std::ofstream(script) << "#!/bin/sh\ncat <<'REPORT'\n" << report << "\nREPORT\n";
    ::chmod(script.c_str(), 0755);
    HarnessOptions o;
    o.harness = script;
    o.seed = 7;
    return Harness(o, [](const std::string&) {});
  }

  std::vector<HarnessCase> two_cases() const {
    return {HarnessCase{"gemm.simt.default", "gemm", "simt", "fp32", "m=64,n=64,k=64"},
            HarnessCase{"gemm.simt.default", "gemm", "simt", "fp32", "m=128,n=128,k=128"}};
  }

  fs::path m_dir;
};

}  // namespace

TEST_F(ScriptedHarness, AReportOfAnotherVersionStopsTheCheckSayingWhichCame) {
  auto h = with_report(R"({"schema_version":2,"command":"check","results":[]})");
  auto r = h.check(two_cases());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::unprocessable);
  EXPECT_NE(r.error().message.find("schema_version 2 but this runner reads version 1"), std::string::npos)
      << r.error().message;
}

TEST_F(ScriptedHarness, AReportWithoutAVersionStopsTheCheck) {
  auto h = with_report(R"({"command":"check","results":[]})");
  auto r = h.check(two_cases());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("has no schema_version"), std::string::npos) << r.error().message;
}

TEST_F(ScriptedHarness, AVersionOneReportIsReadIntoOutcomes) {
  auto h = with_report(R"({"schema_version":1,"command":"check","results":[
    {"instance":"gemm.simt.default","dtype":"fp32","shape_text":"m=64,n=64,k=64","seed":11,"verdict":"passed",
     "max_abs_error":0.001,"max_abs_ref":2.0},
    {"instance":"gemm.simt.default","dtype":"fp32","shape_text":"m=128,n=128,k=128","seed":12,"verdict":"failed",
     "reason":"normwise error 0.3 > tolerance 0.01"}]})");
  auto r = h.check(two_cases());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].status, "passed");
  EXPECT_EQ((*r)[0].seed, 11u);
  EXPECT_EQ((*r)[0].check.max_abs_error, 0.001);
  EXPECT_EQ((*r)[1].status, "failed");
  EXPECT_EQ((*r)[1].message, "normwise error 0.3 > tolerance 0.01");
}

namespace {

// The machine of a GPU whose harness processes the kernel kills (an OOM killer, a driver
// reset): every `check` ends by SIGKILL with nothing on stdout; `device`, the health check
// between processes, answers. Other children run as they would.
class KilledChecks : public Env {
 public:
  Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions& options) override {
    const std::string command = argv.size() > 1 ? argv[1] : "";
    {
      std::lock_guard l(m_mu);
      m_commands.push_back(command);
    }
    ProcessOutput out;
    if (command == "check") {
      out.exit_code = 128 + 9;
      out.stderr_text = "Killed";
      return out;
    }
    if (command == "device") {
      out.exit_code = 0;
      out.stdout_text = out.output = R"({"compute_capability":"9.0","name":"NVIDIA H200"})";
      return out;
    }
    return Env::run_process(argv, options);
  }
  std::vector<std::string> commands() {
    std::lock_guard l(m_mu);
    return m_commands;
  }

 private:
  std::mutex m_mu;
  std::vector<std::string> m_commands;
};

}  // namespace

// A fault injected through kport::Env reaches the runner the way a real one would: each
// case of a killed process is a crashed result of its own, and the GPU is asked whether
// it still answers before the next process starts.
TEST_F(ScriptedHarness, AHarnessKilledByTheMachineIsACrashedResultPerCaseThroughTheEnv) {
  KilledChecks machine;
  HarnessOptions o;
  o.harness = m_dir / "kport-harness-sm_90a";  // never started: the Env answers for it
  o.seed = 7;
  o.machine = &machine;
  Harness h(o, [](const std::string&) {});
  auto r = h.check(two_cases());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  for (const auto& outcome : *r) {
    EXPECT_EQ(outcome.status, "crashed") << outcome.c.key();
    EXPECT_NE(outcome.message.find("killed by signal 9"), std::string::npos) << outcome.message;
  }
  const auto commands = machine.commands();
  EXPECT_GE(std::count(commands.begin(), commands.end(), "check"), 2) << "a killed process's cases run again, alone";
  EXPECT_NE(std::find(commands.begin(), commands.end(), "device"), commands.end()) << "the GPU is health-checked";
}

// A harness that does not start at all (here its interpreter is missing; on a GPU runner, a
// file still held open for writing) says nothing about the cases: the stage stops with the
// reason, and the job goes back, instead of every case being stored as a crash.
TEST_F(ScriptedHarness, AHarnessThatCannotStartStopsTheStageInsteadOfCrashingItsCases) {
  const fs::path script = m_dir / "kport-harness-sm_90a";
  std::ofstream(script) << "#!/kport/no/such/shell\n";
  ::chmod(script.c_str(), 0755);
  HarnessOptions o;
  o.harness = script;
  o.seed = 7;
  Harness h(o, [](const std::string&) {});
  auto r = h.check(two_cases());
  ASSERT_FALSE(r.ok()) << "the cases were judged: " << r->size();
  EXPECT_NE(r.error().message.find("cannot start"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(std::strerror(ENOENT)), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().code, Errc::unprocessable) << "not a harness of another version: the job may run again";
}
