// The verdict rules on hand-made inputs: what counts, what waits, what is noise.
#include "verdict.h"

#include <gtest/gtest.h>

namespace kport::coordinator {
namespace {

db::Job job(std::int64_t id, db::JobKind kind, db::JobStatus status) {
  db::Job j;
  j.id = id;
  j.kind = kind;
  j.status = status;
  j.target = "sm_90a";
  if (kind == db::JobKind::check) j.arch = "9.0";
  return j;
}

db::BuildRecord build(const std::string& variant, db::BuildStatus status, std::int64_t smem = 0, std::int64_t spills = 0) {
  db::BuildRecord b;
  b.target = "sm_90a";
  b.family = "gemm";
  b.variant = variant;
  b.status = status;
  b.shared_mem_bytes = smem;
  b.spill_stores_bytes = spills;
  return b;
}

db::ResultRecord result(const std::string& variant, double median, double stddev, db::ResultStatus status = db::ResultStatus::passed) {
  db::ResultRecord r;
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

db::VerdictInputs done(std::vector<db::BuildRecord> b, std::vector<db::ResultRecord> r) {
  db::VerdictInputs in;
  in.jobs = {job(1, db::JobKind::build, db::JobStatus::succeeded), job(2, db::JobKind::check, db::JobStatus::succeeded)};
  in.builds = std::move(b);
  in.results = std::move(r);
  return in;
}

const std::string k_base = std::string(40, 'a');

TEST(VerdictRules, FailuresTheBaselineSharesAreNotNew) {
  auto base = done({build("simt", db::BuildStatus::compile_error)}, {});
  auto mine = done({build("simt", db::BuildStatus::compile_error)}, {});
  auto v = decide("c", mine, k_base, base);
  EXPECT_EQ(v.status, "pass");
  mine.builds[0].status = db::BuildStatus::timeout;
  EXPECT_EQ(decide("c", mine, k_base, base).status, "pass") << "still failing, not newly";
  base.builds[0].status = db::BuildStatus::ok;
  v = decide("c", mine, k_base, base);
  ASSERT_EQ(v.status, "fail");
  EXPECT_EQ(v.reasons[0].kind, "build_failure");
  EXPECT_EQ(v.reasons[0].variant, "gemm.simt");
}

TEST(VerdictRules, SlowdownsWithinNoiseOrThresholdDoNotCount) {
  auto base = done({}, {result("mma", 100, 0.5)});
  // +2%: under the 3% threshold.
  EXPECT_EQ(decide("c", done({}, {result("mma", 102, 0.5)}), k_base, base).status, "pass");
  // +5% but the two measurements' noise is 2 * sqrt(4^2 + 4^2) = 11.3 us.
  EXPECT_EQ(decide("c", done({}, {result("mma", 105, 4)}), k_base, base).status, "pass");
  // +5% outside the noise: a suspect that asks for its re-measure first.
  auto v = decide("c", done({}, {result("mma", 105, 0.5)}), k_base, base);
  EXPECT_EQ(v.status, "pending");
  ASSERT_EQ(v.remeasure.size(), 1u);
  EXPECT_EQ(v.remeasure[0].instances, std::vector<std::string>{"gemm.mma.default"});
  // Re-measured (its job finished): now it counts.
  auto mine = done({}, {result("mma", 105, 0.5)});
  mine.jobs.push_back(job(3, db::JobKind::check, db::JobStatus::succeeded));
  mine.remeasures.push_back(db::Remeasure{"c", "sm_90a", "NVIDIA H200", 3, "[]", 0});
  v = decide("c", mine, k_base, base);
  ASSERT_EQ(v.status, "fail");
  EXPECT_EQ(v.reasons[0].kind, "perf_regression");
  EXPECT_NE(v.reasons[0].message.find("+5.0%"), std::string::npos) << v.reasons[0].message;
  EXPECT_NE(v.reasons[0].message.find("(re-measured)"), std::string::npos) << v.reasons[0].message;
  // A re-measure that failed leaves the first figures, and the reason says so.
  mine.jobs.back().status = db::JobStatus::failed;
  v = decide("c", mine, k_base, base);
  ASSERT_EQ(v.status, "fail");
  EXPECT_NE(v.reasons[0].message.find("(re-measure job 3 failed)"), std::string::npos) << v.reasons[0].message;
  // The re-measure still running: wait for it.
  mine.jobs.back().status = db::JobStatus::running;
  EXPECT_EQ(decide("c", mine, k_base, base).status, "pending");
}

TEST(VerdictRules, ResourceGrowthAndNumerics) {
  auto base = done({build("mma", db::BuildStatus::ok, 1024, 0)}, {result("mma", 100, 0.5)});
  auto mine = done({build("mma", db::BuildStatus::ok, 1024, 16)}, {result("mma", 100, 0.5, db::ResultStatus::crashed)});
  auto v = decide("c", mine, k_base, base);
  ASSERT_EQ(v.reasons.size(), 2u);
  EXPECT_EQ(v.reasons[0].kind, "resource_regression");
  EXPECT_NE(v.reasons[0].message.find("new register spills 0 -> 16 B"), std::string::npos) << v.reasons[0].message;
  EXPECT_EQ(v.reasons[1].kind, "numerics_failure");
  EXPECT_EQ(v.reasons[1].gpu_model, "NVIDIA H200");
  // Less shared memory is no regression.
  EXPECT_EQ(decide("c", done({build("mma", db::BuildStatus::ok, 512)}, {}), k_base, base).status, "pass");
}

TEST(VerdictRules, UnfinishedJobsKeepItPendingAndNoJobsIsNoVerdict) {
  auto mine = done({}, {});
  mine.jobs[1].status = db::JobStatus::awaiting_runner;
  auto v = decide("c", mine, std::nullopt, {});
  EXPECT_EQ(v.status, "pending");
  EXPECT_NE(v.waiting[0].find("awaiting_runner"), std::string::npos);
  EXPECT_EQ(decide("c", {}, std::nullopt, {}).status, "pending");
}

TEST(VerdictRules, DriversAreComparedOnTheSameConfiguration) {
  std::vector<db::ResultRecord> before{result("mma", 100, 0.5)}, now{result("mma", 120, 0.5)};
  auto reasons = compare_drivers(now, before, "600.2", "600.1");
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].message.find("than driver 600.1"), std::string::npos) << reasons[0].message;
  now[0].median_us = 100.2;
  EXPECT_TRUE(compare_drivers(now, before, "600.2", "600.1").empty());
}

}  // namespace
}  // namespace kport::coordinator
