// The masked layout's counts (kport/kernels/masked_counts.h): what a masked case of the
// grouped gemms is. They must sum to g * valid (the case's work), stay within 0 .. m, spread
// from an empty group to a full one, and never change for a case already measured: the
// decode shapes of the bench grids are pinned here.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kport/kernels/masked_counts.h"

using kport::kernels::masked_counts;

TEST(MaskedCounts, SumToGroupsTimesValidAndStayWithinEachGroupsRows) {
  for (int g : {1, 2, 3, 4, 5, 8, 17, 32, 64, 256, 4096})
    for (int m : {1, 2, 7, 65, 128, 200, 256, 1000})
      for (int valid : {0, 1, 2, m / 3, m / 2, m - 1, m}) {
        if (valid < 0 || valid > m) continue;
        const std::vector<int> c = masked_counts(g, m, valid);
        ASSERT_EQ(c.size(), static_cast<std::size_t>(g));
        EXPECT_EQ(std::accumulate(c.begin(), c.end(), 0LL), static_cast<long long>(g) * valid)
            << "g=" << g << ",m=" << m << ",valid=" << valid;
        for (int x : c) {
          EXPECT_GE(x, 0);
          EXPECT_LE(x, m);
        }
      }
}

TEST(MaskedCounts, SpreadFromAnEmptyGroupToAFullOne) {
  for (int g : {3, 4, 8, 32})
    for (int m : {7, 65, 128, 256})
      for (int valid : {1, m / 4 + 1, m / 2}) {
        const std::vector<int> c = masked_counts(g, m, valid);
        EXPECT_EQ(c.front(), 0) << "g=" << g << ",m=" << m << ",valid=" << valid;  // an idle expert
        // A hot one: full as soon as there are m rows in all.
        EXPECT_EQ(c.back(), std::min<long long>(m, static_cast<long long>(g) * valid));
        for (int i = 2; i < g; ++i) EXPECT_LE(c[i - 1], c[i]) << i;  // few to many between them
      }
  // Every group but the first full: the first takes the rest.
  EXPECT_EQ(masked_counts(4, 7, 6), (std::vector<int>{3, 7, 7, 7}));
}

TEST(MaskedCounts, EdgeCasesAreTheObviousOnes) {
  EXPECT_EQ(masked_counts(1, 7, 1), std::vector<int>{1});  // one group: all of it
  EXPECT_EQ(masked_counts(3, 1, 0), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(masked_counts(3, 5, 5), (std::vector<int>{5, 5, 5}));  // every row
  EXPECT_EQ(masked_counts(2, 200, 150), (std::vector<int>{100, 200}));
  EXPECT_EQ(masked_counts(6, 128, 1), (std::vector<int>{0, 0, 0, 0, 0, 6}));
  EXPECT_TRUE(masked_counts(0, 8, 1).empty());
}

// The bench grids' decode shapes: their results are keyed by (g, m, valid), so their counts
// are part of what a stored figure means. A change here is a new case, not a fix.
TEST(MaskedCounts, TheDecodeShapesCountsArePinned) {
  EXPECT_EQ(masked_counts(8, 256, 64), (std::vector<int>{0, 12, 24, 36, 49, 61, 74, 256}));
  EXPECT_EQ(masked_counts(32, 128, 16),
            (std::vector<int>{0,  0,  1,  2,  3,  4,  5,  5,  6,  7,  8,  9,  10, 10, 11, 12,
                              13, 14, 15, 15, 16, 17, 19, 20, 21, 21, 22, 23, 24, 25, 26, 128}));
  EXPECT_EQ(masked_counts(5, 65, 20), (std::vector<int>{0, 5, 12, 18, 65}));
  EXPECT_EQ(masked_counts(8, 200, 64), (std::vector<int>{0, 14, 29, 44, 60, 75, 90, 200}));
}
