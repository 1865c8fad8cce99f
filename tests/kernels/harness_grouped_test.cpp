// kport-harness host code for grouped_gemm: its shapes (g groups of m rows, m a multiple of
// 128 in the contiguous layout, refused otherwise with the reason; any m in the masked layout,
// valid < m), work counts, grids, tolerances and case selection.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "case_selection.h"
#include "cli.h"
#include "kport/kernels/masked_counts.h"
#include "shapes.h"
#include "tolerance.h"

using namespace kport::harness;
using kport::kernels::Instance;
using kport::kernels::Problem;

namespace {

std::string accept(const Problem&) { return ""; }
cudaError_t no_launch(const Problem&, cudaStream_t) { return cudaSuccess; }

const Instance k_grouped{
    Family::grouped_gemm, "simt", "grouped_gemm.fake", {"simt"}, {DType::bf16}, "{}", &accept, &no_launch};
const Instance k_gemm{Family::gemm, "simt", "gemm.fake", {"simt"}, {DType::bf16}, "{}", &accept, &no_launch};

// valid -1: the contiguous layout.
bool has(const std::vector<Shape>& grid, int g, int m, int n, int k, int valid = -1) {
  return std::any_of(grid.begin(), grid.end(), [&](const Shape& s) {
    return s.groups == g && s.m == m && s.n == n && s.k == k && s.valid == valid;
  });
}

}  // namespace

TEST(HarnessGrouped, ShapeIsGroupsRowsPerGroupNAndK) {
  Shape s;
  ASSERT_FALSE(parse_shape(Family::grouped_gemm, "k=7168,n=4096,m=8192,g=4", s));
  EXPECT_EQ(s.family, Family::grouped_gemm);
  EXPECT_EQ(s.groups, 4);
  EXPECT_EQ(s.m, 8192);
  EXPECT_EQ(shape_string(s), "g=4,m=8192,n=4096,k=7168");
  EXPECT_EQ(shape_json(s)["g"], 4);
  EXPECT_EQ(shape_json(s)["m"], 8192);
  EXPECT_EQ(flop_count(s), 2.0 * 4 * 8192 * 4096 * 7168);
  EXPECT_EQ(output_elements(s), 4.0 * 8192 * 4096);
  // Every group's A, B and D, as gemm counts one gemm's.
  EXPECT_EQ(byte_count(s, DType::bf16), 2.0 * 4 * (8192.0 * 7168 + 7168.0 * 4096 + 8192.0 * 4096));
  const Problem p = make_problem(s, DType::bf16);
  EXPECT_EQ(p.family, Family::grouped_gemm);
  EXPECT_EQ(p.grouped_gemm.groups, 4);
  EXPECT_EQ(p.grouped_gemm.m, 8192);
  EXPECT_EQ(p.grouped_gemm.n, 4096);
  EXPECT_EQ(p.grouped_gemm.k, 7168);
}

TEST(HarnessGrouped, RowsPerGroupNotAMultipleOf128AreRefusedSayingWhy) {
  Shape s;
  for (const char* text : {"g=2,m=100,n=64,k=64", "g=2,m=129,n=64,k=64", "g=1,m=64,n=8,k=8"}) {
    const auto bad = parse_shape(Family::grouped_gemm, text, s);
    ASSERT_TRUE(bad) << text;
    EXPECT_EQ(bad->code, "bad_shape");
    EXPECT_NE(bad->message.find("m is the rows of each group and must be a multiple of 128"), std::string::npos)
        << bad->message;
  }
  const auto missing = parse_shape(Family::grouped_gemm, "m=128,n=64,k=64", s);
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->message.find("missing key 'g'"), std::string::npos) << missing->message;
  const auto zero = parse_shape(Family::grouped_gemm, "g=0,m=128,n=64,k=64", s);
  ASSERT_TRUE(zero);
  EXPECT_NE(zero->message.find("g must be between 1"), std::string::npos) << zero->message;
  const auto tall = parse_shape(Family::grouped_gemm, "g=1025,m=1048576,n=8,k=8", s);
  ASSERT_TRUE(tall);
  EXPECT_NE(tall->message.find("g*m"), std::string::npos) << tall->message;
  EXPECT_TRUE(parse_shape(Family::gemm, "g=1,m=128,n=1,k=1", s));              // not a gemm key
  EXPECT_FALSE(parse_shape(Family::grouped_gemm, "g=3,m=256,n=255,k=63", s));  // odd N and K are fine
}

TEST(HarnessGrouped, FamilyIsNamedAndParsed) {
  EXPECT_STREQ(kport::kernels::family_name(Family::grouped_gemm), "grouped_gemm");
  EXPECT_EQ(parse_family("grouped_gemm"), Family::grouped_gemm);
}

TEST(HarnessGrouped, GridsHoldTheTargetShapeMoeShapesAndSmallOddOnes) {
  const auto bench = bench_grid(Family::grouped_gemm);
  const auto check = check_grid(Family::grouped_gemm);
  EXPECT_TRUE(has(bench, 4, 8192, 4096, 7168));  // the target
  EXPECT_TRUE(has(bench, 8, 2048, 4096, 7168));
  EXPECT_TRUE(has(bench, 8, 512, 7168, 2048));
  for (const Shape& s : bench) {
    EXPECT_EQ(s.family, Family::grouped_gemm);
    if (s.valid < 0) {
      EXPECT_EQ(s.m % kport::kernels::k_grouped_m_align, 0) << shape_string(s);
    }
    EXPECT_TRUE(has(check, s.groups, s.m, s.n, s.k, s.valid)) << shape_string(s);  // every bench shape is checked
  }
  // Small enough for the CPU double reference (2^27 multiply-adds), N odd or below a tile.
  int cpu_sized_odd_n = 0;
  for (const Shape& s : check) {
    if (s.valid >= 0) continue;  // the masked layout's, below
    EXPECT_EQ(s.m % kport::kernels::k_grouped_m_align, 0) << shape_string(s);
    if (s.n % 2 == 1 && double(s.groups) * s.m * s.n * s.k <= double(1 << 27)) ++cpu_sized_odd_n;
  }
  EXPECT_GE(cpu_sized_odd_n, 2);
  EXPECT_TRUE(has(check, 3, 128, 255, 63));
  EXPECT_TRUE(has(check, 1, 128, 64, 64));  // one group
}

TEST(HarnessGrouped, TolerancesAreGemmsForTheSameDtype) {
  // Each group is a gemm of the same K: the same error model, the same bounds.
  const Tolerance g = tolerance_for(Family::grouped_gemm, DType::bf16);
  const Tolerance d = tolerance_for(Family::gemm, DType::bf16);
  EXPECT_EQ(g.normwise, d.normwise);
  EXPECT_EQ(g.max_abs_rel, d.max_abs_rel);
  EXPECT_EQ(g.lse_abs, 0.0);
}

TEST(HarnessGrouped, AShapeWithGroupsSelectsOnlyGroupedInstances) {
  Options o;
  const std::vector<std::string> args = {"bench", "--all", "--shape", "g=4,m=8192,n=4096,k=7168"};
  ASSERT_FALSE(parse_args(args, o));
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(o, {&k_gemm, &k_grouped}, cases));
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].instance, &k_grouped);
  EXPECT_EQ(cases[0].shape.groups, 4);
  Options c;
  const std::vector<std::string> check_args = {"check", "--all", "--filter", "grouped_gemm", "--dtype", "bf16"};
  ASSERT_FALSE(parse_args(check_args, c));
  ASSERT_FALSE(select_cases(c, {&k_gemm, &k_grouped}, cases));
  EXPECT_EQ(cases.size(), check_grid(Family::grouped_gemm).size());
}

TEST(HarnessGrouped, AnUnalignedShapeNoInstanceTakesIsRefusedWithTheReason) {
  // No instance parses m=100: the guessed family (g= names grouped_gemm) says why.
  Options o;
  const std::vector<std::string> args = {"bench", "--all", "--shape", "g=4,m=100,n=4096,k=7168"};
  ASSERT_FALSE(parse_args(args, o));
  std::vector<Case> cases;
  const auto err = select_cases(o, {&k_gemm, &k_grouped}, cases);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, "bad_shape");
  EXPECT_NE(err->message.find("grouped_gemm"), std::string::npos) << err->message;
  EXPECT_NE(err->message.find("multiple of 128"), std::string::npos) << err->message;
}

TEST(HarnessGrouped, ValidBelowMIsTheMaskedLayoutAnyM) {
  Shape s;
  ASSERT_FALSE(parse_shape(Family::grouped_gemm, "valid=64,k=7168,n=4096,m=256,g=8", s));
  EXPECT_EQ(s.valid, 64);
  EXPECT_EQ(shape_string(s), "g=8,m=256,n=4096,k=7168,valid=64");
  EXPECT_EQ(shape_json(s)["valid"], 64);
  // The work of the valid rows: the counts sum to g * valid.
  EXPECT_EQ(flop_count(s), 2.0 * 8 * 64 * 4096 * 7168);
  EXPECT_EQ(byte_count(s, DType::bf16), 2.0 * 8 * (64.0 * 7168 + 7168.0 * 4096 + 64.0 * 4096));
  EXPECT_EQ(output_elements(s), 8.0 * 256 * 4096);  // D is every group's m rows
  // Any m, and no row or every row but one valid.
  for (const char* text : {"g=5,m=65,n=264,k=520,valid=20", "g=3,m=1,n=8,k=8,valid=0", "g=2,m=200,n=8,k=8,valid=199"}) {
    EXPECT_FALSE(parse_shape(Family::grouped_gemm, text, s)) << text;
    EXPECT_EQ(shape_string(s), text);
  }
  EXPECT_EQ(s.valid, 199);
}

TEST(HarnessGrouped, ValidOfEveryRowIsTheContiguousLayoutWrittenWithoutIt) {
  Shape s;
  for (const char* text :
       {"g=4,m=256,n=64,k=64,valid=256", "g=4,m=256,n=64,k=64,valid=1073741824", "g=4,m=256,n=64,k=64"}) {
    ASSERT_FALSE(parse_shape(Family::grouped_gemm, text, s)) << text;
    EXPECT_EQ(s.valid, -1) << text;
    EXPECT_EQ(shape_string(s), "g=4,m=256,n=64,k=64") << text;
    EXPECT_FALSE(shape_json(s).contains("valid")) << text;
    EXPECT_EQ(flop_count(s), 2.0 * 4 * 256 * 64 * 64);
  }
  // ... so the contiguous layout's rule holds for it.
  const auto unaligned = parse_shape(Family::grouped_gemm, "g=4,m=100,n=64,k=64,valid=100", s);
  ASSERT_TRUE(unaligned);
  EXPECT_NE(unaligned->message.find("multiple of 128"), std::string::npos) << unaligned->message;
  EXPECT_NE(unaligned->message.find("valid < m for the masked layout"), std::string::npos) << unaligned->message;
}

TEST(HarnessGrouped, ValidOutsideZeroToMAndTooManyMaskedGroupsAreRefusedSayingWhy) {
  Shape s;
  const auto above = parse_shape(Family::grouped_gemm, "g=4,m=100,n=64,k=64,valid=101", s);
  ASSERT_TRUE(above);
  EXPECT_EQ(above->code, "bad_shape");
  EXPECT_NE(above->message.find("valid (the mean valid rows per group) must be between 0 and m=100"), std::string::npos)
      << above->message;
  const auto negative = parse_shape(Family::grouped_gemm, "g=4,m=100,n=64,k=64,valid=-1", s);
  ASSERT_TRUE(negative);
  EXPECT_NE(negative->message.find("must be between 0 and m"), std::string::npos) << negative->message;
  const auto many = parse_shape(Family::grouped_gemm, "g=4097,m=2,n=8,k=8,valid=1", s);
  ASSERT_TRUE(many);
  EXPECT_NE(many->message.find("at most 4096 groups"), std::string::npos) << many->message;
  EXPECT_TRUE(parse_shape(Family::gemm, "m=8,n=8,k=8,valid=1", s));  // not a gemm key
}

TEST(HarnessGrouped, GridsHoldMaskedDecodeShapesAndOddMaskedOnes) {
  const auto bench = bench_grid(Family::grouped_gemm);
  const auto check = check_grid(Family::grouped_gemm);
  EXPECT_TRUE(has(bench, 8, 256, 4096, 7168, 64));
  EXPECT_TRUE(has(bench, 32, 128, 7168, 2048, 16));
  int empty_and_full = 0, mid_tile = 0, none = 0, one_row = 0;
  bool m_of[4] = {};
  for (const Shape& s : check) {
    if (s.valid < 0) continue;
    EXPECT_LT(s.valid, s.m) << shape_string(s);
    for (int i = 0; i < 4; ++i) m_of[i] = m_of[i] || s.m == std::array<int, 4>{1, 7, 65, 200}[i];
    none += s.valid == 0;
    one_row += s.valid == 1;
    const auto c = kport::kernels::masked_counts(s.groups, s.m, s.valid);
    if (s.groups >= 3 && c.front() == 0 && c.back() == s.m) ++empty_and_full;
    if (std::any_of(c.begin(), c.end(), [](int x) { return x % 64 != 0; })) ++mid_tile;
  }
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(m_of[i]) << i;
  EXPECT_GE(none, 1);
  EXPECT_GE(one_row, 2);
  EXPECT_GE(empty_and_full, 3);                  // an idle group and a full one in one case
  EXPECT_GE(mid_tile, 5);                        // a group's count ending inside a tile
  EXPECT_TRUE(has(check, 1, 7, 64, 64, 1));      // one group of one row
  EXPECT_TRUE(has(check, 3, 130, 255, 63, 40));  // odd N and K: the simt instance's
}

TEST(HarnessGrouped, AMaskedShapeSelectsTheGroupedInstances) {
  Options o;
  const std::vector<std::string> args = {"check", "--all", "--shape", "g=8,m=256,n=4096,k=7168,valid=64"};
  ASSERT_FALSE(parse_args(args, o));
  std::vector<Case> cases;
  ASSERT_FALSE(select_cases(o, {&k_gemm, &k_grouped}, cases));
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].instance, &k_grouped);
  EXPECT_EQ(cases[0].shape.valid, 64);
  EXPECT_EQ(shape_string(cases[0].shape), "g=8,m=256,n=4096,k=7168,valid=64");
}
