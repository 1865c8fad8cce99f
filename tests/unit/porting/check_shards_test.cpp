// How one arch's check splits over the GPUs that can take it: by family, heaviest first
// to the lightest shard, the last shard also taking every family nobody named.
#include <gtest/gtest.h>

#include "kport/porting/check_shards.h"

namespace kport::porting {
namespace {

using Names = std::vector<std::string>;

TEST(CheckShards, OneWorkerIsOneShardOfEveryFamilyAndTheRest) {
  auto s = plan_check_shards({{"gemm", 500}, {"rmsnorm", 40}, {"attention", 300}}, 1);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].families, (Names{"attention", "gemm", "rmsnorm"}));
  EXPECT_TRUE(s[0].rest);
  EXPECT_DOUBLE_EQ(s[0].weight, 840);
}

TEST(CheckShards, NoWorkerOnlineStillGivesTheWholeCheckAsOneShard) {
  // Spawned while no GPU runner is online: one job waits for the first to come.
  auto s = plan_check_shards({{"gemm", 5}, {"softmax", 1}}, 0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].families, (Names{"gemm", "softmax"}));
  EXPECT_TRUE(s[0].rest);
}

TEST(CheckShards, TwoWorkersBalanceTheWeightHeaviestFirst) {
  // gemm (600) alone; attention (300), grouped (200), rmsnorm (60), softmax (40) together.
  auto s =
      plan_check_shards({{"rmsnorm", 60}, {"gemm", 600}, {"softmax", 40}, {"attention", 300}, {"grouped", 200}}, 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].families, (Names{"gemm"}));
  EXPECT_DOUBLE_EQ(s[0].weight, 600);
  EXPECT_FALSE(s[0].rest);
  EXPECT_EQ(s[1].families, (Names{"attention", "grouped", "rmsnorm", "softmax"}));
  EXPECT_DOUBLE_EQ(s[1].weight, 600);
  EXPECT_TRUE(s[1].rest);
}

TEST(CheckShards, NeverMoreShardsThanFamiliesAndEachFamilyInExactlyOne) {
  auto s = plan_check_shards({{"gemm", 3}, {"softmax", 2}, {"rmsnorm", 1}}, 8);
  ASSERT_EQ(s.size(), 3u);
  Names all;
  for (const auto& shard : s) {
    EXPECT_EQ(shard.families.size(), 1u);
    all.insert(all.end(), shard.families.begin(), shard.families.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (Names{"gemm", "rmsnorm", "softmax"}));
  EXPECT_TRUE(s.back().rest);
  EXPECT_FALSE(s.front().rest);
}

TEST(CheckShards, NoFamilyWeighedIsOneRestShardNamingNone) {
  // A build without records: the one job checks whatever the harness holds.
  auto s = plan_check_shards({}, 4);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].families.empty());
  EXPECT_TRUE(s[0].rest);
}

TEST(CheckShards, RepeatedNamesAddUpNegativeWeightsCountAsZeroAndTiesGoByName) {
  auto s = plan_check_shards({{"b", 1}, {"a", 1}, {"c", -5}, {"b", 1}, {"", 9}}, 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].families, (Names{"b"}));
  EXPECT_DOUBLE_EQ(s[0].weight, 2);
  EXPECT_EQ(s[1].families, (Names{"a", "c"}));
  // The same input, the same plan.
  auto again = plan_check_shards({{"b", 1}, {"a", 1}, {"c", -5}, {"b", 1}, {"", 9}}, 2);
  EXPECT_EQ(again[0].families, s[0].families);
  EXPECT_EQ(again[1].families, s[1].families);
}

}  // namespace
}  // namespace kport::porting
