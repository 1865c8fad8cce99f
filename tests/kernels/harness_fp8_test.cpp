// kport-harness host code for gemm_fp8: its shapes (the scale mode is part of the shape),
// dtypes, grids, work counts, tolerances and case selection.
#include <gtest/gtest.h>

#include <algorithm>

#include "case_selection.h"
#include "cli.h"
#include "shapes.h"
#include "tolerance.h"

using namespace kport::harness;
using kport::kernels::Instance;
using kport::kernels::Problem;

namespace {

std::string accept(const Problem&) { return ""; }
cudaError_t no_launch(const Problem&, cudaStream_t) { return cudaSuccess; }

const Instance k_fp8{Family::gemm_fp8,           "wgmma_tma", "gemm_fp8.fake", {"wgmma"},
                     {DType::e4m3, DType::e5m2}, "{}",        &accept,         &no_launch};
const Instance k_gemm{Family::gemm, "simt", "gemm.fake", {"simt"}, {DType::bf16}, "{}", &accept, &no_launch};

bool has(const std::vector<Shape>& grid, int m, int n, int k, int scale) {
  return std::any_of(grid.begin(), grid.end(),
                     [&](const Shape& s) { return s.m == m && s.n == n && s.k == k && s.scale == scale; });
}

}  // namespace

TEST(HarnessFp8, ScaleIsPartOfTheShapeAndDefaultsToPerTensor) {
  Shape s;
  ASSERT_FALSE(parse_shape(Family::gemm_fp8, "m=4096,n=7168,k=16384", s));
  EXPECT_EQ(s.scale, 0);
  EXPECT_EQ(shape_string(s), "m=4096,n=7168,k=16384,scale=0");
  ASSERT_FALSE(parse_shape(Family::gemm_fp8, "scale=2,k=16384,m=64,n=7168", s));
  EXPECT_EQ(s.scale, 2);
  EXPECT_EQ(s.m, 64);
  EXPECT_EQ(shape_string(s), "m=64,n=7168,k=16384,scale=2");
  EXPECT_EQ(shape_json(s)["scale"], 2);
  // 3: the same block scales as powers of two, also as UE8M0 bytes (Blackwell's block-scaled MMA)
  ASSERT_FALSE(parse_shape(Family::gemm_fp8, "m=64,n=7168,k=16384,scale=3", s));
  EXPECT_EQ(s.scale, 3);
  EXPECT_EQ(shape_string(s), "m=64,n=7168,k=16384,scale=3");
  EXPECT_EQ(make_problem(s, DType::e4m3).gemm_fp8.scale, kport::kernels::Fp8Scale::block128_ue8m0);
  for (const char* text : {"m=1,n=1,k=128,scale=4", "m=1,n=1,k=128,scale=-1"}) {
    const auto bad = parse_shape(Family::gemm_fp8, text, s);
    ASSERT_TRUE(bad) << text;
    EXPECT_EQ(bad->code, "bad_shape");
    EXPECT_NE(bad->message.find("scale must be 0"), std::string::npos) << bad->message;
    EXPECT_NE(bad->message.find("3 (128-blocks, power-of-two scales also as UE8M0 bytes)"), std::string::npos)
        << bad->message;
  }
  EXPECT_TRUE(parse_shape(Family::gemm, "m=1,n=1,k=1,scale=0", s));  // not a gemm key
  ASSERT_FALSE(parse_shape(Family::gemm_fp8, "m=2,n=3,k=128,scale=1", s));
  EXPECT_EQ(flop_count(s), 2.0 * 2 * 3 * 128);
  EXPECT_EQ(byte_count(s, DType::e4m3), 2.0 * 128 + 3.0 * 128 + 2.0 * 2 * 3);  // fp8 in, bf16 out
}

TEST(HarnessFp8, DtypesAreNamedAndOneByte) {
  EXPECT_EQ(parse_dtype("e4m3"), DType::e4m3);
  EXPECT_EQ(parse_dtype("e5m2"), DType::e5m2);
  EXPECT_STREQ(kport::kernels::dtype_name(DType::e4m3), "e4m3");
  EXPECT_STREQ(kport::kernels::family_name(Family::gemm_fp8), "gemm_fp8");
  EXPECT_EQ(kport::kernels::dtype_size(DType::e5m2), 1);
  EXPECT_EQ(parse_family("gemm_fp8"), Family::gemm_fp8);
  Options o;
  const std::vector<std::string> args = {"check", "--instance", "x", "--dtype", "e4m3", "--shape", "m=1,n=1,k=16"};
  EXPECT_FALSE(parse_args(args, o));
  EXPECT_EQ(o.dtype, "e4m3");
}

TEST(HarnessFp8, GridsHoldThePeerShapesEdgesAndRefusedK) {
  const auto bench = bench_grid(Family::gemm_fp8);
  const auto check = check_grid(Family::gemm_fp8);
  for (int scale : {0, 1, 2, 3}) {
    EXPECT_TRUE(has(bench, 4096, 7168, 16384, scale));
    EXPECT_TRUE(has(bench, 4096, 4096, 7168, scale));
    EXPECT_TRUE(has(bench, 64, 7168, 16384, scale));
    EXPECT_TRUE(has(bench, 128, 7168, 16384, scale));
    // Decode batches across N and K: one decode shape answered them all, and under one
    // wave the fastest tile changes with N.
    EXPECT_TRUE(has(bench, 1, 4096, 7168, scale));
    EXPECT_TRUE(has(bench, 64, 4096, 7168, scale));  // batches on both sides of half a tile
    EXPECT_TRUE(has(bench, 8, 2112, 7168, scale));
    EXPECT_TRUE(has(bench, 32, 7168, 2048, scale));
    EXPECT_TRUE(has(bench, 256, 7168, 16384, scale));
    EXPECT_TRUE(has(check, 4096, 7168, 16384, scale));  // every bench shape is checked
    EXPECT_TRUE(has(check, 127, 255, 128, scale));      // odd M and N
    EXPECT_TRUE(has(check, 33, 4104, 528, scale));      // K % 128 != 0: the block modes refuse
    EXPECT_TRUE(has(check, 129, 4096, 520, scale));     // K % 16 != 0: every mode refuses
  }
}

TEST(HarnessFp8, TolerancesCoverBf16OutputRounding) {
  for (DType t : {DType::e4m3, DType::e5m2}) {
    const Tolerance tol = tolerance_for(Family::gemm_fp8, t);
    EXPECT_GT(tol.normwise, 0.002);  // bf16 rounding alone is about 2^-9 / sqrt(3)
    EXPECT_LT(tol.normwise, tolerance_for(Family::gemm, DType::bf16).normwise);
    EXPECT_GT(tol.max_abs_rel, tol.normwise);
  }
}

TEST(HarnessFp8, AShapeWithScaleSelectsOnlyFp8Instances) {
  Options o;
  const std::vector<std::string> args = {"bench", "--all", "--shape", "m=4096,n=7168,k=16384,scale=2"};
  ASSERT_FALSE(parse_args(args, o));
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(o, {&k_gemm, &k_fp8}, cases));
  ASSERT_EQ(cases.size(), 1u);  // bench takes the instance's first dtype, e4m3
  EXPECT_EQ(cases[0].instance, &k_fp8);
  EXPECT_EQ(cases[0].dtype, DType::e4m3);
  EXPECT_EQ(cases[0].shape.scale, 2);
  Options c;
  const std::vector<std::string> check_args = {"check", "--all", "--filter", "gemm_fp8", "--dtype", "e5m2"};
  ASSERT_FALSE(parse_args(check_args, c));
  ASSERT_FALSE(select_cases(c, {&k_gemm, &k_fp8}, cases));
  EXPECT_EQ(cases.size(), check_grid(Family::gemm_fp8).size());
}
