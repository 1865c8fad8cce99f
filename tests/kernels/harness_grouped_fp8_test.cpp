// kport-harness host code for grouped_gemm_fp8: its shapes (g groups of m rows, m a multiple of
// 128, a scale mode), work counts, grids, tolerances, the groups' gains and case selection.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "case_selection.h"
#include "cli.h"
#include "device/harness_kernels.h"
#include "shapes.h"
#include "tolerance.h"

using namespace kport::harness;
using kport::kernels::Instance;
using kport::kernels::Problem;

namespace {

std::string accept(const Problem&) { return ""; }
cudaError_t no_launch(const Problem&, cudaStream_t) { return cudaSuccess; }

const Instance k_grouped_fp8{Family::grouped_gemm_fp8,
                             "wgmma_tma",
                             "grouped_gemm_fp8.fake",
                             {"wgmma"},
                             {DType::e4m3, DType::e5m2},
                             "{}",
                             &accept,
                             &no_launch};
const Instance k_fp8{Family::gemm_fp8,           "wgmma_tma", "gemm_fp8.fake", {"wgmma"},
                     {DType::e4m3, DType::e5m2}, "{}",        &accept,         &no_launch};
const Instance k_grouped{
    Family::grouped_gemm, "simt", "grouped_gemm.fake", {"simt"}, {DType::bf16}, "{}", &accept, &no_launch};

// valid -1: the contiguous layout.
bool has(const std::vector<Shape>& grid, int g, int m, int n, int k, int scale, int valid = -1) {
  return std::any_of(grid.begin(), grid.end(), [&](const Shape& s) {
    return s.groups == g && s.m == m && s.n == n && s.k == k && s.scale == scale && s.valid == valid;
  });
}

}  // namespace

TEST(HarnessGroupedFp8, ShapeIsGroupsRowsPerGroupNKAndScale) {
  Shape s;
  ASSERT_FALSE(parse_shape(Family::grouped_gemm_fp8, "scale=2,k=7168,n=4096,m=8192,g=4", s));
  EXPECT_EQ(s.family, Family::grouped_gemm_fp8);
  EXPECT_EQ(s.groups, 4);
  EXPECT_EQ(s.m, 8192);
  EXPECT_EQ(s.scale, 2);
  EXPECT_EQ(shape_string(s), "g=4,m=8192,n=4096,k=7168,scale=2");
  EXPECT_EQ(shape_json(s)["g"], 4);
  EXPECT_EQ(shape_json(s)["scale"], 2);
  EXPECT_EQ(flop_count(s), 2.0 * 4 * 8192 * 4096 * 7168);
  EXPECT_EQ(output_elements(s), 4.0 * 8192 * 4096);
  // Every group's fp8 A and B read and its bf16 D written, as gemm_fp8 counts one.
  EXPECT_EQ(byte_count(s, DType::e4m3), 4 * (8192.0 * 7168 + 4096.0 * 7168 + 2.0 * 8192 * 4096));
  const Problem p = make_problem(s, DType::e5m2);
  EXPECT_EQ(p.family, Family::grouped_gemm_fp8);
  EXPECT_EQ(p.grouped_gemm_fp8.groups, 4);
  EXPECT_EQ(p.grouped_gemm_fp8.m, 8192);
  EXPECT_EQ(p.grouped_gemm_fp8.n, 4096);
  EXPECT_EQ(p.grouped_gemm_fp8.k, 7168);
  EXPECT_EQ(p.grouped_gemm_fp8.scale, kport::kernels::Fp8Scale::block128);
  EXPECT_EQ(p.grouped_gemm_fp8.dtype, DType::e5m2);
  // scale defaults to 0 (one scale for A, one per group for B) and is always printed.
  ASSERT_FALSE(parse_shape(Family::grouped_gemm_fp8, "g=2,m=128,n=8,k=16", s));
  EXPECT_EQ(s.scale, 0);
  EXPECT_EQ(shape_string(s), "g=2,m=128,n=8,k=16,scale=0");
}

// scale=3 is gemm_fp8's block128_ue8m0 per group: block128's groups with power-of-two scales,
// also as UE8M0 bytes, in the contiguous layout and the masked one.
TEST(HarnessGroupedFp8, Ue8m0BlockScalesAreAModeOfTheirOwn) {
  Shape s;
  ASSERT_FALSE(parse_shape(Family::grouped_gemm_fp8, "g=4,m=8192,n=4096,k=7168,scale=3", s));
  EXPECT_EQ(s.scale, 3);
  EXPECT_EQ(shape_string(s), "g=4,m=8192,n=4096,k=7168,scale=3");
  EXPECT_EQ(shape_json(s)["scale"], 3);
  EXPECT_EQ(flop_count(s), 2.0 * 4 * 8192 * 4096 * 7168);  // the work is the same in every mode
  const Problem p = make_problem(s, DType::e4m3);
  EXPECT_EQ(p.grouped_gemm_fp8.scale, kport::kernels::Fp8Scale::block128_ue8m0);
  // The bytes are the harness's to fill (setup_problem), never a default pointer.
  EXPECT_EQ(p.grouped_gemm_fp8.ue8m0_a, nullptr);
  EXPECT_EQ(p.grouped_gemm_fp8.ue8m0_b, nullptr);
  Shape two;
  ASSERT_FALSE(parse_shape(Family::grouped_gemm_fp8, "g=4,m=8192,n=4096,k=7168,scale=2", two));
  EXPECT_FALSE(shape_string(two) == shape_string(s));  // the mode is part of the case
  ASSERT_FALSE(parse_shape(Family::grouped_gemm_fp8, "g=8,m=256,n=4096,k=7168,scale=3,valid=64", s));
  EXPECT_EQ(s.scale, 3);
  EXPECT_EQ(s.valid, 64);
}

// A group's scale=3 scales of B are its power-of-two scales times its gain (fp8_group_gain):
// still powers of two, so every group's B packs into UE8M0 bytes that hold its fp32 scales
// exactly, the same values Hopper's kernels and the reference read.
TEST(HarnessGroupedFp8, Ue8m0ScalesOfEveryGroupStayPowersOfTwo) {
  for (int g = 0; g < 10; ++g)
    for (int e = -20; e <= 20; e += 5) {
      const float scale = std::ldexp(1.0f, e) * fp8_group_gain(g);
      std::uint8_t byte = 0;
      ASSERT_TRUE(kport::kernels::ue8m0_from_float(scale, byte)) << g << "," << e;
      EXPECT_EQ(kport::kernels::ue8m0_to_float(byte), scale) << g << "," << e;
    }
}

TEST(HarnessGroupedFp8, BadShapesAreRefusedSayingWhy) {
  Shape s;
  for (const char* text : {"g=2,m=100,n=64,k=128,scale=1", "g=1,m=64,n=8,k=128"}) {
    const auto bad = parse_shape(Family::grouped_gemm_fp8, text, s);
    ASSERT_TRUE(bad) << text;
    EXPECT_EQ(bad->code, "bad_shape");
    EXPECT_NE(bad->message.find("m is the rows of each group and must be a multiple of 128"), std::string::npos)
        << bad->message;
    EXPECT_NE(bad->message.find("grouped_gemm_fp8"), std::string::npos) << bad->message;
  }
  const auto scale = parse_shape(Family::grouped_gemm_fp8, "g=2,m=128,n=8,k=128,scale=4", s);
  ASSERT_TRUE(scale);
  EXPECT_NE(scale->message.find("scale must be 0"), std::string::npos) << scale->message;
  const auto missing = parse_shape(Family::grouped_gemm_fp8, "m=128,n=8,k=128,scale=0", s);
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->message.find("missing key 'g'"), std::string::npos) << missing->message;
  const auto tall = parse_shape(Family::grouped_gemm_fp8, "g=1025,m=1048576,n=8,k=128", s);
  ASSERT_TRUE(tall);
  EXPECT_NE(tall->message.find("g*m"), std::string::npos) << tall->message;
  EXPECT_TRUE(parse_shape(Family::gemm_fp8, "g=1,m=128,n=1,k=128,scale=0", s));      // not a gemm_fp8 key
  EXPECT_TRUE(parse_shape(Family::grouped_gemm, "g=1,m=128,n=1,k=128,scale=0", s));  // nor a bf16 grouped one
}

TEST(HarnessGroupedFp8, FamilyIsNamedAndParsed) {
  EXPECT_STREQ(kport::kernels::family_name(Family::grouped_gemm_fp8), "grouped_gemm_fp8");
  EXPECT_EQ(parse_family("grouped_gemm_fp8"), Family::grouped_gemm_fp8);
}

TEST(HarnessGroupedFp8, BenchGridHoldsTheTargetAndSmallerMoeShapesInEveryMode) {
  const auto bench = bench_grid(Family::grouped_gemm_fp8);
  const auto check = check_grid(Family::grouped_gemm_fp8);
  for (int scale : {0, 1, 2, 3}) {
    EXPECT_TRUE(has(bench, 4, 8192, 4096, 7168, scale)) << scale;  // the target
    EXPECT_TRUE(has(bench, 8, 1024, 7168, 2048, scale)) << scale;
    EXPECT_TRUE(has(bench, 8, 256, 4096, 7168, scale)) << scale;
  }
  for (const Shape& s : bench) {
    EXPECT_EQ(s.family, Family::grouped_gemm_fp8);
    if (s.valid < 0) {
      EXPECT_EQ(s.m % kport::kernels::k_grouped_m_align, 0) << shape_string(s);
    }
    // every bench shape is checked
    EXPECT_TRUE(has(check, s.groups, s.m, s.n, s.k, s.scale, s.valid)) << shape_string(s);
  }
  // Decode in the masked layout, with block scales.
  EXPECT_TRUE(has(bench, 8, 256, 4096, 7168, 2, 64));
  EXPECT_TRUE(has(bench, 32, 128, 7168, 2048, 2, 16));
}

TEST(HarnessGroupedFp8, CheckGridHasSeveralGroupsOnTheCpuReferenceAndTheRefusedKs) {
  const auto check = check_grid(Family::grouped_gemm_fp8);
  for (int scale : {0, 1, 2, 3}) {
    int cpu_several_groups = 0, k_not_128 = 0, k_not_16 = 0, n_off_tiles = 0, masked = 0;
    for (const Shape& s : check) {
      if (s.valid >= 0) {  // the masked layout's, in every mode too
        masked += s.scale == scale;
        continue;
      }
      EXPECT_EQ(s.m % kport::kernels::k_grouped_m_align, 0) << shape_string(s);
      if (s.scale != scale) continue;
      // Small enough for the CPU double reference (2^27 multiply-adds), three groups or more.
      if (s.groups >= 3 && double(s.groups) * s.m * s.n * s.k <= double(1 << 27)) ++cpu_several_groups;
      if (s.k % 16 == 0 && s.k % 128 != 0) ++k_not_128;  // the block modes refuse, the others take
      if (s.k % 16 != 0) ++k_not_16;                     // every mode refuses
      if (s.n % 128 != 0 && s.n % 160 != 0) ++n_off_tiles;
    }
    EXPECT_GE(cpu_several_groups, 3) << scale;
    EXPECT_GE(k_not_128, 2) << scale;
    EXPECT_GE(k_not_16, 1) << scale;
    EXPECT_GE(n_off_tiles, 3) << scale;
    EXPECT_GE(masked, 6) << scale;
  }
}

TEST(HarnessGroupedFp8, NeighbouringGroupsWeightsDifferByAPowerOfTwo) {
  // The groups' gains make a kernel that reads another group's B or scales fail the check:
  // among any five consecutive groups no two share a gain, and each gain is an exact power of 2.
  for (int first = 0; first < 10; ++first) {
    std::set<float> gains;
    for (int g = first; g < first + 5; ++g) {
      const float gain = fp8_group_gain(g);
      int e = 0;
      EXPECT_EQ(std::frexp(gain, &e), 0.5f) << g;  // a power of two
      EXPECT_GE(gain, 0.25f);
      EXPECT_LE(gain, 4.0f);
      gains.insert(gain);
    }
    EXPECT_EQ(gains.size(), 5u) << first;
  }
  EXPECT_EQ(fp8_group_gain(2), 1.0f);
}

TEST(HarnessGroupedFp8, TolerancesAreGemmFp8s) {
  for (DType t : {DType::e4m3, DType::e5m2}) {
    const Tolerance g = tolerance_for(Family::grouped_gemm_fp8, t);
    const Tolerance d = tolerance_for(Family::gemm_fp8, t);
    EXPECT_EQ(g.normwise, d.normwise);
    EXPECT_EQ(g.max_abs_rel, d.max_abs_rel);
    EXPECT_EQ(g.normwise, 6e-3);
    EXPECT_EQ(g.lse_abs, 0.0);
  }
}

TEST(HarnessGroupedFp8, AShapeWithGroupsAndScaleSelectsTheGroupedFp8Instances) {
  Options o;
  const std::vector<std::string> args = {"bench", "--all", "--shape", "g=4,m=8192,n=4096,k=7168,scale=2"};
  ASSERT_FALSE(parse_args(args, o));
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(o, {&k_fp8, &k_grouped, &k_grouped_fp8}, cases));
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].instance, &k_grouped_fp8);
  EXPECT_EQ(cases[0].dtype, DType::e4m3);  // bench's default: the instance's first dtype
  EXPECT_EQ(cases[0].shape.scale, 2);
  Options c;
  const std::vector<std::string> check_args = {"check", "--all", "--filter", "grouped_gemm_fp8"};
  ASSERT_FALSE(parse_args(check_args, c));
  ASSERT_FALSE(select_cases(c, {&k_fp8, &k_grouped, &k_grouped_fp8}, cases));
  EXPECT_EQ(cases.size(), 2 * check_grid(Family::grouped_gemm_fp8).size());  // both formats
}

TEST(HarnessGroupedFp8, AnUnalignedShapeNoInstanceTakesIsRefusedAsGroupedFp8) {
  Options o;
  const std::vector<std::string> args = {"bench", "--all", "--shape", "g=4,m=100,n=4096,k=7168,scale=1"};
  ASSERT_FALSE(parse_args(args, o));
  std::vector<Case> cases;
  const auto err = select_cases(o, {&k_fp8, &k_grouped, &k_grouped_fp8}, cases);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, "bad_shape");
  EXPECT_NE(err->message.find("grouped_gemm_fp8"), std::string::npos) << err->message;
  EXPECT_NE(err->message.find("multiple of 128"), std::string::npos) << err->message;
}

TEST(HarnessGroupedFp8, ACaseNamesTheInstanceDtypeAndShape) {
  Options o;
  const std::vector<std::string> args = {"bench", "--case",
                                         "grouped_gemm_fp8.fake:e5m2:g=4,m=8192,n=4096,k=7168,scale=1", "--case",
                                         "gemm_fp8.fake:e5m2:m=32768,n=4096,k=7168,scale=1"};
  ASSERT_FALSE(parse_args(args, o));
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(o, {&k_fp8, &k_grouped_fp8}, cases));
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].instance, &k_grouped_fp8);
  EXPECT_EQ(cases[0].shape.groups, 4);
  EXPECT_EQ(cases[1].instance, &k_fp8);
  // The dense gemm at m = g*m does the same work as the grouped one.
  EXPECT_EQ(flop_count(cases[0].shape), flop_count(cases[1].shape));
}

TEST(HarnessGroupedFp8, ValidBelowMIsTheMaskedLayoutWrittenAfterTheScale) {
  Shape s;
  ASSERT_FALSE(parse_shape(Family::grouped_gemm_fp8, "valid=16,scale=2,k=2048,n=7168,m=128,g=32", s));
  EXPECT_EQ(s.valid, 16);
  EXPECT_EQ(s.scale, 2);
  EXPECT_EQ(shape_string(s), "g=32,m=128,n=7168,k=2048,scale=2,valid=16");
  EXPECT_EQ(shape_json(s)["valid"], 16);
  EXPECT_EQ(flop_count(s), 2.0 * 32 * 16 * 7168 * 2048);
  EXPECT_EQ(byte_count(s, DType::e4m3), 32 * (16.0 * 2048 + 7168.0 * 2048 + 2.0 * 16 * 7168));
  ASSERT_FALSE(parse_shape(Family::grouped_gemm_fp8, "g=5,m=65,n=264,k=384,valid=20", s));  // any m; scale 0
  EXPECT_EQ(shape_string(s), "g=5,m=65,n=264,k=384,scale=0,valid=20");
  ASSERT_FALSE(parse_shape(Family::grouped_gemm_fp8, "g=4,m=128,n=8,k=128,scale=1,valid=128", s));
  EXPECT_EQ(shape_string(s), "g=4,m=128,n=8,k=128,scale=1");  // every row: the contiguous layout
  const auto above = parse_shape(Family::grouped_gemm_fp8, "g=4,m=65,n=8,k=128,valid=66", s);
  ASSERT_TRUE(above);
  EXPECT_NE(above->message.find("between 0 and m=65"), std::string::npos) << above->message;
}

TEST(HarnessGroupedFp8, CheckGridHasMaskedCasesInEveryMode) {
  const auto check = check_grid(Family::grouped_gemm_fp8);
  for (int scale : {0, 1, 2}) {
    int masked = 0, none = 0, odd_m = 0, k_not_128 = 0;
    for (const Shape& s : check) {
      if (s.valid < 0 || s.scale != scale) continue;
      ++masked;
      EXPECT_LT(s.valid, s.m) << shape_string(s);
      none += s.valid == 0;
      odd_m += s.m % 2 == 1;
      k_not_128 += s.k % 128 != 0;
    }
    EXPECT_GE(masked, 5) << scale;
    EXPECT_GE(none, 1) << scale;
    EXPECT_GE(odd_m, 3) << scale;  // m of 1, 7 and 65
    EXPECT_GE(k_not_128, 1) << scale;
  }
}
