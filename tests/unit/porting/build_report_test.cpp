// How a build report reads for its job: which builds can be validated and what the
// job's summary says (partial builds validate what built).
#include <gtest/gtest.h>

#include "kport/porting/build_driver.h"

namespace kport::porting {
namespace {

VariantRecord rec(std::string family, std::string variant, VariantStatus s) {
  VariantRecord r;
  r.family = std::move(family);
  r.variant = std::move(variant);
  r.target = "sm_80";
  r.status = s;
  return r;
}

BuildReport report(std::vector<VariantRecord> records, bool harness = true) {
  BuildReport b;
  b.target = "sm_80";
  b.records = std::move(records);
  if (harness) b.harness = "/build/bin/kport-harness-sm_80";
  return b;
}

TEST(BuildReport, OneFailedVariantStillValidatesTheOthers) {
  auto b = report({rec("attention", "hopper", VariantStatus::not_applicable),
                   rec("gemm", "broken", VariantStatus::compile_error), rec("gemm", "tiny_mma", VariantStatus::ok),
                   rec("softmax", "tiny", VariantStatus::ok)});
  EXPECT_FALSE(b.all_ok());
  EXPECT_TRUE(b.validatable());
  EXPECT_EQ(b.built(), 2);
  ASSERT_EQ(b.failed().size(), 1u);
  EXPECT_EQ(b.failed()[0]->id(), "gemm.broken");
  EXPECT_EQ(
      b.summary(),
      "2 variants built, 1 not applicable on sm_80; 1 of 4 variants failed on sm_80: gemm.broken (compile_error)");
}

TEST(BuildReport, NothingBuiltOrNoHarnessIsNotValidatable) {
  auto none =
      report({rec("gemm", "broken", VariantStatus::compile_error), rec("gemm", "slow", VariantStatus::timeout)});
  EXPECT_FALSE(none.validatable()) << "a harness with no variant has nothing to check";
  EXPECT_EQ(none.summary(),
            "0 variants built, 0 not applicable on sm_80; 2 of 2 variants failed on sm_80: gemm.broken "
            "(compile_error), gemm.slow (timeout)");
  auto unlinked = report({rec("gemm", "simt", VariantStatus::ok)}, false);
  unlinked.harness_error = "linking kport-harness-sm_80 failed:\nundefined reference";
  EXPECT_FALSE(unlinked.validatable());
  EXPECT_EQ(unlinked.summary(),
            "1 variant built, 0 not applicable on sm_80; linking kport-harness-sm_80 failed:\nundefined reference");
  auto cancelled = report({rec("gemm", "simt", VariantStatus::ok)});
  cancelled.cancelled = true;
  EXPECT_FALSE(cancelled.validatable());
}

TEST(BuildReport, NothingApplicableIsNotAFailure) {
  auto b = report(
      {rec("gemm", "wgmma_tma", VariantStatus::not_applicable), rec("gemm", "tcgen05", VariantStatus::not_applicable)});
  EXPECT_TRUE(b.validatable());
  EXPECT_TRUE(b.all_ok());
  EXPECT_EQ(b.summary(), "0 variants built, 2 not applicable on sm_80");
}

TEST(BuildReport, EverythingBuiltIsAllOk) {
  auto b = report({rec("gemm", "simt", VariantStatus::ok), rec("gemm", "wgmma_tma", VariantStatus::not_applicable)});
  EXPECT_TRUE(b.all_ok());
  EXPECT_TRUE(b.validatable());
  EXPECT_EQ(b.summary(), "1 variant built, 1 not applicable on sm_80");
}

}  // namespace
}  // namespace kport::porting
