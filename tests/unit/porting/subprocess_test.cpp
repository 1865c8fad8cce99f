// The child-process seam the build driver stands on: output capture, exit codes, and a
// hung compiler (with helpers of its own) killed at the limit.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "kport/porting/subprocess.h"

namespace kport::porting {
namespace {

TEST(Subprocess, CapturesOutputAndExitCode) {
  auto r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->timed_out);
  EXPECT_NE(r->output.find("out\n"), std::string::npos);
  EXPECT_NE(r->output.find("err\n"), std::string::npos);
}

TEST(Subprocess, HungProcessGroupIsKilledAtTheLimit) {
  ProcessOptions o;
  o.timeout = std::chrono::milliseconds(500);
  auto start = std::chrono::steady_clock::now();
  // Like nvcc waiting on a hung ptxas: the grandchild keeps the pipe open.
  auto r = run_process({"/bin/sh", "-c", "sleep 30 & sleep 30"}, o);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(Subprocess, WorkingDirectoryEnvironmentAndOutputCap) {
  ProcessOptions o;
  o.cwd = "/";
  o.env = {"KPORT_TEST_VALUE=42"};
  o.output_limit = 4;
  auto r = run_process({"/bin/sh", "-c", "pwd; echo $KPORT_TEST_VALUE"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output, "/\n42");
}

TEST(Subprocess, MissingProgramIsNotFound) {
  auto r = run_process({"kport-no-such-program"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::not_found);
  EXPECT_NE(r.error().message.find("kport-no-such-program"), std::string::npos);
}

}  // namespace
}  // namespace kport::porting

namespace kport::porting {
namespace {

TEST(Subprocess, CancelKillsTheGroupPromptly) {
  std::atomic<bool> cancel{false};
  ProcessOptions o;
  o.cancel = &cancel;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  auto start = std::chrono::steady_clock::now();
  auto r = run_process({"/bin/sh", "-c", "sleep 30 & sleep 30"}, o);
  t.join();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
  EXPECT_FALSE(r->timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace kport::porting
