// The dashboard's decisions: which stage a variant reached, how a commit's results
// compare with its parent's, and how a kernel's history maps to a share of peak.
#include "dashboard_views.h"

#include <gtest/gtest.h>

namespace kport::coordinator {
namespace {
namespace json = boost::json;

db::ResultBrief brief(std::string instance, db::ResultStatus status, std::optional<double> median = {},
                      std::optional<double> stddev = {}) {
  db::ResultBrief b;
  b.id = static_cast<std::int64_t>(instance.size());
  b.target = "sm_90a";
  b.gpu_model = "NVIDIA H200";
  b.family = "gemm";
  b.variant = "v";
  b.instance = std::move(instance);
  b.dtype = "bf16";
  b.shape = "m=1,n=1,k=1";
  b.status = status;
  b.median_us = median;
  b.stddev_us = stddev;
  return b;
}

constexpr auto pass = db::ResultStatus::passed;
constexpr auto fail = db::ResultStatus::failed;

TEST(DashboardCommitDiff, ClassifiesEveryKindAgainstTheParent) {
  std::vector<db::ResultBrief> before = {
      brief("fixed", fail),          brief("broken", pass, 100, 1),   brief("still", fail),
      brief("slower", pass, 100, 1), brief("faster", pass, 100, 1),   brief("noise", pass, 100, 1),
      brief("gone", pass, 100, 1)};
  std::vector<db::ResultBrief> after = {
      brief("fixed", pass, 100, 1),  brief("broken", fail),           brief("still", db::ResultStatus::crashed),
      brief("slower", pass, 120, 1), brief("faster", pass, 80, 1),    brief("noise", pass, 104, 1),
      brief("new", pass, 50, 1)};
  json::object out = commit_diff_json(after, before, 100);
  const auto& counts = out.at("groups").as_array().at(0).as_object().at("counts").as_object();
  for (const char* kind : {"fixed", "new_failure", "still_failing", "regressed", "improved", "unchanged", "added", "dropped"})
    EXPECT_EQ(counts.at(kind).as_int64(), 1) << kind;
  const auto& changes = out.at("groups").as_array().at(0).as_object().at("changes").as_array();
  ASSERT_EQ(changes.size(), 5u);
  // Failures come first, so a reader sees what broke before what got faster.
  EXPECT_EQ(changes.at(0).as_object().at("kind").as_string(), "new_failure");
  EXPECT_EQ(changes.at(1).as_object().at("kind").as_string(), "regressed");
  EXPECT_NEAR(changes.at(1).as_object().at("delta").as_double(), 0.2, 1e-9);
}

TEST(DashboardCommitDiff, ChangeWithinTheMeasuredNoiseIsNotARegression) {
  // +10% but each side has a 5 us standard deviation: 3 combined sigmas is 21 us.
  json::object out = commit_diff_json({brief("k", pass, 110, 5)}, {brief("k", pass, 100, 5)}, 100);
  EXPECT_EQ(out.at("totals").as_object().at("regressed").as_int64(), 0);
  EXPECT_EQ(out.at("totals").as_object().at("unchanged").as_int64(), 1);
}

TEST(DashboardStages, EachStageNeedsThePreviousOne) {
  db::VariantBoard v;
  v.build_status = "not_applicable";
  v.passed = 3;
  EXPECT_TRUE(stage_flags(v).not_applicable);
  EXPECT_FALSE(stage_flags(v).numerics_passed) << "results do not count where a feature is missing";

  v.build_status = "ok";
  v.spill_bytes = 64;
  v.measured = 0;
  v.selected = 2;
  StageFlags f = stage_flags(v);
  EXPECT_TRUE(f.built);
  EXPECT_FALSE(f.resources_clean);
  EXPECT_TRUE(f.numerics_passed);
  EXPECT_FALSE(f.measured);
  EXPECT_FALSE(f.selected) << "selection without a timed result is not shown";

  json::object p = progress_json({v});
  EXPECT_EQ(p.at("applicable").as_int64(), 1);
  EXPECT_EQ(p.at("builds").as_int64(), 1);
  EXPECT_EQ(p.at("resources_clean").as_int64(), 0);
}

TEST(DashboardKernel, ShareOfPeakAndItsBandFollowTheTimeBand) {
  db::KernelPoint p;
  p.gpu_model = "NVIDIA H200";
  p.commit_sha = "abc";
  p.median_us = 100;
  p.low_us = 90;
  p.high_us = 125;
  p.tflops = 500;
  json::array series = kernel_series_json({p}, {db::GpuPeak{"NVIDIA H200", 1000.0, {}}}, false);
  const auto& points = series.at(0).as_object().at("points").as_object();
  auto first = [&](const char* column) { return points.at(column).as_array().at(0).as_double(); };
  EXPECT_DOUBLE_EQ(first("share"), 0.5);
  EXPECT_DOUBLE_EQ(first("share_low"), 0.4);  // slower end of the band
  EXPECT_NEAR(first("share_high"), 0.5 * 100 / 90, 1e-4);  // four significant digits
  EXPECT_EQ(series.at(0).as_object().at("unit").as_string(), "TFLOP/s");
}

}  // namespace
}  // namespace kport::coordinator
