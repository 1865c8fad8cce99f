// combine_bench_rounds: how the GPU runner turns several bench rounds of one case into one
// figure.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "harness_exec.h"

namespace json = boost::json;
using kport::runner::combine_bench_rounds;

namespace {

json::object round(double ours_ms, double base_ms, double samples) {
  return json::parse(R"({"instance":"gemm.x","verdict":"measured","tflops":)" + std::to_string(100.0 / ours_ms) +
                     R"(,"gbps":)" + std::to_string(10.0 / ours_ms) + R"(,"ratio":)" + std::to_string(base_ms / ours_ms) +
                     R"(,"timing":{"median_ms":)" + std::to_string(ours_ms) + R"(,"stddev_ms":0.01,"discarded_throttled":1,"samples":)" +
                     std::to_string(samples) + R"(,"sm_mhz_after_samples":{"min":)" +
                     std::to_string(static_cast<int>(1900 + samples)) + R"(,"median":1980,"max":1980}},"baseline":{"name":"cublasGemmEx","tflops":)" +
                     std::to_string(100.0 / base_ms) + R"(,"timing":{"median_ms":)" + std::to_string(base_ms) + "}}}")
      .as_object();
}

double at(const json::object& o, std::initializer_list<const char*> path) {
  // json::value::at throws on a missing key, which fails the test with its message.
  json::value v = o;
  for (const char* k : path) v = v.as_object().at(k);
  return v.to_number<double>();
}

}  // namespace

TEST(BenchRounds, OneRoundComesBackUnchanged) {
  auto r = round(2.0, 1.0, 20);
  EXPECT_EQ(combine_bench_rounds({r}), r);
  EXPECT_TRUE(combine_bench_rounds({}).empty());
}

TEST(BenchRounds, TwoRoundsGiveTheMeanAndRescaledRates) {
  auto c = combine_bench_rounds({round(2.0, 1.0, 20), round(2.2, 1.2, 30)});
  EXPECT_NEAR(at(c, {"timing", "median_ms"}), 2.1, 1e-9);
  EXPECT_NEAR(at(c, {"timing", "samples"}), 50, 1e-9);
  EXPECT_NEAR(at(c, {"timing", "round_spread"}), 0.1, 1e-9);
  EXPECT_NEAR(at(c, {"timing", "discarded_throttled"}), 2, 1e-9);      // summed over rounds
  EXPECT_NEAR(at(c, {"timing", "sm_mhz_after_samples", "min"}), 1920, 1e-9);  // lowest of both
  EXPECT_NEAR(at(c, {"timing", "sm_mhz_after_samples", "max"}), 1980, 1e-9);
  EXPECT_NEAR(at(c, {"tflops"}), 100.0 / 2.1, 1e-3);  // rates follow the combined time
  EXPECT_NEAR(at(c, {"gbps"}), 10.0 / 2.1, 1e-4);
  EXPECT_NEAR(at(c, {"baseline", "timing", "median_ms"}), 1.1, 1e-9);
  EXPECT_NEAR(at(c, {"baseline", "tflops"}), 100.0 / 1.1, 1e-3);
  EXPECT_NEAR(at(c, {"ratio"}), 1.1 / 2.1, 1e-9);
  const auto& rounds = c.at("timing").at("rounds").as_array();
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_NEAR(rounds[1].at("median_ms").to_number<double>(), 2.2, 1e-9);
  EXPECT_NEAR(rounds[1].at("baseline_median_ms").to_number<double>(), 1.2, 1e-9);
}

TEST(BenchRounds, ThreeRoundsTakeTheMedianSoOneOutlierDoesNotMoveIt) {
  auto c = combine_bench_rounds({round(2.0, 1.0, 20), round(9.0, 1.0, 20), round(2.02, 1.0, 20)});
  EXPECT_NEAR(at(c, {"timing", "median_ms"}), 2.02, 1e-9);
  EXPECT_NEAR(at(c, {"ratio"}), 1.0 / 2.02, 1e-9);
}

TEST(BenchRounds, ARoundWithoutTimingIsLeftOut) {
  json::object broken{{"instance", "gemm.x"}, {"verdict", "error"}};
  auto c = combine_bench_rounds({round(2.0, 1.0, 20), broken, round(2.4, 1.0, 20)});
  EXPECT_NEAR(at(c, {"timing", "median_ms"}), 2.2, 1e-9);
  EXPECT_EQ(c.at("timing").at("rounds").as_array().size(), 2u);
}
