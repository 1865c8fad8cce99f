// Flaky cases from constructed run histories, their release, and the verdict that lists
// them instead of failing; infrastructure failures that are never the commit's.
#include "kport/porting/flake.h"

#include <gtest/gtest.h>

namespace kport::porting {
namespace {

const CaseKey k_case{"NVIDIA H200", "gemm.mma.default", "bf16", "m=128,n=128,k=64"};

CaseRun run(const std::string& code, CheckOutcome status, std::int64_t t,
            std::optional<std::int64_t> seed = std::nullopt) {
  CaseRun r;
  r.code = code;
  r.commit = "c-" + code;
  r.status = status;
  r.time_ms = t;
  r.result = t;
  r.seed = seed;
  return r;
}

TEST(Flake, APassAndAFailureOfTheSameCodeIsFlaky) {
  const auto f = decide_flake(k_case, {run("h1", CheckOutcome::passed, 1), run("h1", CheckOutcome::failed, 2, 77),
                                       run("h1", CheckOutcome::passed, 3)});
  EXPECT_TRUE(f.flaky);
  EXPECT_EQ(f.since_ms, 2);
  EXPECT_EQ(f.first_commit, "c-h1");
  EXPECT_EQ(f.runs, 3);
  EXPECT_EQ(f.failures, 1);
  ASSERT_EQ(f.failed.size(), 1u);
  EXPECT_EQ(f.failed[0].seed, 77) << "the seed that failed, to replay";
  EXPECT_EQ(f.to_release, 4);
}

TEST(Flake, AChangeBetweenCodesIsNotAFlake) {
  // Passed on one build, fails on the next: the commit broke it.
  const auto f = decide_flake(k_case, {run("h1", CheckOutcome::passed, 1), run("h2", CheckOutcome::failed, 2),
                                       run("h2", CheckOutcome::crashed, 3)});
  EXPECT_FALSE(f.flaky);
  EXPECT_FALSE(f.released);
  EXPECT_EQ(f.failures, 2);
}

TEST(Flake, FailuresBeforeTheEvidenceAreListedAndLaterOnesToo) {
  const auto f = decide_flake(k_case, {run("h1", CheckOutcome::timeout, 1, 5), run("h1", CheckOutcome::passed, 2),
                                       run("h2", CheckOutcome::crashed, 3, 6)});
  ASSERT_TRUE(f.flaky);
  EXPECT_EQ(f.since_ms, 2);
  ASSERT_EQ(f.failed.size(), 2u);
  EXPECT_EQ(f.failed[0].seed, 5);
  EXPECT_EQ(f.failed[1].status, CheckOutcome::crashed);
}

TEST(Flake, ReleasedAfterNCleanRunsAndFlakyAgainOnlyWithNewEvidence) {
  std::vector<CaseRun> runs{run("h1", CheckOutcome::passed, 1), run("h1", CheckOutcome::failed, 2)};
  for (int i = 0; i < 4; ++i) runs.push_back(run("h2", CheckOutcome::passed, 10 + i));
  FlakePolicy p;
  p.release_after = 5;
  auto f = decide_flake(k_case, runs, p);
  EXPECT_TRUE(f.flaky);
  EXPECT_EQ(f.to_release, 1);
  runs.push_back(run("h2", CheckOutcome::passed, 20));
  f = decide_flake(k_case, runs, p);
  EXPECT_FALSE(f.flaky);
  EXPECT_TRUE(f.released);
  EXPECT_EQ(f.to_release, 0);
  runs.push_back(run("h3", CheckOutcome::failed, 30));
  f = decide_flake(k_case, runs, p);
  EXPECT_FALSE(f.flaky) << "a released case's failure is a failure again";
  runs.push_back(run("h3", CheckOutcome::passed, 31));
  EXPECT_TRUE(decide_flake(k_case, runs, p).flaky);
}

TEST(Flake, InfrastructureRunsAreLeftOut) {
  auto crash = run("h1", CheckOutcome::crashed, 2);
  crash.infrastructure = true;
  const auto f = decide_flake(k_case, {run("h1", CheckOutcome::passed, 1), crash});
  EXPECT_FALSE(f.flaky);
  EXPECT_EQ(f.runs, 1);
}

TEST(Flake, InfrastructureFailureReasonsAndMassFailures) {
  EXPECT_TRUE(infrastructure_failure("lease expired after 3 attempts"));
  EXPECT_TRUE(infrastructure_failure("runner deregistered after 1 attempt"));
  EXPECT_TRUE(infrastructure_failure("GPU GPU-1 failed its health check; still: no device"));
  EXPECT_FALSE(infrastructure_failure("cannot check out commit"));
  EXPECT_TRUE(mass_failure(10, 6));
  EXPECT_FALSE(mass_failure(10, 5)) << "half is not most";
  EXPECT_FALSE(mass_failure(3, 3)) << "too few to tell a machine from a broken kernel";
}

// ---- in the verdict ---------------------------------------------------------------

ResultFact checked(const std::string& instance, CheckOutcome status, std::int64_t job) {
  ResultFact r;
  r.id = job * 100 + static_cast<std::int64_t>(instance.size());
  r.target = "sm_90a";
  r.family = "gemm";
  r.variant = "mma";
  r.instance = instance;
  r.dtype = k_case.dtype;
  r.shape = k_case.shape;
  r.gpu_model = k_case.gpu_model;
  r.arch = "9.0";
  r.status = status;
  r.job_id = job;
  r.seed = 42;
  return r;
}

CommitFacts facts(std::vector<ResultFact> results, JobState check = JobState::succeeded, std::string reason = "") {
  CommitFacts in;
  JobFact b{1, JobKind::build, JobState::succeeded, "sm_90a", {}, {}, {}};
  JobFact c{2, JobKind::check, check, "sm_90a", "9.0", k_case.gpu_model, {}};
  if (!reason.empty()) c.failure_reason = reason;
  in.jobs = {b, c};
  in.results = std::move(results);
  return in;
}

TEST(FlakeVerdict, AFlakyCaseIsListedNotCounted) {
  const auto base = facts({checked(k_case.instance, CheckOutcome::passed, 1)});
  const auto mine = facts({checked(k_case.instance, CheckOutcome::failed, 2)});
  auto v = decide_verdict("c", mine, std::string(40, 'a'), base);
  EXPECT_EQ(v.status, "fail") << "not known to be flaky: a failure";
  FlakeBook book;
  book.emplace(k_case,
               decide_flake(k_case, {run("h1", CheckOutcome::passed, 1), run("h1", CheckOutcome::failed, 2, 42)}));
  v = decide_verdict("c", mine, std::string(40, 'a'), base, {}, nullptr, &book);
  EXPECT_EQ(v.status, "pass");
  ASSERT_EQ(v.flaky.size(), 1u);
  EXPECT_EQ(v.flaky[0].seed, 42);
  EXPECT_EQ(v.flaky[0].to_release, 5) << "its last run failed";
}

TEST(FlakeVerdict, MostCasesOfAJobCrashingIsTheMachine) {
  std::vector<ResultFact> base_r, mine_r;
  for (int i = 0; i < 6; ++i) {
    const std::string inst = "gemm.mma.i" + std::to_string(i);
    base_r.push_back(checked(inst, CheckOutcome::passed, 1));
    mine_r.push_back(checked(inst, i < 4 ? CheckOutcome::crashed : CheckOutcome::passed, 2));
  }
  const auto v = decide_verdict("c", facts(mine_r), std::string(40, 'a'), facts(base_r));
  EXPECT_TRUE(v.reasons.empty());
  EXPECT_EQ(v.infrastructure.size(), 4u);
  EXPECT_EQ(v.status, "pending") << "checked once more first";
  ASSERT_EQ(v.remeasure.size(), 1u);
  EXPECT_EQ(v.remeasure[0].instances.size(), 4u);
  // A re-check that left these figures standing (it did not rerun them): still the
  // machine's, and not a pass.
  auto rechecked = facts(mine_r);
  rechecked.jobs.push_back(JobFact{3, JobKind::check, JobState::succeeded, "sm_90a", "9.0", k_case.gpu_model, {}});
  rechecked.remeasures.push_back({"sm_90a", k_case.gpu_model, 3});
  auto after = decide_verdict("c", rechecked, std::string(40, 'a'), facts(base_r));
  EXPECT_EQ(after.status, "insufficient_data") << "lost figures are not a pass";
  // The re-check failed en masse too: a commit that breaks every kernel, not a machine.
  for (auto& r : rechecked.results)
    if (r.status == CheckOutcome::crashed) r.job_id = 3;
  after = decide_verdict("c", rechecked, std::string(40, 'a'), facts(base_r));
  EXPECT_EQ(after.status, "fail");
  EXPECT_EQ(after.reasons.size(), 4u);
  mine_r[0].status = CheckOutcome::crashed;
  mine_r[1].status = CheckOutcome::passed;
  mine_r[2].status = CheckOutcome::passed;
  mine_r[3].status = CheckOutcome::passed;
  const auto one = decide_verdict("c", facts(mine_r), std::string(40, 'a'), facts(base_r));
  EXPECT_EQ(one.status, "fail") << "one crash among many passes is the kernel's";
}

TEST(FlakeVerdict, ALostLeaseIsNotTheCommitsFailure) {
  const auto v = decide_verdict("c", facts({}, JobState::failed, "lease expired after 3 attempts"),
                                std::string(40, 'a'), facts({}));
  EXPECT_TRUE(v.reasons.empty());
  ASSERT_EQ(v.infrastructure.size(), 1u);
  EXPECT_EQ(v.status, "insufficient_data");
  const auto code =
      decide_verdict("c", facts({}, JobState::failed, "cannot check out commit"), std::string(40, 'a'), facts({}));
  EXPECT_EQ(code.status, "fail");
}

}  // namespace
}  // namespace kport::porting
