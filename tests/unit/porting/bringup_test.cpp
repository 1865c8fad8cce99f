// Bring-up stages on hand-made facts: the stage commit's facts decide, a failure there is
// never "numerics passed", and a target never built is planned from its features.
#include "kport/porting/bringup.h"

#include <gtest/gtest.h>

namespace kport::porting {
namespace {

VariantFacts variant(std::string family, std::string name, std::vector<std::string> features) {
  VariantFacts v;
  v.family = std::move(family);
  v.variant = std::move(name);
  v.features = std::move(features);
  return v;
}

// The kernels tree's variants, as they declare their features.
std::vector<VariantFacts> library() {
  return {variant("attention", "wgmma_tma", {"wgmma", "tma", "mbarrier", "setmaxnreg"}),
          variant("gemm", "mma_sync", {"mma_sync", "mma_sync_bf16", "ldmatrix", "cp_async"}),
          variant("gemm", "simt", {"simt"}), variant("gemm", "tcgen05", {"tcgen05", "tmem", "tma", "mbarrier"}),
          variant("gemm", "wgmma_tma", {"wgmma", "tma", "mbarrier", "setmaxnreg"})};
}

const VariantStage& row(const BringupStages& s, const std::string& id) {
  for (const auto& v : s.variants)
    if (v.family + "." + v.variant == id) return v;
  throw std::runtime_error("no row " + id);
}

TEST(Bringup, ATargetNeverBuiltListsWhatThePlannerSaysApplies) {
  // sm_100a's catalog features, unsorted as a store may hand them over.
  TargetFacts t{
      "sm_100a",
      {"tmem", "simt", "tcgen05", "tma", "mbarrier", "cp_async", "ldmatrix", "mma_sync", "mma_sync_bf16", "setmaxnreg"},
      std::nullopt};
  auto s = decide_stages(t, library());
  EXPECT_EQ(row(s, "gemm.tcgen05").stage, Stage::pending);
  EXPECT_TRUE(row(s, "gemm.tcgen05").applicable);
  EXPECT_EQ(row(s, "gemm.wgmma_tma").stage, Stage::not_applicable);
  EXPECT_EQ(row(s, "gemm.wgmma_tma").reason, "missing features: wgmma");
  EXPECT_EQ(row(s, "attention.wgmma_tma").stage, Stage::not_applicable);
  EXPECT_EQ(row(s, "gemm.simt").stage, Stage::pending);
  EXPECT_EQ(s.counts.variants, 5);
  EXPECT_EQ(s.counts.applicable, 3);
  EXPECT_EQ(s.counts.builds, 0);
  EXPECT_EQ(s.families.at("gemm").applicable, 3);
  EXPECT_EQ(s.families.at("attention").applicable, 0);
  EXPECT_FALSE(s.commit.has_value());
}

TEST(Bringup, TheBuildRecordWinsOverThePlanner) {
  TargetFacts t{"sm_90a", {"simt", "wgmma", "tma", "mbarrier", "setmaxnreg"}, "c2"};
  auto v = library();
  v[4].build = BuildOutcome::not_applicable;  // gemm.wgmma_tma: the build driver said so
  v[4].build_message = "missing features: setmaxnreg (excluded)";
  v[3].build = BuildOutcome::ok;  // gemm.tcgen05 built (a catalog that knows better)
  auto s = decide_stages(t, v);
  EXPECT_EQ(row(s, "gemm.wgmma_tma").stage, Stage::not_applicable);
  EXPECT_EQ(row(s, "gemm.wgmma_tma").reason, "missing features: setmaxnreg (excluded)");
  EXPECT_EQ(row(s, "gemm.tcgen05").stage, Stage::resources_clean);
  // A variant without features known and without a record is not hidden.
  VariantFacts unknown;
  unknown.family = "softmax";
  unknown.variant = "vec16";
  EXPECT_EQ(decide_stages(t, {unknown}).variants[0].stage, Stage::pending);
}

TEST(Bringup, EachStageNeedsThePreviousOne) {
  TargetFacts t{"sm_90a", {"simt"}, "c2"};
  VariantFacts v = variant("gemm", "simt", {"simt"});
  v.build = BuildOutcome::ok;
  v.spill_bytes = 64;
  v.passed = 3;
  v.selected = 2;
  auto s = decide_stages(t, {v}).variants[0];
  EXPECT_TRUE(s.built);
  EXPECT_FALSE(s.resources_clean);
  EXPECT_TRUE(s.numerics_passed);
  EXPECT_FALSE(s.measured);
  EXPECT_FALSE(s.selected_best) << "selection without a timed result is not shown";
  EXPECT_EQ(s.stage, Stage::numerics_passed);
  v.measured = 3;
  EXPECT_EQ(decide_stages(t, {v}).variants[0].stage, Stage::selected_best);
  // Results at a commit whose build failed count for nothing.
  v.build = BuildOutcome::compile_error;
  v.build_message = "error: no\nmore";
  s = decide_stages(t, {v}).variants[0];
  EXPECT_EQ(s.stage, Stage::build_failed);
  EXPECT_FALSE(s.numerics_passed);
  EXPECT_EQ(s.reason, "error: no");
  EXPECT_TRUE(s.applicable);
}

// The case: passed on an old commit, fails on the stage commit. The store hands
// over the stage commit's results only, and one failure there is enough.
TEST(Bringup, AVariantThatFailsNumericsAtTheStageCommitHasNotPassed) {
  TargetFacts t{"sm_90a", {"simt"}, "c2"};
  VariantFacts v = variant("gemm", "simt", {"simt"});
  v.build = BuildOutcome::ok;
  v.spill_bytes = 0;
  v.passed = 11;
  v.failed = 1;
  v.measured = 11;
  v.selected = 4;
  auto s = decide_stages(t, {v});
  EXPECT_EQ(s.variants[0].stage, Stage::numerics_failed);
  EXPECT_TRUE(s.variants[0].numerics_failed);
  EXPECT_FALSE(s.variants[0].numerics_passed);
  EXPECT_FALSE(s.variants[0].measured);
  EXPECT_FALSE(s.variants[0].selected_best);
  EXPECT_EQ(s.counts.numerics_passed, 0);
  EXPECT_EQ(s.counts.resources_clean, 1);
  EXPECT_EQ(to_string(s.variants[0].stage), std::string("numerics_failed"));
}

}  // namespace
}  // namespace kport::porting
