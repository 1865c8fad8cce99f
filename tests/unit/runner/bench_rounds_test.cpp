// combine_bench_rounds: how the GPU runner turns several bench rounds of one case into one
// figure, with a spread that includes the rounds' disagreement, and when it calls the
// figure unstable.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cmath>

#include "bench_rounds.h"

namespace json = boost::json;
using kport::runner::combine_bench_rounds;

namespace {

json::object round(double ours_ms, double base_ms, double samples, double stddev_ms = 0.01) {
  return json::parse(R"({"instance":"gemm.x","verdict":"measured","tflops":)" + std::to_string(100.0 / ours_ms) +
                     R"(,"gbps":)" + std::to_string(10.0 / ours_ms) + R"(,"ratio":)" +
                     std::to_string(base_ms / ours_ms) + R"(,"timing":{"median_ms":)" + std::to_string(ours_ms) +
                     R"(,"stddev_ms":)" + std::to_string(stddev_ms) + R"(,"discarded_throttled":1,"samples":)" +
                     std::to_string(samples) + R"(,"sm_mhz_after_samples":{"min":)" +
                     std::to_string(static_cast<int>(1900 + samples)) +
                     R"(,"median":1980,"max":1980}},"baseline":{"name":"cublasGemmEx","tflops":)" +
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
  EXPECT_NEAR(at(c, {"timing", "discarded_throttled"}), 2, 1e-9);             // summed over rounds
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

TEST(BenchRounds, ABaselineTimedInTheFirstRoundOnlyIsTheRatiosBaseline) {
  // The runner times the baseline in a process's first round only.
  auto later = round(2.2, 1.0, 30);
  later.erase("baseline");
  later.erase("ratio");
  auto c = combine_bench_rounds({round(2.0, 1.1, 20), later});
  EXPECT_NEAR(at(c, {"timing", "median_ms"}), 2.1, 1e-9);
  EXPECT_NEAR(at(c, {"baseline", "timing", "median_ms"}), 1.1, 1e-9);
  EXPECT_NEAR(at(c, {"ratio"}), 1.1 / 2.1, 1e-9);  // against the combined figure, not the first round's
  // The first round outvoted: its baseline still stands, against the rounds that agree.
  auto c2 = combine_bench_rounds({round(9.0, 1.1, 20), later, round(2.22, 1.0, 20)});
  EXPECT_NEAR(at(c2, {"ratio"}), 1.0 / 2.21, 1e-9);
}

TEST(BenchRounds, ThreeRoundsLeaveAnOutlierOutOfTheFigure) {
  // 2.0 and 2.02 agree (1 %, the floor); 9.0 is an outlier the majority outvotes.
  auto c = combine_bench_rounds({round(2.0, 1.0, 20), round(9.0, 1.0, 20), round(2.02, 1.0, 20)});
  EXPECT_NEAR(at(c, {"timing", "median_ms"}), 2.01, 1e-9);
  EXPECT_NEAR(at(c, {"ratio"}), 1.0 / 2.01, 1e-9);
  EXPECT_NEAR(at(c, {"timing", "samples"}), 40, 1e-9);  // the rounds behind the figure
  EXPECT_FALSE(c.contains("unstable"));
  const auto& rounds = c.at("timing").at("rounds").as_array();
  EXPECT_TRUE(rounds[1].at("outlier").as_bool());
  EXPECT_FALSE(rounds[0].as_object().contains("outlier"));
  EXPECT_NEAR(at(c, {"timing", "stability", "agreeing"}), 2, 1e-9);
}

// The case of issue 13: two rounds of 4.50 ms and 0.43 ms were stored as one precise
// figure (the larger of the rounds' own spreads, 0.01 ms).
TEST(BenchRounds, RoundsOf450And043MsAreUnstableAndTheirSpreadSaysSo) {
  auto c = combine_bench_rounds({round(4.50, 1.0, 20), round(0.43, 1.0, 20)});
  ASSERT_TRUE(c.contains("unstable"));
  EXPECT_TRUE(c.at("unstable").as_bool());
  EXPECT_NEAR(at(c, {"timing", "median_ms"}), (4.50 + 0.43) / 2, 1e-9);
  // sqrt(mean within-round variance + sample variance of the medians).
  const double between = (4.50 - 0.43) * (4.50 - 0.43) / 2;
  EXPECT_NEAR(at(c, {"timing", "stddev_ms"}), std::sqrt(0.01 * 0.01 + between), 1e-9);
  EXPECT_GT(at(c, {"timing", "stddev_ms"}), 2.8);
  EXPECT_FALSE(c.at("timing").at("stability").at("stable").as_bool());
  const std::string why(c.at("unstable_reason").as_string());
  EXPECT_NE(why.find("4.5, 0.43 ms"), std::string::npos) << why;
  EXPECT_NE(why.find("no majority"), std::string::npos) << why;
}

TEST(BenchRounds, AReMeasureThatAgreesWithOneRoundSettlesTheFigure) {
  auto c = combine_bench_rounds({round(4.50, 1.0, 20), round(0.43, 1.0, 20), round(0.431, 1.0, 20)});
  EXPECT_FALSE(c.contains("unstable"));
  EXPECT_NEAR(at(c, {"timing", "median_ms"}), 0.4305, 1e-9);
  EXPECT_NEAR(at(c, {"timing", "stddev_ms"}), std::sqrt(0.01 * 0.01 + 0.001 * 0.001 / 2), 1e-9);
  EXPECT_TRUE(c.at("timing").at("rounds").as_array()[0].at("outlier").as_bool());
}

TEST(BenchRounds, BimodalRoundsStayUnstableHoweverManyThereAre) {
  auto c = combine_bench_rounds({round(4.5, 1.0, 20), round(0.43, 1.0, 20), round(4.5, 1.0, 20), round(0.43, 1.0, 20)});
  EXPECT_TRUE(c.contains("unstable"));  // two against two: no majority
  EXPECT_NEAR(at(c, {"timing", "stability", "agreeing"}), 2, 1e-9);
}

TEST(BenchRounds, TheRoundsOwnNoiseWidensWhatCountsAsAgreement) {
  // 5 % apart: beyond the 1 % floor, but within rounds whose samples spread 8 %.
  auto noisy = combine_bench_rounds({round(2.0, 1.0, 20, 0.16), round(2.1, 1.0, 20, 0.168)});
  EXPECT_FALSE(noisy.contains("unstable"));
  EXPECT_NEAR(at(noisy, {"timing", "stability", "allowed"}), 0.08, 1e-9);
  // Quiet rounds the same 5 % apart disagree.
  auto quiet = combine_bench_rounds({round(2.0, 1.0, 20, 0.002), round(2.1, 1.0, 20, 0.002)});
  EXPECT_TRUE(quiet.contains("unstable"));
  EXPECT_NEAR(at(quiet, {"timing", "stability", "allowed"}), 0.01, 1e-9);
  // A larger floor lets them agree.
  EXPECT_FALSE(
      combine_bench_rounds({round(2.0, 1.0, 20, 0.002), round(2.1, 1.0, 20, 0.002)}, 0.06).contains("unstable"));
}

TEST(BenchRounds, ARoundWithoutTimingIsLeftOut) {
  json::object broken{{"instance", "gemm.x"}, {"verdict", "error"}};
  auto c = combine_bench_rounds({round(2.0, 1.0, 20), broken, round(2.4, 1.0, 20)});
  EXPECT_NEAR(at(c, {"timing", "median_ms"}), 2.2, 1e-9);
  EXPECT_EQ(c.at("timing").at("rounds").as_array().size(), 2u);
}
