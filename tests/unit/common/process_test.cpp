// The child-process seam the build driver stands on: output capture, exit codes, and a
// hung compiler (with helpers of its own) killed at the limit.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "kport/common/process.h"

namespace kport {
namespace {

TEST(Subprocess, CapturesOutputAndExitCode) {
  auto r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->timed_out);
  EXPECT_NE(r->output.find("out\n"), std::string::npos);
  EXPECT_NE(r->output.find("err\n"), std::string::npos);
}

TEST(Subprocess, SplitStreamsKeepStdoutFreeOfStderr) {
  ProcessOptions o;
  o.split_streams = true;
  // Many small writes to both streams, so the two pipes are read interleaved.
  auto r = run_process(
      {"/bin/sh", "-c", "echo '{\"a\":1'; for i in 1 2 3 4 5; do echo '} noise {' >&2; done; echo '}'; echo tail >&2"},
      o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->stdout_text, "{\"a\":1\n}\n");
  EXPECT_EQ(r->stderr_text, "} noise {\n} noise {\n} noise {\n} noise {\n} noise {\ntail\n");
  // The merged form still holds everything, for logs.
  EXPECT_EQ(r->output.size(), r->stdout_text.size() + r->stderr_text.size());
  EXPECT_NE(r->output.find("tail"), std::string::npos);
  EXPECT_FALSE(r->truncated);
}

TEST(Subprocess, MergedCaptureLeavesTheSplitFieldsEmpty) {
  auto r = run_process({"/bin/sh", "-c", "echo out; echo err >&2"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output, "out\nerr\n");
  EXPECT_TRUE(r->stdout_text.empty());
  EXPECT_TRUE(r->stderr_text.empty());
}

TEST(Subprocess, EachSplitCaptureIsCappedAndTheCapIsReported) {
  ProcessOptions o;
  o.split_streams = true;
  o.output_limit = 3;
  auto r = run_process({"/bin/sh", "-c", "echo abcdef; echo xy >&2"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_text, "abc");
  EXPECT_EQ(r->stderr_text, "xy\n");
  EXPECT_TRUE(r->truncated);
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
}  // namespace kport

namespace kport {
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
}  // namespace kport
