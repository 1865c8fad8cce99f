// kport's answers to bad input: a clear message and a non-zero exit, no runner needed.
#include <gtest/gtest.h>

#include "runner_fixture.h"

namespace kport::testing {
namespace {

using CliInput = BuildRunnerTest;

TEST_F(CliInput, MalformedTargetIsAUsageError) {
  std::string out;
  EXPECT_EQ(cli({"build", "--commit", "abc", "--target", "hopper"}, out), 2);
  EXPECT_NE(out.find("'hopper' is not an nvcc target"), std::string::npos) << out;
}

TEST_F(CliInput, TargetTheCoordinatorDoesNotKnowIsRefused) {
  ASSERT_EQ(
      post("/api/v1/repositories", boost::json::object{{"name", "kernels"}, {"url", "/tmp/none.git"}}, k_admin).status,
      201);
  std::string out;
  EXPECT_EQ(cli({"build", "--commit", std::string(40, 'a'), "--target", "sm_99"}, out), 2);
  EXPECT_NE(out.find("sm_99"), std::string::npos) << out;
  EXPECT_NE(out.find("not known"), std::string::npos) << out;
}

TEST_F(CliInput, MissingArgumentsAndUnknownCommands) {
  std::string out;
  EXPECT_EQ(cli({"build", "--target", "sm_80"}, out), 2);
  EXPECT_NE(out.find("--commit REV and --target TARGET are required"), std::string::npos) << out;
  EXPECT_EQ(cli({"frobnicate"}, out), 2);
  EXPECT_NE(out.find("unknown command 'frobnicate'"), std::string::npos) << out;
}

TEST_F(CliInput, SeveralRepositoriesNeedRepo) {
  add_target("sm_80", "8.0");
  for (const char* n : {"a", "b"})
    ASSERT_EQ(post("/api/v1/repositories", boost::json::object{{"name", n}, {"url", std::string("/tmp/") + n}}, k_admin)
                  .status,
              201);
  std::string out;
  EXPECT_EQ(cli({"build", "--commit", std::string(40, 'a'), "--target", "sm_80"}, out), 2);
  EXPECT_NE(out.find("name the repository with --repo"), std::string::npos) << out;
}

TEST_F(CliInput, UnreachableCoordinatorExitsThree) {
  std::string out;
  EXPECT_EQ(
      run_to_exit(KPORT_CLI_BIN,
                  {"--server", "http://127.0.0.1:1", "build", "--commit", "abc", "--target", "sm_80", "--repo", "k"},
                  out),
      3);
  EXPECT_NE(out.find("cannot reach the coordinator"), std::string::npos) << out;
}

TEST_F(CliInput, RunnerWithBadRegistrationTokenExitsTwo) {
  std::string out;
  int rc = run_to_exit(KPORT_RUNNER_BIN,
                       {"--server", url(""), "--registration-token", "wrong", "--workdir", (dir.path() / "w").string()},
                       out);
  if (out.find("no usable CUDA toolkit") != std::string::npos) GTEST_SKIP() << "nvcc is not installed";
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("registration refused"), std::string::npos) << out;
}

}  // namespace
}  // namespace kport::testing
