// Variant discovery from CMake text and the planner's applicability and fallback rules.
#include <gtest/gtest.h>

#include "kport/porting/planner.h"

namespace kport::porting {
namespace {

VariantSpec variant(std::string family, std::string name, std::vector<std::string> features) {
  VariantSpec v;
  v.family = std::move(family);
  v.variant = std::move(name);
  v.features = std::move(features);
  v.sources = {"x.cu"};
  return v;
}

TargetEntry target(std::string name, std::vector<std::string> features) {
  TargetEntry t;
  t.name = std::move(name);
  t.features = std::move(features);
  std::sort(t.features.begin(), t.features.end());
  return t;
}

std::vector<VariantSpec> library() {
  return {variant("gemm", "simt", {"simt"}), variant("gemm", "mma_sync", {"mma_sync", "cp_async"}),
          variant("gemm", "wgmma_tma", {"wgmma", "tma", "mbarrier"}),
          variant("gemm", "tcgen05", {"tcgen05", "tmem", "tma", "mbarrier"}), variant("softmax", "simt", {"simt"})};
}

TEST(Planner, HopperGetsItsSpecializedVariantWithoutFallback) {
  auto plan = make_plan(target("sm_90a", {"simt", "mma_sync", "cp_async", "wgmma", "tma", "mbarrier"}), library());
  EXPECT_EQ(plan.applicable.size(), 4u);
  ASSERT_EQ(plan.not_applicable.size(), 1u);
  EXPECT_EQ(plan.not_applicable[0].variant.id(), "gemm.tcgen05");
  EXPECT_EQ(plan.not_applicable[0].reason(), "missing features: tcgen05, tmem");
  const auto* gemm = plan.family("gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->chosen, "gemm.wgmma_tma");
  EXPECT_TRUE(gemm->is_fallback) << "tcgen05 is more specialized and does not apply";
}

TEST(Planner, ConsumerBlackwellFallsBackToMmaSync) {
  auto plan = make_plan(target("sm_120", {"simt", "mma_sync", "cp_async", "tma", "mbarrier"}), library());
  const auto* gemm = plan.family("gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->chosen, "gemm.mma_sync");
  EXPECT_TRUE(gemm->is_fallback);
  EXPECT_EQ(gemm->instead_of, (std::vector<std::string>{"gemm.tcgen05", "gemm.wgmma_tma"}));
  EXPECT_NE(gemm->explanation.find("falls back to gemm.mma_sync"), std::string::npos);
  const auto* softmax = plan.family("softmax");
  EXPECT_EQ(softmax->chosen, "softmax.simt");
  EXPECT_FALSE(softmax->is_fallback);
}

TEST(Planner, NewTargetWithOnlySimtFallsBackToPortableVariants) {
  auto plan = make_plan(target("sm_130", {"simt"}), library());
  EXPECT_EQ(plan.family("gemm")->chosen, "gemm.simt");
  EXPECT_EQ(plan.not_applicable.size(), 3u);
}

TEST(Planner, FamilyWithNoApplicableVariantSaysSo) {
  auto plan = make_plan(target("sm_80", {"simt"}), {variant("attention", "wgmma", {"wgmma"})});
  const auto* a = plan.family("attention");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->chosen.empty());
  EXPECT_NE(a->explanation.find("no attention variant applies"), std::string::npos);
}

TEST(VariantCalls, ParsesKeywordsCommentsAndQuotes) {
  auto v = parse_variant_calls(R"(
# kport_kernel_variant(FAMILY ignored VARIANT ignored SOURCES no.cu)
kport_kernel_variant(FAMILY gemm VARIANT wgmma_tma
                     FEATURES wgmma tma   # a comment
                     SOURCES "gemm_wgmma_tma_sm90.cu" extra.cu
                     OPTIONS -maxrregcount=168)
)",
                               "gemm/wgmma_tma/CMakeLists.txt");
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->size(), 1u);
  EXPECT_EQ((*v)[0].id(), "gemm.wgmma_tma");
  EXPECT_EQ((*v)[0].features, (std::vector<std::string>{"wgmma", "tma"}));
  EXPECT_EQ((*v)[0].sources, (std::vector<std::string>{"gemm_wgmma_tma_sm90.cu", "extra.cu"}));
  EXPECT_EQ((*v)[0].options, (std::vector<std::string>{"-maxrregcount=168"}));
}

TEST(VariantCalls, MissingSourcesIsAnErrorNamingTheFile) {
  auto v = parse_variant_calls("kport_kernel_variant(FAMILY gemm VARIANT x FEATURES simt)", "gemm/x/CMakeLists.txt");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("gemm/x/CMakeLists.txt"), std::string::npos);
}

TEST(VariantCalls, DiscoversThisRepositorysKernels) {
  auto v = discover_variants(KPORT_KERNELS_DIR);
  ASSERT_TRUE(v.ok()) << v.error().message;
  bool wgmma = false;
  for (const auto& s : *v)
    if (s.id() == "gemm.wgmma_tma")
      wgmma = std::find(s.features.begin(), s.features.end(), "wgmma") != s.features.end();
  EXPECT_TRUE(wgmma);
  EXPECT_GE(v->size(), 11u);
  EXPECT_EQ(discover_variants("/nonexistent").error().code, Errc::not_found);
}

}  // namespace
}  // namespace kport::porting
