// rmsnorm.cluster and softmax.cluster: which rows they take and how a row is split over a
// cluster (common/rowwise_cluster_plan.h), and the reasons they give for the rest. Host code
// only: nothing is launched (no buffers, so the device is not asked whether a cluster fits).
#include <gtest/gtest.h>

#include <string>

#include "common/rowwise_cluster_plan.h"
#include "kport/kernels/registry.h"

using namespace kport::kernels;

namespace {

RowwiseArgs rows(int r, int cols, DType t = DType::bf16) {
  return RowwiseArgs{nullptr, nullptr, nullptr, r, cols, 1e-6f, t};
}

Problem problem(Family f, int r, int cols, DType t = DType::bf16) {
  Problem p;
  p.family = f;
  p.rowwise = rows(r, cols, t);
  return p;
}

}  // namespace

TEST(RowwiseClusterPlan, TheFewestSlicesThatHoldTheRowAsEvenAsWholeVectorsAllow) {
  constexpr int slice = 32768 / 16;                                // 32 KB slices
  ClusterPlan p = plan_rowwise_cluster(rows(2048, 32768), slice);  // 64 KB bf16
  EXPECT_EQ(p.refusal, "");
  EXPECT_EQ(p.ctas, 2);
  EXPECT_EQ(p.cta_vecs, 2048);
  p = plan_rowwise_cluster(rows(1, 40008), slice);  // 80016 bytes: 5001 vectors over 3 CTAs
  EXPECT_EQ(p.ctas, 3);
  EXPECT_EQ(p.cta_vecs, 1667);
  p = plan_rowwise_cluster(rows(3, 262144), slice);  // 512 KB: exactly 16 slices
  EXPECT_EQ(p.ctas, 16);
  p = plan_rowwise_cluster(rows(1, 131080, DType::f32), slice);  // one vector past 16 slices
  EXPECT_NE(p.refusal.find("what 16 CTAs hold"), std::string::npos) << p.refusal;
  EXPECT_EQ(plan_rowwise_cluster(rows(1, 131080, DType::f32), 2 * slice).ctas, 9);
}

TEST(RowwiseClusterPlan, ShortOddAndEmptyRowsAreRefusedWithTheirReason) {
  constexpr int slice = 2048;
  EXPECT_NE(plan_rowwise_cluster(rows(8, 16384), slice).refusal.find("at most 32 KB"), std::string::npos);
  EXPECT_EQ(plan_rowwise_cluster(rows(8, 16392), slice).refusal, "");  // 32 KB and one vector
  EXPECT_NE(plan_rowwise_cluster(rows(2, 32771), slice).refusal.find("16-byte vectors"), std::string::npos);
  EXPECT_NE(plan_rowwise_cluster(rows(0, 65536), slice).refusal.find("positive"), std::string::npos);
  EXPECT_NE(plan_rowwise_cluster(rows(1, 65536, DType::e4m3), slice).refusal.find("fp32, fp16 or bf16"),
            std::string::npos);
}

TEST(RowwiseClusterSupports, EachFamilysInstancesTakeItsLongRowsOnly) {
  for (const char* name : {"rmsnorm.cluster.b256_s32k", "rmsnorm.cluster.b512_s64k"}) {
    const Instance* inst = find_instance(name);
    ASSERT_NE(inst, nullptr) << name;
    EXPECT_EQ(inst->supports(problem(Family::rmsnorm, 2048, 32768)), "") << name;
    EXPECT_NE(inst->supports(problem(Family::rmsnorm, 2048, 4096)).find("vec16"), std::string::npos) << name;
    EXPECT_EQ(inst->supports(problem(Family::softmax, 2048, 32768)), "not an rmsnorm problem") << name;
  }
  for (const char* name : {"softmax.cluster.b256_s32k", "softmax.cluster.b512_s64k"}) {
    const Instance* inst = find_instance(name);
    ASSERT_NE(inst, nullptr) << name;
    EXPECT_EQ(inst->supports(problem(Family::softmax, 1024, 131072, DType::f16)), "") << name;
    EXPECT_EQ(inst->supports(problem(Family::rmsnorm, 1024, 131072)), "not a softmax problem") << name;
  }
  // Rows over 512 KB (300000 bf16: 600,000 bytes): the 64 KB slices hold them, the 32 KB ones refuse.
  EXPECT_EQ(find_instance("rmsnorm.cluster.b512_s64k")->supports(problem(Family::rmsnorm, 4, 300000)), "");
  EXPECT_NE(find_instance("rmsnorm.cluster.b256_s32k")->supports(problem(Family::rmsnorm, 4, 300000)), "");
}
