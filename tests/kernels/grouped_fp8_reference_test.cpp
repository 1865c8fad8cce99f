// grouped_gemm_fp8's CPU reference: the groups' B dequantized with their own scales, and the
// grouped K-contiguous product against a naive loop, each group seeing only its own B.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "kport/kernels/fp8_scales.h"
#include "reference/reference.h"

namespace kr = kport::reference;
using kport::kernels::Fp8Scale;

namespace {

// Small integers: every product and sum is exact in float and double alike.
std::vector<float> ramp(std::size_t n, int mod, int offset) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>((i * 7 + 3) % mod) - offset);
  return v;
}

}  // namespace

TEST(GroupedFp8Layout, GroupScalesOfBFollowOneAnotherInGemmFp8sLayout) {
  using kport::kernels::fp8_group_scale_b_offset;
  EXPECT_EQ(fp8_group_scale_b_offset(Fp8Scale::tensor, 3, 4096, 7168), 3);  // one per group
  EXPECT_EQ(fp8_group_scale_b_offset(Fp8Scale::row, 3, 4096, 7168), 3 * 4096);
  // ceil(200/128) = 2 row blocks of B times ceil(528/128) = 5 K blocks per group.
  EXPECT_EQ(fp8_group_scale_b_offset(Fp8Scale::block128, 3, 200, 528), 3 * 2 * 5);
  EXPECT_EQ(fp8_group_scale_b_offset(Fp8Scale::block128, 0, 200, 528), 0);
}

TEST(GroupedFp8Reference, MatchesANaiveLoopOverTheContiguousLayout) {
  const int groups = 3, m = 4, n = 5, k = 6;
  const auto a = ramp(std::size_t(groups) * m * k, 11, 5);
  const auto b = ramp(std::size_t(groups) * n * k, 9, 4);
  std::vector<double> d(std::size_t(groups) * m * n, -1.0), rss(d.size(), -1.0);
  kr::grouped_gemm_nt(a.data(), b.data(), d.data(), groups, m, n, k, rss.data());
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double want = 0.0, squares = 0.0;
        for (int p = 0; p < k; ++p) {
          const double product = double(a[(std::size_t(g) * m + i) * k + p]) * b[(std::size_t(g) * n + j) * k + p];
          want += product;
          squares += product * product;
        }
        const std::size_t at = (std::size_t(g) * m + i) * n + j;
        EXPECT_EQ(d[at], want) << "group " << g << " row " << i << " col " << j;
        EXPECT_DOUBLE_EQ(rss[at], std::sqrt(squares)) << "group " << g << " row " << i << " col " << j;
      }
}

TEST(GroupedFp8Reference, EachGroupUsesOnlyItsOwnWeightAndScales) {
  // A and B all ones; group g's B scale is 2^g per tensor: every output of group g is k * 2^g.
  const int groups = 4, m = 2, n = 3, k = 5;
  std::vector<float> a(std::size_t(groups) * m * k, 1.0f), b(std::size_t(groups) * n * k, 1.0f);
  std::vector<float> sb(groups);
  for (int g = 0; g < groups; ++g) sb[g] = std::ldexp(1.0f, g);
  kr::dequantize_fp8_grouped_b(b.data(), sb.data(), groups, n, k, Fp8Scale::tensor);
  std::vector<double> d(std::size_t(groups) * m * n);
  kr::grouped_gemm_nt(a.data(), b.data(), d.data(), groups, m, n, k);
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < m * n; ++i) EXPECT_EQ(d[std::size_t(g) * m * n + i], double(k) * std::ldexp(1.0, g)) << g;
}

TEST(GroupedFp8Reference, RowAndBlockScalesOfBAreTakenPerGroup) {
  // Row-wise: group g's B row j is scaled by (g + 1) * (j + 1).
  const int groups = 3, n = 4, k = 8;
  std::vector<float> b(std::size_t(groups) * n * k, 1.0f), sb(std::size_t(groups) * n);
  for (int g = 0; g < groups; ++g)
    for (int j = 0; j < n; ++j) sb[std::size_t(g) * n + j] = float((g + 1) * (j + 1));
  kr::dequantize_fp8_grouped_b(b.data(), sb.data(), groups, n, k, Fp8Scale::row);
  for (int g = 0; g < groups; ++g)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) EXPECT_EQ(b[(std::size_t(g) * n + j) * k + p], float((g + 1) * (j + 1)));
  // block128: N 130 is two row blocks, K 256 two K blocks; group g's block (p, kb) scale is
  // 100 g + 10 p + kb, found at g * 4 + p * 2 + kb.
  const int nb = 130, kb = 256, blocks = 2 * 2;
  std::vector<float> bb(std::size_t(groups) * nb * kb, 1.0f), sbb(std::size_t(groups) * blocks);
  for (int g = 0; g < groups; ++g)
    for (int p = 0; p < 2; ++p)
      for (int q = 0; q < 2; ++q) sbb[std::size_t(g) * blocks + p * 2 + q] = float(100 * g + 10 * p + q);
  kr::dequantize_fp8_grouped_b(bb.data(), sbb.data(), groups, nb, kb, Fp8Scale::block128);
  for (int g = 0; g < groups; ++g)
    for (int row : {0, 127, 128, 129})
      for (int col : {0, 127, 128, 255})
        EXPECT_EQ(bb[(std::size_t(g) * nb + row) * kb + col], float(100 * g + 10 * (row / 128) + col / 128))
            << "group " << g << " row " << row << " col " << col;
}

TEST(GroupedFp8Reference, OneGroupIsGemmFp8sReference) {
  const int m = 3, n = 7, k = 4;
  const auto a = ramp(std::size_t(m) * k, 13, 6);
  const auto b = ramp(std::size_t(n) * k, 5, 2);
  std::vector<double> grouped(std::size_t(m) * n), plain(std::size_t(m) * n);
  kr::grouped_gemm_nt(a.data(), b.data(), grouped.data(), 1, m, n, k);
  kr::gemm_nt(a.data(), b.data(), plain.data(), m, n, k);
  EXPECT_EQ(grouped, plain);
}
