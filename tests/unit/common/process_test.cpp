// The child-process seam the build driver stands on: output capture, exit codes, and a
// hung compiler (with helpers of its own) killed at the limit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
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

// A file to run: `text` with the execute bit, in a fresh folder under the temp directory.
std::filesystem::path program_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("kport-process-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

// A program the kernel refuses to start is an error that says why, not exit code 127.
TEST(Subprocess, AProgramThatCannotStartIsAnErrorSayingWhy) {
  auto bad_interpreter = run_process({program_file("bad-interpreter", "#!/kport/no/such/shell\n").string()});
  ASSERT_FALSE(bad_interpreter.ok());
  EXPECT_EQ(bad_interpreter.error().code, Errc::unavailable);
  EXPECT_NE(bad_interpreter.error().message.find("cannot run"), std::string::npos) << bad_interpreter.error().message;
  EXPECT_NE(bad_interpreter.error().message.find(std::strerror(ENOENT)), std::string::npos)
      << bad_interpreter.error().message;
  const auto plain = program_file("not-executable", "#!/bin/sh\necho no\n");
  std::filesystem::permissions(plain, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto denied = run_process({plain.string()});
  ASSERT_FALSE(denied.ok());
  EXPECT_NE(denied.error().message.find(std::strerror(EACCES)), std::string::npos) << denied.error().message;
}

// While a NoForkWhileWriting lives (a program being written), no child is forked: a
// run_process started meanwhile forks only after it ends.
TEST(Subprocess, NoChildIsForkedWhileAProgramIsBeingWritten) {
  std::atomic<bool> writing_done{false};
  std::atomic<bool> holding{false};
  std::thread writer([&] {
    const NoForkWhileWriting no_fork;
    holding = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    writing_done = true;
  });
  while (!holding) std::this_thread::yield();
  auto r = run_process({"true"});
  const bool after = writing_done;
  writer.join();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(after) << "the child was forked while the program was being written";
}

// Another process that holds `path` open for writing for `hold_ms`, as the child another
// thread forked while the file was being written holds it until its own execve. Returns once
// the file is open there.
pid_t hold_open_for_writing(const std::filesystem::path& path, int hold_ms) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND);
    const char c = fd >= 0 ? 1 : 0;
    [[maybe_unused]] const ssize_t n = ::write(ready[1], &c, 1);
    ::usleep(static_cast<useconds_t>(hold_ms) * 1000);
    _exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  const bool opened = ::read(ready[0], &c, 1) == 1 && c == 1;
  ::close(ready[0]);
  return opened ? pid : -1;
}

// A program open for writing in another process is "busy" (ETXTBSY): it starts once that
// process lets go, within half a second, and is an error naming ETXTBSY after that.
TEST(Subprocess, AProgramBusyForAMomentStartsOnceItIsClosed) {
  const auto path = program_file("busy", "#!/bin/sh\necho started\n");
  pid_t holder = hold_open_for_writing(path, 100);
  ASSERT_GT(holder, 0);
  auto r = run_process({path.string()});
  ::waitpid(holder, nullptr, 0);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->output, "started\n");

  holder = hold_open_for_writing(path, 3000);
  ASSERT_GT(holder, 0);
  auto busy = run_process({path.string()});
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  ASSERT_FALSE(busy.ok());
  EXPECT_NE(busy.error().message.find(std::strerror(ETXTBSY)), std::string::npos) << busy.error().message;
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
