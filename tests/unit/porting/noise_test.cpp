// Series noise learned from constructed A/A histories, and the verdict it drives: a noisy
// series does not flag what a quiet one does, and a series without history says so.
#include "kport/porting/noise.h"

#include <gtest/gtest.h>

#include <random>

#include "kport/porting/verdict.h"

namespace kport::porting {
namespace {

const SeriesKey k_series{"NVIDIA H200", "580.1", "gemm.mma.default", "bf16", "m=4096,n=4096,k=4096"};

// `codes` builds of the same series, `per_code` figures each, around 100 us with a relative
// spread of `sigma` (seeded, so every run sees the same history).
std::vector<AaFigure> history(double sigma, int codes, int per_code, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  std::vector<AaFigure> out;
  for (int c = 0; c < codes; ++c) {
    const double level = 100.0 * (1 + 0.05 * c);  // commits differ by more than the noise
    for (int i = 0; i < per_code; ++i) out.push_back({"harness-" + std::to_string(c), level * (1 + noise(rng))});
  }
  return out;
}

TEST(Noise, TwoFiguresAreInsufficientData) {
  const auto m = learn_noise(k_series, {{"h1", 100.0}, {"h1", 101.0}});
  EXPECT_FALSE(m.enough);
  EXPECT_EQ(m.degrees, 1);
  EXPECT_EQ(m.needed, 2);
  EXPECT_FALSE(change_band(m, std::nullopt, std::nullopt).has_value());
  EXPECT_EQ(describe(m), "insufficient data: 1 of 3 A/A degrees of freedom");
}

TEST(Noise, FiguresOfDifferentCodesAreNotAa) {
  // One figure per commit: their spread is what the commits changed, not noise.
  const auto m = learn_noise(k_series, history(0.01, 12, 1));
  EXPECT_EQ(m.figures, 12);
  EXPECT_EQ(m.degrees, 0);
  EXPECT_FALSE(m.enough);
}

TEST(Noise, LearnsTheSpreadOfOneFigurePooledOverCodes) {
  const auto m = learn_noise(k_series, history(0.01, 30, 2));
  ASSERT_TRUE(m.enough);
  EXPECT_EQ(m.codes, 30);
  EXPECT_EQ(m.degrees, 30);
  EXPECT_NEAR(m.sigma_rel, 0.01, 0.003) << "pairs recover one figure's spread, not the pair difference's";
  const auto m3 = learn_noise(k_series, history(0.01, 15, 3, 11));
  EXPECT_NEAR(m3.sigma_rel, 0.01, 0.003) << "triples weigh like pairs";
  EXPECT_NEAR(m.mde_rel, m.k_eff * std::sqrt(2.0) * m.sigma_rel, 1e-12);
}

TEST(Noise, OneWildFigureDoesNotWidenTheBand) {
  auto h = history(0.002, 20, 2);
  const double quiet = learn_noise(k_series, h).sigma_rel;
  h.push_back({"harness-3", 100.0 * 1.15 * 1.4});  // a throttled run, 40 % slow
  EXPECT_LT(learn_noise(k_series, h).sigma_rel, quiet * 1.5);
}

TEST(Noise, AFigureNoisierThanItsSeriesWidensItsBand) {
  const auto m = learn_noise(k_series, history(0.002, 20, 2));
  const double plain = *change_band(m, std::nullopt, std::nullopt);
  const auto se = median_standard_error(100.0, 20.0, 100);  // 2.5 % standard error
  ASSERT_TRUE(se.has_value());
  EXPECT_NEAR(*se, 1.2533 * 20.0 / 10.0 / 100.0, 1e-9);
  EXPECT_GT(*change_band(m, std::nullopt, se), 4 * plain);
  EXPECT_DOUBLE_EQ(*change_band(m, 1e-5, 1e-5), plain) << "a quieter figure cannot narrow it";
}

TEST(Noise, NeverBelowTheFloor) {
  std::vector<AaFigure> exact;
  for (int c = 0; c < 5; ++c)
    exact.push_back({"h" + std::to_string(c), 50.0}), exact.push_back({"h" + std::to_string(c), 50.0});
  const auto m = learn_noise(k_series, exact);
  ASSERT_TRUE(m.enough);
  EXPECT_EQ(m.sigma_rel, 0.0);
  EXPECT_DOUBLE_EQ(m.mde_rel, NoisePolicy{}.floor);
}

// ---- the verdict over a noise book -------------------------------------------------

ResultFact timed(double median, std::int64_t id) {
  ResultFact r;
  r.id = id;
  r.target = "sm_90a";
  r.family = "gemm";
  r.variant = "mma";
  r.instance = k_series.instance;
  r.dtype = k_series.dtype;
  r.shape = k_series.shape;
  r.gpu_model = k_series.gpu_model;
  r.driver = k_series.driver;
  r.arch = "9.0";
  r.median_us = median;
  r.stddev_us = 0.5;
  r.samples = 200;
  return r;
}

CommitFacts done(std::vector<ResultFact> results, bool remeasured) {
  CommitFacts in;
  JobFact build{1, JobKind::build, JobState::succeeded, "sm_90a", {}, {}, {}};
  JobFact check{2, JobKind::check, JobState::succeeded, "sm_90a", "9.0", {}, {}};
  in.jobs = {build, check};
  if (remeasured) {
    in.jobs.push_back(JobFact{3, JobKind::check, JobState::succeeded, "sm_90a", "9.0", k_series.gpu_model, {}});
    in.remeasures.push_back({"sm_90a", k_series.gpu_model, 3});
  }
  in.results = std::move(results);
  return in;
}

Verdict judge(double before, double now, const NoiseBook& book, bool remeasured = true) {
  return decide_verdict("c", done({timed(now, 2)}, remeasured), std::string(40, 'a'), done({timed(before, 1)}, false),
                        {}, &book);
}

NoiseBook book_of(const std::vector<AaFigure>& h) { return {{k_series, learn_noise(k_series, h)}}; }

TEST(NoiseVerdict, ANoisySeriesIgnoresTwoPercentButFlagsSix) {
  const auto book = book_of(history(0.01, 20, 2));
  EXPECT_EQ(judge(100, 102, book).status, "pass");
  EXPECT_EQ(judge(100, 98, book).status, "pass");
  const auto first = judge(100, 106, book, false);
  EXPECT_EQ(first.status, "pending") << "a suspect is measured again first";
  ASSERT_EQ(first.remeasure.size(), 1u);
  EXPECT_EQ(first.remeasure[0].instances, std::vector<std::string>{k_series.instance});
  const auto v = judge(100, 106, book);
  ASSERT_EQ(v.status, "fail");
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0].kind, "perf_regression");
  EXPECT_NE(v.reasons[0].message.find("beyond the series' band"), std::string::npos) << v.reasons[0].message;
  EXPECT_TRUE(v.calibrated);
  EXPECT_NE(describe(v.policy, v.calibrated).find("A/A"), std::string::npos);
}

TEST(NoiseVerdict, AQuietSeriesFlagsOneAndAHalfPercent) {
  const auto book = book_of(history(0.002, 20, 2));
  EXPECT_EQ(judge(100, 101.5, book).status, "fail");
  EXPECT_EQ(judge(100, 100.3, book).status, "pass") << "below the floor";
}

TEST(NoiseVerdict, TooLittleHistoryIsInsufficientDataNotAGuess) {
  const auto book = book_of({{"h1", 100.0}, {"h1", 100.4}});
  const auto first = judge(100, 110, book, false);
  EXPECT_EQ(first.status, "pending");
  ASSERT_EQ(first.remeasure.size(), 1u) << "its re-measure is the history it lacks";
  const auto v = judge(100, 110, book);
  EXPECT_EQ(v.status, "insufficient_data");
  EXPECT_TRUE(v.reasons.empty());
  ASSERT_EQ(v.insufficient_data.size(), 1u);
  EXPECT_EQ(v.insufficient_data[0].model.degrees, 1);
  EXPECT_NEAR(v.insufficient_data[0].rel, 0.10, 1e-9);
  EXPECT_EQ(judge(100, 100.2, book).status, "pass") << "a change below the floor never counts, history or not";
  EXPECT_EQ(judge(100, 110, NoiseBook{}).status, "insufficient_data") << "a series with no history at all";
  auto shaky =
      decide_verdict("c", done({timed(110, 2)}, false), std::string(40, 'a'), done({timed(100, 1)}, false), {}, &book);
  EXPECT_EQ(shaky.status, "pending") << "re-measured first";
  auto unstable_now = done({timed(110, 2)}, false);
  unstable_now.results[0].unstable = true;
  shaky = decide_verdict("c", unstable_now, std::string(40, 'a'), done({timed(100, 1)}, false), {}, &book);
  EXPECT_EQ(shaky.status, "pass") << "an unstable figure is noted, never re-measured for history";
  ASSERT_EQ(shaky.notes.size(), 1u);
  EXPECT_NE(shaky.notes[0].find("unstable"), std::string::npos);
}

}  // namespace
}  // namespace kport::porting
