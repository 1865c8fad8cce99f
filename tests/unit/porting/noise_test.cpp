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
  // The larger of the screen's band for two figures and the confirmation's for two rounds
  // a side; here the screen's, 2 * (1 + 1/30) * sqrt(2) sigma.
  const NoisePolicy p;
  EXPECT_NEAR(m.mde_rel,
              std::max(p.screen_k * (1 + 1.0 / 30) * std::sqrt(2.0) * m.sigma_rel,
                       std::max(p.confirm_floor, m.k_eff * m.sigma_rel)),
              1e-12);
}

// The confirmation's band: narrower with more rounds a side, never below its floor, and
// widened by the pair's own rounds when this machine is noisier today than the history.
TEST(Noise, ThePairsBandNarrowsWithRoundsAndWidensWithTodaysNoise) {
  const auto m = learn_noise(k_series, history(0.01, 20, 2));
  ASSERT_TRUE(m.enough);
  const double one = *confirm_band(m, {}, {}, {}, 1);
  const double four = *confirm_band(m, {}, {}, {}, 4);
  EXPECT_NEAR(one, m.k_eff * m.sigma_rel * std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(four, m.k_eff * m.sigma_rel * std::sqrt(2 * 1.25 / 4), 1e-12);
  EXPECT_LT(four, one);
  const std::vector<double> quiet_a{100.0, 100.01, 99.99, 100.0}, quiet_b{101.0, 101.01, 100.99, 101.0};
  EXPECT_DOUBLE_EQ(*confirm_band(m, quiet_a, quiet_b), four) << "quiet rounds cannot narrow it below the history";
  const std::vector<double> loud_a{100.0, 104.0, 96.0, 100.0}, loud_b{101.0, 105.0, 97.0, 101.0};
  EXPECT_GT(*confirm_band(m, loud_a, loud_b), 3 * four) << "today's 3 % spread widens it";
  const auto exact = learn_noise(k_series, {{"a", 1.0}, {"a", 1.0}, {"b", 1.0}, {"b", 1.0}, {"c", 1.0}, {"c", 1.0}});
  EXPECT_DOUBLE_EQ(*confirm_band(exact, quiet_a, quiet_a), NoisePolicy{}.confirm_floor);
  EXPECT_FALSE(confirm_band(learn_noise(k_series, {}), {}, {}).has_value());
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
  EXPECT_DOUBLE_EQ(m.mde_rel, NoisePolicy{}.confirm_floor) << "a confirmed slowdown is at least 1 %";
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

// `paired`: the re-measure's figure of the baseline's harness, timed in four rounds
// interleaved with the re-measure's four (the re-measure times `now` again); 0: the
// re-measure timed no pair.
Verdict judge(double before, double now, const NoiseBook& book, bool remeasured = true, double paired = -1) {
  auto mine = done({timed(now, 2)}, remeasured);
  if (remeasured && paired != 0) {
    auto& r = mine.results[0];
    r.job_id = 3;
    r.paired_median_us = paired < 0 ? before : paired;
    r.paired_stddev_us = 0.5;
    r.paired_samples = 200;
    r.round_medians_us.assign(4, now);
    r.paired_round_medians_us.assign(4, *r.paired_median_us);
  }
  return decide_verdict("c", mine, std::string(40, 'a'), done({timed(before, 1)}, false), {}, &book);
}

NoiseBook book_of(const std::vector<AaFigure>& h) { return {{k_series, learn_noise(k_series, h)}}; }

TEST(NoiseVerdict, ANoisySeriesIgnoresTwoPercentButFlagsSix) {
  const auto book = book_of(history(0.015, 20, 2));
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
  EXPECT_NE(v.reasons[0].message.find("confirmed against the baseline's harness in interleaved rounds"),
            std::string::npos)
      << v.reasons[0].message;
  EXPECT_NE(v.reasons[0].message.find(", beyond the band +"), std::string::npos) << v.reasons[0].message;
  EXPECT_TRUE(v.calibrated);
  EXPECT_NE(describe(v.policy, v.calibrated).find("A/A"), std::string::npos);
}

// The suspect's first figures were taken on another machine than its baseline's: only the
// pair timed on one GPU decides, whichever way the first figures pointed.
TEST(NoiseVerdict, ThePairAloneDecides) {
  const auto book = book_of(history(0.005, 20, 2));
  // Suspected at +6 %, but today the baseline's harness is as slow beside it: no regression.
  auto v = judge(100, 106, book, true, 105.9);
  EXPECT_EQ(v.status, "pass");
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_NE(v.notes[0].find("not confirmed"), std::string::npos) << v.notes[0];
  // Not suspected (the baseline's figure came from a slow machine), but the pair shows +3 %.
  v = judge(104, 103, book, true, 100);
  ASSERT_EQ(v.status, "fail");
  EXPECT_NEAR(std::get<double>(v.reasons.at(0).figures.at("paired_slowdown")), 0.03, 1e-9);
  // A suspect whose re-measure did not time the pair is not judged: insufficient data.
  v = judge(100, 106, book, true, 0);
  EXPECT_EQ(v.status, "insufficient_data");
  EXPECT_TRUE(v.reasons.empty());
  ASSERT_EQ(v.insufficient_data.size(), 1u);
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_NE(v.notes[0].find("not judged: its re-measure job 3 (succeeded) did not time it"), std::string::npos)
      << v.notes[0];
  // Nor when the pair's rounds scatter more than the difference: today's noise decides.
  auto mine = done({timed(103, 2)}, true);
  auto& r = mine.results[0];
  r.job_id = 3;
  r.paired_median_us = 100;
  r.round_medians_us = {103, 98, 108, 103};
  r.paired_round_medians_us = {100, 95, 105, 100};
  v = decide_verdict("c", mine, std::string(40, 'a'), done({timed(100, 1)}, false), {}, &book);
  EXPECT_EQ(v.status, "pass") << "rounds 5 % apart cannot confirm 3 %";
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
