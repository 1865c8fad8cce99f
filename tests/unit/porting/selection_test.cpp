#include "kport/porting/selection.h"

#include <gtest/gtest.h>

namespace kport::porting {
namespace {

Measurement meas(std::int64_t id, std::string instance, std::string shape, double median,
                 double stddev = 0.1, std::string gpu = "NVIDIA H200", std::string arch = "9.0",
                 std::int64_t at = 1000) {
  Measurement m;
  m.result_id = id;
  m.instance = instance;
  m.variant = instance.substr(instance.find('.') + 1, instance.rfind('.') - instance.find('.') - 1);
  m.gpu_model = gpu;
  m.arch = arch;
  m.target = arch == "9.0" ? "sm_90a" : "sm_80";
  m.shape = *Shape::parse(shape);
  m.median_us = median;
  m.stddev_us = stddev;
  m.samples = 50;
  m.measured_at_ms = at;
  return m;
}

SelectionQuery query(std::string shape, std::string gpu = "NVIDIA H200", std::string arch = "9.0",
                     std::string target = "sm_90a") {
  return SelectionQuery{gpu, arch, target, *Shape::parse(shape)};
}

const char* k_cube = "m=4096,n=4096,k=4096";

}  // namespace

TEST(Selection, FastestPassingMedianWinsOnExactShape) {
  std::vector<Measurement> rows = {meas(1, "gemm.simt.64x64", k_cube, 900.0),
                                   meas(2, "gemm.wgmma_tma.128x256", k_cube, 200.0),
                                   meas(3, "gemm.mma_sync.128x128", k_cube, 300.0)};
  auto sel = select_best(query(k_cube), rows, {}, {});
  EXPECT_EQ(sel.kind, Selection::Kind::measured);
  EXPECT_TRUE(sel.exact_shape);
  ASSERT_EQ(sel.ranking.size(), 3u);
  EXPECT_EQ(sel.ranking[0].instance, "gemm.wgmma_tma.128x256");
  EXPECT_EQ(sel.ranking[0].evidence->result_id, 2);
  EXPECT_FALSE(sel.ranking[0].tie_with_best);
  EXPECT_DOUBLE_EQ(sel.ranking[1].slowdown, 1.5);
}

TEST(Selection, MediansWithinNoiseAreReportedAsATie) {
  std::vector<Measurement> rows = {meas(1, "gemm.a.x", k_cube, 200.0, 2.0),
                                   meas(2, "gemm.b.x", k_cube, 203.0, 2.0),
                                   meas(3, "gemm.c.x", k_cube, 260.0, 2.0)};
  auto sel = select_best(query(k_cube), rows, {}, {});
  EXPECT_TRUE(sel.ranking[0].tie_with_best);
  EXPECT_TRUE(sel.ranking[1].tie_with_best);
  EXPECT_FALSE(sel.ranking[2].tie_with_best);
}

TEST(Selection, TieNeedsMoreThanTheOnePercentFloorWhenSpreadIsTight) {
  auto a = meas(1, "gemm.a.x", k_cube, 100.0, 0.01);
  EXPECT_TRUE(is_tie(a, meas(2, "gemm.b.x", k_cube, 100.9, 0.01)));
  EXPECT_FALSE(is_tie(a, meas(2, "gemm.b.x", k_cube, 101.5, 0.01)));
}

TEST(Selection, NearestShapeStandsInAndSaysSo) {
  std::vector<Measurement> rows = {meas(1, "gemm.a.x", "m=2048,n=2048,k=2048", 50.0),
                                   meas(2, "gemm.a.x", "m=8192,n=8192,k=8192", 2000.0)};
  auto sel = select_best(query("m=7000,n=8192,k=8192"), rows, {}, {});
  EXPECT_EQ(sel.kind, Selection::Kind::measured);
  EXPECT_FALSE(sel.exact_shape);
  EXPECT_EQ(sel.matched_shape->canonical(), "k=8192,m=8192,n=8192");
  EXPECT_NE(sel.reason.find("nearest measured shape"), std::string::npos);
}

TEST(Selection, LatestResultOfAnInstanceCountsSoRegressionsShow) {
  std::vector<Measurement> rows = {meas(1, "gemm.a.x", k_cube, 100.0, 0.1, "NVIDIA H200", "9.0", 1000),
                                   meas(2, "gemm.a.x", k_cube, 300.0, 0.1, "NVIDIA H200", "9.0", 2000),
                                   meas(3, "gemm.b.x", k_cube, 200.0, 0.1, "NVIDIA H200", "9.0", 1500)};
  auto sel = select_best(query(k_cube), rows, {}, {});
  EXPECT_EQ(sel.ranking[0].instance, "gemm.b.x");
  EXPECT_EQ(sel.ranking[1].evidence->result_id, 2);
}

TEST(Selection, UnmeasuredGpuIsProvisionalRankedByNearestArchAmongBuilds) {
  std::vector<Measurement> elsewhere = {
      meas(1, "gemm.mma_sync.x", k_cube, 300.0, 0.1, "NVIDIA A100", "8.0"),
      meas(2, "gemm.simt.x", k_cube, 900.0, 0.1, "NVIDIA A100", "8.0"),
      meas(3, "gemm.mma_sync.x", k_cube, 150.0, 0.1, "NVIDIA H200", "9.0"),
      meas(4, "gemm.wgmma_tma.x", k_cube, 100.0, 0.1, "NVIDIA H200", "9.0"),
      meas(5, "gemm.simt.x", k_cube, 800.0, 0.1, "NVIDIA H200", "9.0")};
  std::vector<BuildCandidate> builds = {{"gemm.simt.x", "simt"}, {"gemm.mma_sync.x", "mma_sync"},
                                        {"gemm.tcgen05.x", "tcgen05"}};
  auto sel = select_best(query(k_cube, "NVIDIA B200", "10.0", "sm_100a"), {}, elsewhere, builds);
  EXPECT_EQ(sel.kind, Selection::Kind::provisional);
  EXPECT_EQ(sel.evidence_gpu_model, "NVIDIA H200");
  ASSERT_EQ(sel.ranking.size(), 3u);
  // wgmma_tma does not build for sm_100a, so it is never recommended there.
  EXPECT_EQ(sel.ranking[0].instance, "gemm.mma_sync.x");
  EXPECT_EQ(sel.ranking[1].instance, "gemm.simt.x");
  EXPECT_EQ(sel.ranking[2].instance, "gemm.tcgen05.x");
  EXPECT_FALSE(sel.ranking[2].evidence.has_value());
  EXPECT_NE(sel.reason.find("no passing measurement on NVIDIA B200"), std::string::npos);
  EXPECT_NE(sel.reason.find("sm_100a"), std::string::npos);
}

TEST(Selection, IncomparableShapeOnGpuFallsBackToProvisional) {
  std::vector<Measurement> rows = {meas(1, "attention.a.x", "b=4,h=16,l=4096,d=64,causal=0", 100.0)};
  auto sel = select_best(query("b=4,h=16,l=4096,d=128,causal=0"), rows, {}, {});
  EXPECT_EQ(sel.kind, Selection::Kind::none);
  EXPECT_NE(sel.reason.find("nothing comparable"), std::string::npos);
}

}  // namespace kport::porting
