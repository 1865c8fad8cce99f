// Bisections driven to their end against simulated commits: a slowdown in noise, a
// numerics or build failure, commits that cannot be judged, a regression that does not
// reproduce, and an environment that moved under the good end.
#include "kport/porting/bisect.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

namespace kport::porting {
namespace {

const std::string k_case = "gemm.tile.s3 bf16 m=4096,n=4096,k=4096";

std::vector<std::string> commits(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("c" + std::to_string(100 + i) + std::string(36, 'a'));
  return out;
}

// What probing a commit measures now: the case's observation and the environment.
using World = std::function<CaseObservation(int index)>;

// Runs the bisection to its end, probing through `world`; counts the probes.
BisectStep drive(BisectInput in, const World& world, int& probes, ProbeEnv env = {"13.0", "580.95", "gpu-1"}) {
  for (int step = 0; step < 200; ++step) {
    BisectStep s = next_step(in);
    if (s.action == BisectStep::Action::done || s.action == BisectStep::Action::stop) return s;
    EXPECT_EQ(s.action, BisectStep::Action::probe) << s.why;
    EXPECT_FALSE(s.probe.empty()) << s.why;
    for (const auto& c : s.probe) {
      const int i = static_cast<int>(std::find(in.commits.begin(), in.commits.end(), c) - in.commits.begin());
      ProbeFact p;
      p.commit = c;
      p.finished = true;
      p.env = env;
      p.cases.push_back(world(i));
      in.probes.push_back(std::move(p));
      ++probes;
    }
  }
  ADD_FAILURE() << "the bisection did not end";
  return {};
}

CaseObservation timed(double us) {
  CaseObservation o;
  o.key = k_case;
  o.present = true;
  o.median_us = us;
  o.se_rel = 0.001;
  return o;
}

// A probe of `commit` with what it saw.
ProbeFact probe_of(const std::string& commit, bool finished, std::vector<CaseObservation> cases) {
  ProbeFact p;
  p.commit = commit;
  p.finished = finished;
  p.cases = std::move(cases);
  return p;
}

BisectInput perf_input(int n, double good_us, double bad_us, double sigma) {
  BisectInput in;
  in.kind = BisectKind::perf_regression;
  in.commits = commits(n);
  in.cases.push_back(BisectCase{k_case, good_us, bad_us, sigma});
  in.good_env = {"13.0", "580.95", "gpu-1"};
  return in;
}

TEST(Bisect, FindsAThreePercentSlowdownInRealisticNoise) {
  // 32 commits, every culprit position, 0.4 % process-to-process noise: the first bad
  // commit is found every time, in about log2(32) probes plus the two ends.
  int worst = 0;
  for (int culprit = 1; culprit < 32; ++culprit) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(culprit) * 7919);
    std::normal_distribution<double> noise(0, 0.004);
    auto world = [&](int i) { return timed(100.0 * (i >= culprit ? 1.03 : 1.0) * (1 + noise(rng))); };
    int probes = 0;
    BisectStep s = drive(perf_input(32, 100.0, 103.1, 0.004), world, probes);
    ASSERT_EQ(s.cause, BisectCause::code) << s.why;
    ASSERT_TRUE(s.first_bad) << s.why;
    EXPECT_EQ(*s.first_bad, commits(32)[static_cast<std::size_t>(culprit)]) << "culprit " << culprit << ": " << s.why;
    EXPECT_EQ(*s.last_good, commits(32)[static_cast<std::size_t>(culprit - 1)]);
    ASSERT_TRUE(s.effect && s.uncertainty);
    // The effect is the slowdown, and its interval holds the truth.
    EXPECT_NEAR(*s.effect, 0.03, *s.uncertainty + 1e-9) << s.why;
    EXPECT_GT(*s.uncertainty, 0.0);
    EXPECT_LT(*s.uncertainty, 0.02);
    EXPECT_EQ(s.suspects.size(), 1u);
    worst = std::max(worst, probes);
  }
  EXPECT_LE(worst, 12);  // 2 ends + 5 halvings + a few repeats of ambiguous figures
}

TEST(Bisect, AFigureBetweenTheEndsIsProbedAgainThenAveraged) {
  BisectInput in = perf_input(5, 100.0, 103.0, 0.004);
  in.probes.push_back(probe_of(in.commits[0], true, {timed(100.0)}));
  in.probes.push_back(probe_of(in.commits[4], true, {timed(103.0)}));
  in.probes.push_back(probe_of(in.commits[2], true, {timed(101.5)}));  // right in the middle
  BisectStep s = next_step(in);
  ASSERT_EQ(s.action, BisectStep::Action::probe);
  EXPECT_EQ(s.probe, std::vector<std::string>{in.commits[2]}) << s.why;
  in.probes.push_back(probe_of(in.commits[2], true, {timed(102.9)}));
  in.probes.push_back(probe_of(in.commits[2], true, {timed(103.1)}));
  std::vector<const ProbeFact*> of2;
  for (const auto& p : in.probes)
    if (p.commit == in.commits[2]) of2.push_back(&p);
  EXPECT_EQ(judge(in, of2), ProbeOutcome::bad);  // mean 102.5 is nearer the bad end
}

TEST(Bisect, WaitsForAnUnfinishedProbe) {
  BisectInput in = perf_input(8, 100.0, 103.0, 0.004);
  in.probes.push_back(probe_of(in.commits[0], false, {}));
  EXPECT_EQ(next_step(in).action, BisectStep::Action::wait);
}

TEST(Bisect, ProbesBothEndsFirst) {
  BisectInput in = perf_input(8, 100.0, 103.0, 0.004);
  BisectStep s = next_step(in);
  ASSERT_EQ(s.action, BisectStep::Action::probe);
  EXPECT_EQ(s.probe, (std::vector<std::string>{in.commits.front(), in.commits.back()}));
}

TEST(Bisect, ASlowdownThatDoesNotReproduceIsNoise) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0, 0.003);
  auto world = [&](int) { return timed(100.0 * (1 + noise(rng))); };
  int probes = 0;
  BisectStep s = drive(perf_input(32, 100.0, 103.5, 0.003), world, probes);
  EXPECT_EQ(s.cause, BisectCause::noise) << s.why;
  EXPECT_FALSE(s.first_bad);
  EXPECT_LE(probes, 2 * 3);  // the ends, and at most their repeats
}

TEST(Bisect, AGoodEndSlowNowWithAnotherDriverIsTheDriver) {
  auto world = [&](int) { return timed(103.0); };  // every commit slow on today's driver
  int probes = 0;
  BisectStep s = drive(perf_input(16, 100.0, 103.0, 0.003), world, probes, ProbeEnv{"13.0", "590.10", "gpu-1"});
  EXPECT_EQ(s.cause, BisectCause::driver) << s.why;
  EXPECT_FALSE(s.first_bad);
}

BisectInput check_input(BisectKind kind, int n) {
  BisectInput in;
  in.kind = kind;
  in.commits = commits(n);
  in.cases.push_back(
      BisectCase{kind == BisectKind::build_failure ? "gemm.tile" : k_case, std::nullopt, std::nullopt, 0});
  in.good_env = {"12.8", "580.95", "gpu-1"};
  return in;
}

CaseObservation checked(const std::string& key, bool failing) {
  CaseObservation o;
  o.key = key;
  o.present = true;
  o.failing = failing;
  return o;
}

TEST(Bisect, FindsANumericsFailureAndSkipsCommitsThatDidNotBuild) {
  // Commits 9..11 do not build the variant: they can be neither good nor bad.
  const int culprit = 10;
  auto world = [&](int i) {
    if (i >= 9 && i <= 11) return CaseObservation{k_case, false, false, std::nullopt, std::nullopt, std::nullopt};
    return checked(k_case, i >= culprit);
  };
  int probes = 0;
  BisectStep s = drive(check_input(BisectKind::numerics_failure, 24), world, probes, {"12.8", "580.95", "gpu-1"});
  ASSERT_EQ(s.cause, BisectCause::code) << s.why;
  ASSERT_TRUE(s.first_bad);
  // Commit 12 is the first bad one that could be judged; 9..11 could be it instead.
  EXPECT_EQ(*s.first_bad, commits(24)[12]) << s.why;
  EXPECT_EQ(*s.last_good, commits(24)[8]);
  EXPECT_EQ(s.suspects.size(), 4u);
  EXPECT_FALSE(s.effect);
}

TEST(Bisect, ABuildFailureOnlyWithTheNewToolkitIsTheToolkit) {
  auto world = [&](int) { return checked("gemm.tile", true); };  // today's toolkit fails everywhere
  int probes = 0;
  BisectStep s = drive(check_input(BisectKind::build_failure, 10), world, probes, {"13.0", "580.95", "gpu-1"});
  EXPECT_EQ(s.cause, BisectCause::toolkit) << s.why;
  EXPECT_EQ(probes, 2);
}

TEST(Bisect, AFailureThatPassesNowIsNoise) {
  auto world = [&](int) { return checked(k_case, false); };
  int probes = 0;
  BisectStep s = drive(check_input(BisectKind::numerics_failure, 10), world, probes);
  EXPECT_EQ(s.cause, BisectCause::noise) << s.why;
}

TEST(Bisect, AdjacentEndsNeedOnlyTheirProbes) {
  auto world = [&](int i) { return checked(k_case, i == 1); };
  int probes = 0;
  BisectStep s = drive(check_input(BisectKind::numerics_failure, 2), world, probes, {"12.8", "580.95", "gpu-1"});
  ASSERT_TRUE(s.first_bad);
  EXPECT_EQ(*s.first_bad, commits(2)[1]);
  EXPECT_EQ(probes, 2);
}

ProbeFact ended(const std::string& commit, ProbeEnd end, std::int64_t pipeline, const std::string& reason) {
  ProbeFact p;
  p.commit = commit;
  p.finished = true;
  p.end = end;
  p.pipeline = pipeline;
  p.end_reason = reason;
  return p;
}

TEST(Bisect, ACancelledProbeStopsTheSearchNamingIt) {
  BisectInput in = perf_input(8, 100.0, 103.0, 0.004);
  in.probes.push_back(probe_of(in.commits[0], true, {timed(100.0)}));
  in.probes.push_back(ended(in.commits[7], ProbeEnd::cancelled, 42, "its jobs were cancelled"));
  BisectStep s = next_step(in);
  ASSERT_EQ(s.action, BisectStep::Action::stop) << s.why;
  EXPECT_TRUE(s.cancelled);
  EXPECT_NE(s.why.find("pipeline 42"), std::string::npos) << s.why;
  EXPECT_NE(s.why.find(in.commits[7].substr(0, 12)), std::string::npos) << s.why;
  EXPECT_FALSE(s.first_bad);
}

TEST(Bisect, AProbeThatFailedOnTheMachineIsProbedAgainOnceThenStops) {
  BisectInput in = perf_input(8, 100.0, 103.0, 0.004);
  in.probes.push_back(probe_of(in.commits[0], true, {timed(100.0)}));
  in.probes.push_back(ended(in.commits[7], ProbeEnd::infrastructure, 11, "lease expired after 3 attempts"));
  BisectStep s = next_step(in);
  ASSERT_EQ(s.action, BisectStep::Action::probe) << s.why;
  EXPECT_EQ(s.probe, std::vector<std::string>{in.commits[7]});
  EXPECT_NE(s.why.find("pipeline 11"), std::string::npos) << s.why;
  // Its failed probe is no evidence: the search does not call the bad end skipped.
  in.probes.push_back(ended(in.commits[7], ProbeEnd::infrastructure, 12, "GPU health check failed"));
  s = next_step(in);
  ASSERT_EQ(s.action, BisectStep::Action::stop) << s.why;
  EXPECT_FALSE(s.cancelled);
  EXPECT_NE(s.why.find("pipeline 12"), std::string::npos) << s.why;
  EXPECT_NE(s.why.find("GPU health check failed"), std::string::npos) << s.why;
}

TEST(Bisect, ARetriedProbeThatMeasuresLetsTheSearchGoOn) {
  BisectInput in = perf_input(8, 100.0, 103.0, 0.004);
  in.probes.push_back(probe_of(in.commits[0], true, {timed(100.0)}));
  in.probes.push_back(ended(in.commits[7], ProbeEnd::infrastructure, 11, "lease expired"));
  in.probes.push_back(probe_of(in.commits[7], true, {timed(103.0)}));
  BisectStep s = next_step(in);
  ASSERT_EQ(s.action, BisectStep::Action::probe) << s.why;
  ASSERT_EQ(s.probe.size(), 1u);
  EXPECT_NE(s.probe[0], in.commits[7]) << "searching between the ends: " << s.why;
  EXPECT_NE(s.probe[0], in.commits[0]) << s.why;
}

TEST(Bisect, ASlowdownAcrossTwoDriversThatOneDriverDoesNotShowIsTheDriver) {
  // The verdict compared the good end on 580 with the bad end on 590; both ends probed
  // again on 580 agree: the driver, not any commit.
  BisectInput in = perf_input(16, 100.0, 103.0, 0.003);
  in.good_env = {"13.0", "580.95", "gpu-1"};
  in.bad_env = {"13.0", "590.10", "gpu-2"};
  auto world = [&](int) { return timed(100.0); };
  int probes = 0;
  BisectStep s = drive(in, world, probes, ProbeEnv{"13.0", "580.95", "gpu-1"});
  EXPECT_EQ(s.cause, BisectCause::driver) << s.why;
  EXPECT_FALSE(s.first_bad);
  EXPECT_NE(s.why.find("580.95 -> 590.10"), std::string::npos) << s.why;
  EXPECT_LE(probes, 6);
  // The same ends with one driver at both: noise, as before.
  in.bad_env = in.good_env;
  probes = 0;
  EXPECT_EQ(drive(in, world, probes, ProbeEnv{"13.0", "580.95", "gpu-1"}).cause, BisectCause::noise);
}

TEST(Bisect, ASlowdownAcrossTwoToolkitsThatOneToolkitDoesNotShowIsTheToolkit) {
  BisectInput in = perf_input(16, 100.0, 103.0, 0.003);
  in.good_env = {"12.8", "580.95", "gpu-1"};
  in.bad_env = {"13.0", "580.95", "gpu-1"};
  int probes = 0;
  BisectStep s = drive(
      in, [](int) { return timed(100.0); }, probes, ProbeEnv{"13.0", "580.95", "gpu-1"});
  EXPECT_EQ(s.cause, BisectCause::toolkit) << s.why;
  EXPECT_NE(s.why.find("12.8 -> 13.0"), std::string::npos) << s.why;
}

TEST(Bisect, ASlowdownThatReproducesOnOneDriverIsStillSearched) {
  BisectInput in = perf_input(16, 100.0, 103.0, 0.003);
  in.bad_env = {"13.0", "590.10", "gpu-2"};
  const int culprit = 9;
  int probes = 0;
  BisectStep s = drive(
      in, [&](int i) { return timed(i >= culprit ? 103.0 : 100.0); }, probes);
  EXPECT_EQ(s.cause, BisectCause::code) << s.why;
  ASSERT_TRUE(s.first_bad);
  EXPECT_EQ(*s.first_bad, in.commits[culprit]);
}

TEST(Bisect, NamesRoundTrip) {
  for (auto k : {BisectKind::perf_regression, BisectKind::numerics_failure, BisectKind::build_failure})
    EXPECT_EQ(bisect_kind_from(to_string(k)), k);
  for (auto c : {BisectCause::code, BisectCause::toolkit, BisectCause::driver, BisectCause::runner, BisectCause::noise})
    EXPECT_EQ(bisect_cause_from(to_string(c)), c);
  EXPECT_FALSE(bisect_kind_from("slow"));
}

}  // namespace
}  // namespace kport::porting
