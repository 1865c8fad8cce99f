// The commit verdict on hand-made facts: what counts, what waits, what is noise, and
// the per-result classification the commit page shows beside it.
#include "kport/porting/verdict.h"

#include <gtest/gtest.h>

namespace kport::porting {
namespace {

JobFact job(std::int64_t id, JobKind kind, JobState status) {
  JobFact j;
  j.id = id;
  j.kind = kind;
  j.status = status;
  j.target = "sm_90a";
  if (kind == JobKind::check) j.arch = "9.0";
  return j;
}

BuildFact build(const std::string& variant, BuildOutcome status, std::int64_t smem = 0, std::int64_t spills = 0) {
  BuildFact b;
  b.target = "sm_90a";
  b.family = "gemm";
  b.variant = variant;
  b.status = status;
  b.shared_mem_bytes = smem;
  b.spill_bytes = spills;
  return b;
}

ResultFact result(const std::string& variant, double median, double stddev,
                  CheckOutcome status = CheckOutcome::passed) {
  ResultFact r;
  r.target = "sm_90a";
  r.family = "gemm";
  r.variant = variant;
  r.instance = "gemm." + variant + ".default";
  r.dtype = "bf16";
  r.shape = "m=1,n=1,k=1";
  r.gpu_model = "NVIDIA H200";
  r.arch = "9.0";
  r.status = status;
  r.median_us = median;
  r.stddev_us = stddev;
  return r;
}

CommitFacts done(std::vector<BuildFact> b, std::vector<ResultFact> r) {
  CommitFacts in;
  in.jobs = {job(1, JobKind::build, JobState::succeeded), job(2, JobKind::check, JobState::succeeded)};
  in.builds = std::move(b);
  in.results = std::move(r);
  return in;
}

const std::string k_base = std::string(40, 'a');

Verdict decide(const CommitFacts& mine, const CommitFacts& base) { return decide_verdict("c", mine, k_base, base); }

TEST(Verdict, FailuresTheBaselineSharesAreNotNewButAreNoted) {
  auto base = done({build("simt", BuildOutcome::compile_error)}, {});
  auto mine = done({build("simt", BuildOutcome::compile_error)}, {});
  auto v = decide(mine, base);
  EXPECT_EQ(v.status, "pass");
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_EQ(v.notes[0], "build: gemm.simt on sm_90a still fails to compile (compile_error), as at aaaaaaaaaaaa");
  mine.builds[0].status = BuildOutcome::timeout;
  EXPECT_EQ(decide(mine, base).status, "pass") << "still failing, not newly";
  base.builds[0].status = BuildOutcome::ok;
  v = decide(mine, base);
  ASSERT_EQ(v.status, "fail");
  EXPECT_EQ(v.reasons[0].kind, "build_failure");
  EXPECT_EQ(v.reasons[0].variant, "gemm.simt");
}

// A build job with one broken variant succeeds for the others: the broken one's record is
// the only trace, and it must fail the commit.
TEST(Verdict, CompileErrorInsideASucceededBuildJobIsABuildFailure) {
  auto base = done({build("simt", BuildOutcome::ok), build("mma", BuildOutcome::ok)}, {result("mma", 100, 0.5)});
  auto mine =
      done({build("simt", BuildOutcome::compile_error), build("mma", BuildOutcome::ok)}, {result("mma", 100, 0.5)});
  mine.builds[0].message = "error: identifier \"__cvta\" is undefined\nmore";
  auto v = decide(mine, base);
  ASSERT_EQ(v.status, "fail");
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0].kind, "build_failure");
  EXPECT_EQ(
      v.reasons[0].message,
      "build: gemm.simt on sm_90a: compile_error (built at aaaaaaaaaaaa): error: identifier \"__cvta\" is undefined");
  // No baseline at all (the first commit): a compile error still counts.
  EXPECT_EQ(decide_verdict("c", mine, std::nullopt, {}).status, "fail");
}

TEST(Verdict, SlowdownsWithinNoiseOrThresholdDoNotCount) {
  auto base = done({}, {result("mma", 100, 0.5)});
  // +2%: under the 3% threshold.
  EXPECT_EQ(decide(done({}, {result("mma", 102, 0.5)}), base).status, "pass");
  // +5% but the two measurements' noise is 2 * sqrt(4^2 + 4^2) = 11.3 us.
  EXPECT_EQ(decide(done({}, {result("mma", 105, 4)}), base).status, "pass");
  // +5% outside the noise: a suspect that asks for its re-measure first.
  auto v = decide(done({}, {result("mma", 105, 0.5)}), base);
  EXPECT_EQ(v.status, "pending");
  ASSERT_EQ(v.remeasure.size(), 1u);
  EXPECT_EQ(v.remeasure[0].instances, std::vector<std::string>{"gemm.mma.default"});
  // Re-measured (its job finished) without the baseline's harness beside it: the first
  // figures were taken on other machines than the baseline's, so nothing is judged.
  auto mine = done({}, {result("mma", 105, 0.5)});
  mine.jobs.push_back(job(3, JobKind::check, JobState::succeeded));
  mine.remeasures.push_back(RemeasureFact{"sm_90a", "NVIDIA H200", 3});
  v = decide(mine, base);
  EXPECT_EQ(v.status, "insufficient_data");
  EXPECT_TRUE(v.reasons.empty());
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_NE(v.notes[0].find("+5.0%"), std::string::npos) << v.notes[0];
  EXPECT_NE(v.notes[0].find("not judged: its re-measure job 3 (succeeded) did not time it"), std::string::npos)
      << v.notes[0];
  // A re-measure that failed before timing it: the same, and the note says so.
  mine.jobs.back().status = JobState::failed;
  v = decide(mine, base);
  EXPECT_EQ(v.status, "insufficient_data");
  EXPECT_NE(v.notes.at(0).find("its re-measure job 3 (failed) did not time it"), std::string::npos) << v.notes[0];
  // The re-measure still running: wait for it.
  mine.jobs.back().status = JobState::running;
  EXPECT_EQ(decide(mine, base).status, "pending");
}

// A re-measure times every case of the suspect's instance, cases its baseline never
// measured among them: those have nothing to compare with and say nothing.
TEST(Verdict, ARemeasuredCaseTheBaselineNeverMeasuredIsNotJudged) {
  auto base = done({}, {result("mma", 100, 0.5)});
  auto mine = done({}, {result("mma", 100.1, 0.5)});
  mine.jobs.push_back(job(3, JobKind::check, JobState::succeeded));
  mine.remeasures.push_back(RemeasureFact{"sm_90a", "NVIDIA H200", 3});
  ResultFact other = result("mma", 130, 0.5);
  other.shape = "m=2,n=2,k=2";
  other.job_id = 3;
  other.paired_median_us = 100;
  other.paired_stddev_us = 0.5;
  mine.results.push_back(other);
  auto v = decide(mine, base);
  EXPECT_EQ(v.status, "pass");
  EXPECT_TRUE(v.reasons.empty());
  EXPECT_TRUE(v.notes.empty());
  // The same when the baseline has the case but failed it, or checked it without timing.
  ResultFact failed = other;
  failed.status = CheckOutcome::failed;
  failed.job_id.reset();
  failed.paired_median_us.reset();
  failed.paired_stddev_us.reset();
  failed.median_us = 100;
  base.results.push_back(failed);
  v = decide(mine, base);
  EXPECT_TRUE(v.reasons.empty());
  base.results.back().status = CheckOutcome::passed;
  base.results.back().median_us.reset();
  v = decide(mine, base);
  EXPECT_TRUE(v.reasons.empty());
}

// A re-measure that timed the baseline's harness in rounds interleaved with its own
// (A/B/A/B on one GPU) confirms a slowdown only when that pair shows it too.
TEST(Verdict, ASlowdownCountsOnlyWhenTheInterleavedPairShowsIt) {
  auto base = done({}, {result("mma", 100, 0.5)});
  auto mine = done({}, {result("mma", 105, 0.5)});
  mine.jobs.push_back(job(3, JobKind::check, JobState::succeeded));
  mine.remeasures.push_back(RemeasureFact{"sm_90a", "NVIDIA H200", 3});
  mine.results[0].job_id = 3;
  // The baseline's harness is as slow today on this GPU: the machine moved, not the code.
  mine.results[0].paired_median_us = 104.9;
  mine.results[0].paired_stddev_us = 0.5;
  auto v = decide(mine, base);
  EXPECT_EQ(v.status, "pass");
  EXPECT_TRUE(v.reasons.empty());
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_NE(v.notes[0].find("not confirmed: timed against the baseline's harness in interleaved rounds"),
            std::string::npos)
      << v.notes[0];
  EXPECT_EQ(v.notes[0].find("driver"), std::string::npos) << v.notes[0];
  // The first figures were taken under two drivers: the note puts the gap on the driver.
  base.results[0].driver = "570.86";
  mine.results[0].driver = "580.159.04";
  v = decide(mine, base);
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_NE(v.notes[0].find("the baseline's figure was taken with driver 570.86 and this one with 580.159.04: the gap "
                            "is the driver's, not the code's"),
            std::string::npos)
      << v.notes[0];
  base.results[0].driver.clear();
  mine.results[0].driver.clear();
  // The pair differs as the first figures did: confirmed.
  mine.results[0].paired_median_us = 100.1;
  v = decide(mine, base);
  ASSERT_EQ(v.status, "fail");
  EXPECT_NE(v.reasons[0].message.find("confirmed against the baseline's harness in interleaved rounds"),
            std::string::npos)
      << v.reasons[0].message;
  EXPECT_NEAR(std::get<double>(v.reasons[0].figures.at("paired_slowdown")), 105.0 / 100.1 - 1, 1e-9);
  // ... also from a re-measure job that failed (it checked a case that fails numerics):
  // its timed figures are as good as any.
  mine.jobs[2].status = JobState::failed;
  EXPECT_EQ(decide(mine, base).status, "fail");
  mine.jobs[2].status = JobState::succeeded;
  // A pair from another job (not the re-measure) is not the confirmation, and without it
  // nothing is judged.
  mine.results[0].job_id = 2;
  EXPECT_EQ(decide(mine, base).status, "insufficient_data");
}

TEST(Verdict, AnUnstableFigureNeverCountsAsARegressionOnItsOwn) {
  auto base = done({}, {result("mma", 100, 0.5)});
  auto mine = done({}, {result("mma", 140, 0.5)});
  mine.results[0].unstable = true;
  mine.jobs.push_back(job(3, JobKind::check, JobState::succeeded));
  mine.remeasures.push_back(RemeasureFact{"sm_90a", "NVIDIA H200", 3});
  auto v = decide(mine, base);
  EXPECT_EQ(v.status, "pass");
  EXPECT_TRUE(v.remeasure.empty()) << "nothing to re-measure: the runner already did";
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_NE(v.notes[0].find("+40.0%"), std::string::npos) << v.notes[0];
  EXPECT_NE(v.notes[0].find("this figure is unstable"), std::string::npos) << v.notes[0];
  // An unstable baseline speaks for nothing either.
  mine.results[0].unstable = false;
  base.results[0].unstable = true;
  v = decide(mine, base);
  EXPECT_EQ(v.status, "pass");
  EXPECT_NE(v.notes.at(0).find("the baseline figure is unstable"), std::string::npos) << v.notes[0];
  // ... but an unstable figure that fails numerics is a failure like any other.
  mine.results[0].unstable = true;
  mine.results[0].status = CheckOutcome::failed;
  EXPECT_EQ(decide(mine, base).status, "fail");
}

TEST(Verdict, ResourceGrowthAndNumerics) {
  auto base = done({build("mma", BuildOutcome::ok, 1024, 0)}, {result("mma", 100, 0.5)});
  auto mine = done({build("mma", BuildOutcome::ok, 1024, 16)}, {result("mma", 100, 0.5, CheckOutcome::crashed)});
  auto v = decide(mine, base);
  ASSERT_EQ(v.reasons.size(), 2u);
  EXPECT_EQ(v.reasons[0].kind, "resource_regression");
  EXPECT_NE(v.reasons[0].message.find("new register spills 0 -> 16 B"), std::string::npos) << v.reasons[0].message;
  EXPECT_EQ(v.reasons[1].kind, "numerics_failure");
  EXPECT_EQ(v.reasons[1].gpu_model, "NVIDIA H200");
  EXPECT_EQ(std::get<std::string>(v.reasons[1].figures.at("status")), "crashed");
  // Less shared memory is no regression.
  EXPECT_EQ(decide(done({build("mma", BuildOutcome::ok, 512)}, {}), base).status, "pass");
}

TEST(Verdict, UnfinishedJobsKeepItPendingAndNoJobsIsNoVerdict) {
  auto mine = done({}, {});
  mine.jobs[1].status = JobState::awaiting_runner;
  auto v = decide_verdict("c", mine, std::nullopt, {});
  EXPECT_EQ(v.status, "pending");
  EXPECT_NE(v.waiting[0].find("awaiting_runner"), std::string::npos);
  EXPECT_EQ(decide_verdict("c", {}, std::nullopt, {}).status, "pending");
}

TEST(Verdict, FailedJobWithoutRecordsCounts) {
  auto mine = done({}, {});
  mine.jobs[1].status = JobState::failed;
  mine.jobs[1].failure_reason = "the harness for sm_90a holds no instance to check";
  auto v = decide_verdict("c", mine, std::nullopt, {});
  ASSERT_EQ(v.status, "fail");
  EXPECT_EQ(v.reasons[0].kind, "job_failure");
  EXPECT_NE(v.reasons[0].message.find("holds no instance"), std::string::npos);
  // A lease that expired is the machine's (flake_test.cpp): never the commit's.
  mine.jobs[1].failure_reason = "lease expired after 3 attempts";
  EXPECT_EQ(decide_verdict("c", mine, std::nullopt, {}).status, "insufficient_data");
}

// One arch's check split over two GPUs by family: the part that failed without a result
// counts, though the other part stored results for the same target and arch.
TEST(Verdict, AFailedPartOfASplitCheckCountsBesideThePartWithResults) {
  auto mine = done({}, {result("mma", 100, 0.5)});
  mine.results[0].job_id = 2;
  mine.jobs.push_back(mine.jobs[1]);
  mine.jobs[2].id = 3;
  mine.jobs[2].status = JobState::failed;
  mine.jobs[2].failure_reason = "the harness for sm_90a holds no instance to check among those asked for";
  auto v = decide_verdict("c", mine, std::nullopt, {});
  ASSERT_EQ(v.status, "fail");
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0].kind, "job_failure");
  EXPECT_EQ(std::get<std::int64_t>(v.reasons[0].figures.at("job")), 3);
  // The part with results failing (some case did not pass) is judged by its results.
  mine.jobs[2].status = JobState::succeeded;
  mine.jobs[1].status = JobState::failed;
  mine.jobs[1].failure_reason = "1 case(s) did not pass";
  EXPECT_EQ(decide_verdict("c", mine, std::nullopt, {}).status, "pass");
}

// The commit page's per-result kinds are the verdict's decisions, one by one.
TEST(Verdict, ClassifyIsTheVerdictsComparison) {
  const VerdictPolicy p;
  auto before = result("k", 100, 0.5);
  EXPECT_EQ(classify(&before, result("k", 105, 0.5), p), Change::regressed);
  EXPECT_EQ(classify(&before, result("k", 95, 0.5), p), Change::improved);
  EXPECT_EQ(classify(&before, result("k", 102, 0.5), p), Change::unchanged) << "under 3%";
  EXPECT_EQ(classify(&before, result("k", 110, 5), p), Change::unchanged) << "inside 2 combined sigmas";
  EXPECT_EQ(classify(&before, result("k", 0, 0, CheckOutcome::timeout), p), Change::new_failure);
  EXPECT_EQ(classify(nullptr, result("k", 0, 0, CheckOutcome::failed), p), Change::new_failure)
      << "a failure with nothing to compare is new, as the verdict counts it";
  EXPECT_EQ(classify(nullptr, result("k", 100, 0.5), p), Change::added);
  auto failed = result("k", 0, 0, CheckOutcome::failed);
  EXPECT_EQ(classify(&failed, result("k", 100, 0.5), p), Change::fixed);
  EXPECT_EQ(classify(&failed, result("k", 0, 0, CheckOutcome::crashed), p), Change::still_failing);
  auto shaky = result("k", 140, 0.5);
  shaky.unstable = true;
  EXPECT_EQ(classify(&before, shaky, p), Change::unstable);
  // Stricter policy, stricter page: the same policy object drives both.
  VerdictPolicy loose{0.10, 3.0, {}};
  EXPECT_EQ(classify(&before, result("k", 105, 0.5), loose), Change::unchanged);
  EXPECT_NE(describe(p).find("3% or more and beyond 2 combined standard deviations"), std::string::npos) << describe(p);
}

TEST(Verdict, DriversAreComparedOnTheSameConfiguration) {
  std::vector<ResultFact> before{result("mma", 100, 0.5)}, now{result("mma", 120, 0.5)};
  auto reasons = compare_drivers(now, before, "600.2", "600.1");
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].message.find("than driver 600.1"), std::string::npos) << reasons[0].message;
  EXPECT_EQ(std::get<std::string>(reasons[0].figures.at("driver")), "600.2");
  now[0].median_us = 100.2;
  EXPECT_TRUE(compare_drivers(now, before, "600.2", "600.1").empty());
  now[0].status = CheckOutcome::failed;
  ASSERT_EQ(compare_drivers(now, before, "600.2", "600.1").size(), 1u);
  EXPECT_EQ(compare_drivers(now, before, "600.2", "600.1")[0].kind, "numerics_failure");
  EXPECT_NE(compare_drivers(now, before, "600.2", "600.1")[0].message.find("(passed with driver 600.1) (driver 600.2)"),
            std::string::npos)
      << compare_drivers(now, before, "600.2", "600.1")[0].message;
}

// Two libraries naming an instance alike on one GPU model: each library's new-driver
// figure is compared with its own figure from the previous driver. Keyed without the
// library, the fast library's 10 us would stand against the slow one's 100 us and both
// answers would be wrong: the slow library "improved", the fast one's slowdown unseen.
TEST(Verdict, DriversAreComparedWithinEachLibrary) {
  auto of = [](const std::string& repo, double median_us) {
    ResultFact r = result("mma", median_us, 0.5);
    r.repo = repo;
    return r;
  };
  const std::vector<ResultFact> before{of("fast-lib", 10), of("slow-lib", 100)};
  const std::vector<ResultFact> now{of("fast-lib", 30), of("slow-lib", 100)};
  auto reasons = compare_drivers(now, before, "600.2", "600.1");
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(std::get<std::string>(reasons[0].figures.at("library")), "fast-lib");
  EXPECT_DOUBLE_EQ(std::get<double>(reasons[0].figures.at("baseline_median_us")), 10.0);
  EXPECT_NE(reasons[0].message.find("(library fast-lib, driver 600.2)"), std::string::npos) << reasons[0].message;
  // A library whose configuration the previous driver never measured has nothing to be
  // compared with, even where another library's figure of that name exists.
  const std::vector<ResultFact> only_slow{of("slow-lib", 100)};
  EXPECT_TRUE(compare_drivers(std::vector<ResultFact>{of("fast-lib", 300)}, only_slow, "600.2", "600.1").empty());
}

}  // namespace
}  // namespace kport::porting
