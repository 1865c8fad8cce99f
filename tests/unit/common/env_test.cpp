#include "kport/common/env.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include <unistd.h>

namespace kport {
namespace {

std::filesystem::path temp_dir() {
  auto d = std::filesystem::temp_directory_path() / ("kport-env-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

// A test's Env overrides what it injects; the rest is the machine's.
class FailingChildren : public Env {
 public:
  Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions&) override {
    ++calls;
    return make_error(Errc::not_found, "cannot start " + argv.front());
  }
  std::atomic<int> calls{0};
};

}  // namespace

TEST(Env, TheSystemEnvRunsChildrenAndTellsTime) {
  auto out = Env::system().run_process({"/bin/sh", "-c", "echo hello"});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(out->output, "hello\n");
  EXPECT_GT(Env::system().now_unix_ms(), 1'700'000'000'000);
}

TEST(Env, AWriteReplacesTheFileWholeAndAReadGivesItBack) {
  auto dir = temp_dir();
  auto file = dir / "state.json";
  Env& env = Env::system();
  ASSERT_TRUE(env.write_file(file, "{\"a\":1}").ok());
  ASSERT_TRUE(env.write_file(file, "{\"b\":2}").ok());
  auto back = env.read_file(file);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, "{\"b\":2}");
  EXPECT_FALSE(std::filesystem::exists(dir / "state.json.tmp"));
  auto missing = env.read_file(dir / "absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Errc::not_found);
  // A directory that does not exist: a clear error naming the path, nothing left behind.
  auto bad = env.write_file(dir / "no" / "such" / "file", "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no/such/file"), std::string::npos) << bad.error().message;
  std::filesystem::remove_all(dir);
}

TEST(Env, ATestEnvInjectsAFaultAndKeepsTheRestReal) {
  FailingChildren env;
  auto out = env.run_process({"sbatch", "job.sh"}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, Errc::not_found);
  EXPECT_EQ(env.calls.load(), 1);
  EXPECT_GT(env.now_unix_ms(), 1'700'000'000'000);  // not overridden: the machine's clock
}

}  // namespace kport
