// The dashboard's views of the shared rules: the stages a target page shows, how a
// commit's results compare with its baseline, and how a kernel's history maps to a share
// of peak.
#include "dashboard_views.h"

#include "bringup_stages.h"

#include <gtest/gtest.h>

namespace kport::coordinator {
namespace {
namespace json = boost::json;

porting::ResultFact brief(std::string instance, porting::CheckOutcome status, std::optional<double> median = {},
                          std::optional<double> stddev = {}) {
  porting::ResultFact b;
  b.id = static_cast<std::int64_t>(instance.size());
  b.target = "sm_90a";
  b.gpu_model = "NVIDIA H200";
  b.arch = "9.0";
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

constexpr auto pass = porting::CheckOutcome::passed;
constexpr auto fail = porting::CheckOutcome::failed;
const porting::VerdictPolicy k_policy;

TEST(DashboardCommitDiff, ClassifiesEveryKindAgainstTheBaseline) {
  std::vector<porting::ResultFact> before = {brief("fixed", fail),          brief("broken", pass, 100, 1),
                                             brief("still", fail),          brief("slower", pass, 100, 1),
                                             brief("faster", pass, 100, 1), brief("noise", pass, 100, 1),
                                             brief("gone", pass, 100, 1),   brief("shaky", pass, 100, 1)};
  std::vector<porting::ResultFact> after = {
      brief("fixed", pass, 100, 1),  brief("broken", fail),        brief("still", porting::CheckOutcome::crashed),
      brief("slower", pass, 120, 1), brief("faster", pass, 80, 1), brief("noise", pass, 102, 1),
      brief("new", pass, 50, 1),     brief("shaky", pass, 150, 1)};
  after.back().unstable = true;
  json::object out = commit_diff_json(after, before, k_policy, 100);
  const auto& counts = out.at("groups").as_array().at(0).as_object().at("counts").as_object();
  for (const char* kind :
       {"fixed", "new_failure", "still_failing", "regressed", "improved", "unstable", "unchanged", "added", "dropped"})
    EXPECT_EQ(counts.at(kind).as_int64(), 1) << kind;
  const auto& changes = out.at("groups").as_array().at(0).as_object().at("changes").as_array();
  ASSERT_EQ(changes.size(), 6u);
  // Failures come first, so a reader sees what broke before what got faster.
  EXPECT_EQ(changes.at(0).as_object().at("kind").as_string(), "new_failure");
  EXPECT_EQ(changes.at(1).as_object().at("kind").as_string(), "regressed");
  EXPECT_NEAR(changes.at(1).as_object().at("delta").as_double(), 0.2, 1e-9);
  EXPECT_EQ(out.at("rule").as_string(), porting::describe(k_policy));
}

TEST(DashboardCommitDiff, ChangeWithinTheMeasuredNoiseIsNotARegression) {
  // +10% but each side has a 5 us standard deviation: 2 combined sigmas is 14.1 us.
  json::object out = commit_diff_json({brief("k", pass, 110, 5)}, {brief("k", pass, 100, 5)}, k_policy, 100);
  EXPECT_EQ(out.at("totals").as_object().at("regressed").as_int64(), 0);
  EXPECT_EQ(out.at("totals").as_object().at("unchanged").as_int64(), 1);
  // The verdict's threshold, not a page's own: +4% beyond the noise is regressed here too.
  out = commit_diff_json({brief("k", pass, 104, 0.5)}, {brief("k", pass, 100, 0.5)}, k_policy, 100);
  EXPECT_EQ(out.at("totals").as_object().at("regressed").as_int64(), 1);
}

// The target page shows decide_stages' output; its cells follow the stage.
TEST(DashboardTarget, CellsFollowTheDecidedStages) {
  db::TargetBoard board;
  board.target.name = "sm_90a";
  board.target.arch = "9.0";
  board.target.features_json = R"({"simt": true, "wgmma": false, "max_dynamic_smem_per_block": 232448})";
  board.stage_commit = std::string(40, 'c');
  db::VariantBoard failing;
  failing.family = "gemm";
  failing.variant = "simt";
  failing.features_json = R"(["simt"])";
  failing.build_status = "ok";
  failing.spill_bytes = 0;
  failing.passed = 5;
  failing.failed = 1;
  db::VariantBoard missing;
  missing.family = "gemm";
  missing.variant = "wgmma_tma";
  missing.features_json = R"(["wgmma", "tma"])";
  board.variants = {failing, missing};
  const auto stages = stages_of(board);
  json::object out = target_board_json(board, stages, {});
  const auto& rows = out.at("variants").as_array();
  EXPECT_EQ(rows.at(0).at("stage").as_string(), "numerics_failed");
  EXPECT_EQ(rows.at(0).at("cells").at("numerics").at("state").as_string(), "fail");
  EXPECT_EQ(rows.at(0).at("cells").at("resources").at("state").as_string(), "ok");
  EXPECT_EQ(rows.at(1).at("stage").as_string(), "not_applicable") << "wgmma is false in the target's features";
  EXPECT_EQ(rows.at(1).at("reason").as_string(), "missing features: wgmma, tma");
  EXPECT_EQ(rows.at(1).at("cells").at("build").at("state").as_string(), "na");
  EXPECT_EQ(out.at("progress").at("applicable").as_int64(), 1);
  EXPECT_EQ(out.at("progress").at("numerics_passed").as_int64(), 0);
  EXPECT_EQ(out.at("commit").as_string(), std::string(40, 'c'));
  // The API's answer is built from the same stages.
  json::object api = bringup_json(board, stages);
  EXPECT_EQ(api.at("progress"), out.at("progress"));
  EXPECT_EQ(api.at("variants").at(0).at("stage"), rows.at(0).at("stage"));
  EXPECT_EQ(api.at("variants").at(0).at("results_failed").as_int64(), 1);
  EXPECT_EQ(rows.at(0).at("cells").at("selected").at("state").as_string(), "pending");
  EXPECT_EQ(rows.at(1).at("cells").at("selected").at("state").as_string(), "na");
}

// A variant measured everywhere and the fastest nowhere has reached its last stage: its
// selected cell says none, not pending; the fastest somewhere is ok.
TEST(DashboardTarget, AMeasuredVariantFastestNowhereIsNoneNotPending) {
  db::TargetBoard board;
  board.target.name = "sm_90a";
  board.target.arch = "9.0";
  board.target.features_json = R"({"simt": true})";
  board.stage_commit = std::string(40, 'c');
  db::VariantBoard slow, fast;
  for (auto* v : {&slow, &fast}) {
    v->family = "gemm";
    v->features_json = R"(["simt"])";
    v->build_status = "ok";
    v->registers = 64;
    v->spill_bytes = 0;
    v->passed = 4;
    v->measured = 4;
  }
  slow.variant = "simt";
  fast.variant = "simt_fast";
  fast.selected = 4;
  board.variants = {slow, fast};
  json::object out = target_board_json(board, stages_of(board), {});
  const auto& rows = out.at("variants").as_array();
  EXPECT_EQ(rows.at(0).at("stage").as_string(), "measured");
  EXPECT_EQ(rows.at(0).at("cells").at("timing").at("state").as_string(), "ok");
  EXPECT_EQ(rows.at(0).at("cells").at("selected").at("state").as_string(), "none");
  EXPECT_EQ(rows.at(1).at("stage").as_string(), "selected_best");
  EXPECT_EQ(rows.at(1).at("cells").at("selected").at("state").as_string(), "ok");
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
  EXPECT_DOUBLE_EQ(first("share_low"), 0.4);               // slower end of the band
  EXPECT_NEAR(first("share_high"), 0.5 * 100 / 90, 1e-4);  // four significant digits
  EXPECT_EQ(series.at(0).as_object().at("unit").as_string(), "TFLOP/s");
}

}  // namespace
}  // namespace kport::coordinator
