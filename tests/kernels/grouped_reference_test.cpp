// grouped_gemm's CPU reference against a naive loop over the contiguous layout, and the
// property that makes it a grouped problem: group g's rows see only B[g].
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "reference/reference.h"

namespace kr = kport::reference;

namespace {

// Small integers: every product and sum is exact in float and double alike.
std::vector<float> ramp(std::size_t n, int mod, int offset) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>((i * 7 + 3) % mod) - offset);
  return v;
}

}  // namespace

TEST(GroupedGemmReference, MatchesANaiveLoopOverTheContiguousLayout) {
  const int groups = 3, m = 4, n = 5, k = 6;
  const auto a = ramp(std::size_t(groups) * m * k, 11, 5);
  const auto b = ramp(std::size_t(groups) * k * n, 9, 4);
  std::vector<double> d(std::size_t(groups) * m * n, -1.0);
  kr::grouped_gemm(a.data(), b.data(), d.data(), groups, m, n, k);
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double want = 0.0;
        for (int p = 0; p < k; ++p)
          want += double(a[(std::size_t(g) * m + i) * k + p]) * b[(std::size_t(g) * k + p) * n + j];
        EXPECT_EQ(d[(std::size_t(g) * m + i) * n + j], want) << "group " << g << " row " << i << " col " << j;
      }
}

TEST(GroupedGemmReference, EachGroupUsesOnlyItsOwnWeight) {
  // A is all ones; B[g] is all (g + 1): row r of group g sums k copies of g + 1.
  const int groups = 4, m = 2, n = 3, k = 5;
  std::vector<float> a(std::size_t(groups) * m * k, 1.0f), b(std::size_t(groups) * k * n);
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < k * n; ++i) b[std::size_t(g) * k * n + i] = static_cast<float>(g + 1);
  std::vector<double> d(std::size_t(groups) * m * n);
  kr::grouped_gemm(a.data(), b.data(), d.data(), groups, m, n, k);
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < m * n; ++i) EXPECT_EQ(d[std::size_t(g) * m * n + i], double(k) * (g + 1)) << g;
}

TEST(GroupedGemmReference, OneGroupIsThePlainGemm) {
  const int m = 3, n = 7, k = 4;
  const auto a = ramp(std::size_t(m) * k, 13, 6);
  const auto b = ramp(std::size_t(k) * n, 5, 2);
  std::vector<double> grouped(std::size_t(m) * n), plain(std::size_t(m) * n);
  kr::grouped_gemm(a.data(), b.data(), grouped.data(), 1, m, n, k);
  kr::gemm(a.data(), b.data(), plain.data(), m, n, k);
  EXPECT_EQ(grouped, plain);
}

TEST(GroupedGemmReference, TheMaskedLayoutComputesEachGroupsValidRowsOnly) {
  // Group g's first counts[g] rows as the contiguous layout's; the rows after them untouched.
  const int groups = 3, m = 4, n = 2, k = 3;
  const int counts[groups] = {0, 4, 2};
  const auto a = ramp(std::size_t(groups) * m * k, 11, 5);
  const auto b = ramp(std::size_t(groups) * k * n, 9, 4);
  std::vector<double> all(std::size_t(groups) * m * n), d(all.size(), -7.0);
  kr::grouped_gemm(a.data(), b.data(), all.data(), groups, m, n, k);
  kr::grouped_gemm(a.data(), b.data(), d.data(), groups, m, n, k, counts);
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        const std::size_t at = (std::size_t(g) * m + i) * n + j;
        EXPECT_EQ(d[at], i < counts[g] ? all[at] : -7.0) << "group " << g << " row " << i << " col " << j;
      }
  std::vector<double> nt(d.size(), -7.0);
  kr::grouped_gemm_nt(a.data(), b.data(), nt.data(), groups, m, n, k, nullptr, counts);
  for (int g = 0; g < groups; ++g)
    for (int i = counts[g]; i < m; ++i) EXPECT_EQ(nt[(std::size_t(g) * m + i) * n], -7.0) << g << " " << i;
  EXPECT_NE(nt[(std::size_t(1) * m + 3) * n], -7.0);
}
