// A bisection asked for by hand: the request `kport bisect start` writes and POST
// /api/v1/bisections reads, with one mapping, and a field that does not read named in
// the error.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "kport/api/bisection.h"

namespace json = boost::json;
using namespace kport;

namespace {

template <typename T>
void expect_refused(const Result<T>& r, const std::string& message) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_EQ(r.error().message, message);
}

TEST(BisectionRequest, RoundTripsEveryFieldInTheOrderTheCliWrites) {
  api::BisectionRequest r{
      "perf_regression", "sm_90a",  "main",
      "NVIDIA H200",     "0123abc", std::vector<std::string>{"gemm.simt.64x64 bf16 m=64,n=64,k=64"}};
  const json::object wire = api::to_json(r);
  EXPECT_EQ(json::serialize(wire), R"({"kind":"perf_regression","target":"sm_90a","bad":"main",)"
                                   R"("gpu_model":"NVIDIA H200","good":"0123abc",)"
                                   R"("cases":["gemm.simt.64x64 bf16 m=64,n=64,k=64"]})");
  auto back = api::parse_bisection_request(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->kind, "perf_regression");
  EXPECT_EQ(back->target, "sm_90a");
  EXPECT_EQ(back->bad, "main");
  EXPECT_EQ(back->gpu_model, "NVIDIA H200");
  EXPECT_EQ(back->good, "0123abc");
  EXPECT_EQ(back->cases, (std::vector<std::string>{"gemm.simt.64x64 bf16 m=64,n=64,k=64"}));
}

TEST(BisectionRequest, LeavesOutWhatWasNotGivenAndReadsItAsAbsent) {
  const api::BisectionRequest r{"build_failure", "sm_100a", "main", std::nullopt, std::nullopt, std::nullopt};
  const json::object wire = api::to_json(r);
  EXPECT_EQ(json::serialize(wire), R"({"kind":"build_failure","target":"sm_100a","bad":"main"})");
  auto back = api::parse_bisection_request(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->gpu_model);
  EXPECT_FALSE(back->good);
  EXPECT_FALSE(back->cases);
  // An empty list of cases is said, not dropped.
  auto empty = api::parse_bisection_request(
      json::object{{"kind", "build_failure"}, {"target", "sm_100a"}, {"bad", "main"}, {"cases", json::array{}}});
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE(empty->cases);
  EXPECT_TRUE(empty->cases->empty());
}

TEST(BisectionRequest, AMissingOrMistypedFieldIsRefusedByName) {
  expect_refused(api::parse_bisection_request(json::object{{"kind", "perf_regression"}, {"target", "sm_90a"}}),
                 "field 'bad' is required (a string)");
  expect_refused(
      api::parse_bisection_request(json::object{{"kind", "perf_regression"}, {"target", 90}, {"bad", "main"}}),
      "field 'target' must be a string");
  expect_refused(api::parse_bisection_request(json::object{
                     {"kind", "perf_regression"}, {"target", "sm_90a"}, {"bad", "main"}, {"cases", "all"}}),
                 "field 'cases' must be an array of strings");
}

}  // namespace
