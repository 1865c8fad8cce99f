// Unmeasured /api/v1/best questions counted in memory and flushed to the store in batches.
#include "best_asks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

namespace kport::coordinator {
namespace {

db::BestKey key(int n) { return db::BestKey{"NVIDIA H200", "gemm", "bf16", "k=" + std::to_string(n) + ",m=8,n=8"}; }
UnmeasuredAsk ask(int n, const std::string& repo = "") { return UnmeasuredAsk{key(n), repo}; }

class BestAsksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = std::filesystem::temp_directory_path() / ("kport-best-asks-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(m_dir);
    db::Options o;
    o.path = (m_dir / "kport.db").string();
    auto s = db::Store::open(o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    m_store = std::move(*s);
  }
  void TearDown() override {
    m_store.reset();
    std::filesystem::remove_all(m_dir);
  }
  std::filesystem::path m_dir;
  std::unique_ptr<db::Store> m_store;
};

TEST_F(BestAsksTest, CountsArePendingUntilFlushedThenStoredOnceAndSummed) {
  BestAsks asks;
  asks.record(ask(1), 100);
  asks.record(ask(1), 200);
  asks.record(ask(2), 150);
  EXPECT_EQ(asks.pending(key(1), ""), 2);
  EXPECT_EQ(asks.pending_for("NVIDIA H200").size(), 2u);
  EXPECT_TRUE(asks.pending_for("NVIDIA B200").empty());
  ASSERT_TRUE(asks.flush(*m_store).ok());
  EXPECT_EQ(asks.pending(key(1), ""), 0) << "written, so no longer added on top of the store";
  asks.record(ask(1), 300);
  ASSERT_TRUE(asks.flush(*m_store).ok());
  ASSERT_TRUE(asks.flush(*m_store).ok()) << "nothing pending: nothing written";
  auto stored = m_store->list_best_asks("NVIDIA H200");
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 2u);
  EXPECT_EQ((*stored)[0].key.shape, key(1).shape);
  EXPECT_EQ((*stored)[0].asks, 3);
  EXPECT_EQ((*stored)[0].first_ms, 100);
  EXPECT_EQ((*stored)[0].last_ms, 300);
  EXPECT_EQ((*stored)[1].asks, 1);
}

TEST_F(BestAsksTest, DistinctKeysBeyondTheBoundAreDroppedUntilAFlushForgetsIdleOnes) {
  BestAsks asks;
  for (std::size_t i = 0; i < BestAsks::k_max_keys; ++i) asks.record(ask(static_cast<int>(i)), 1);
  asks.record(ask(0), 2);  // a key already counted still counts
  asks.record(ask(-1), 2);
  EXPECT_EQ(asks.dropped(), 1);
  EXPECT_EQ(asks.pending(key(0), ""), 2);
  EXPECT_EQ(asks.pending(key(-1), ""), 0);
  auto held = asks.counter(ask(7));  // as a cached answer holds it
  ASSERT_NE(held, nullptr);
  ASSERT_TRUE(asks.flush(*m_store).ok());  // writes every count
  ASSERT_TRUE(asks.flush(*m_store).ok());  // forgets the idle keys nobody holds
  asks.record(ask(-1), 3);
  EXPECT_EQ(asks.pending(key(-1), ""), 1);
  held->add(4);  // a cache hit after the flushes still counts
  EXPECT_EQ(asks.pending(key(7), ""), 1);
  ASSERT_TRUE(asks.flush(*m_store).ok());
  auto stored = m_store->list_best_asks("NVIDIA H200", 1000);
  ASSERT_TRUE(stored.ok());
  auto seven =
      std::find_if(stored->begin(), stored->end(), [](const db::BestAsk& a) { return a.key.shape == key(7).shape; });
  ASSERT_NE(seven, stored->end());
  EXPECT_EQ(seven->asks, 2);
  EXPECT_EQ(seven->last_ms, 4);
}

TEST_F(BestAsksTest, EachLibrarysAsksOfOneKeyAreCountedAndStoredApart) {
  BestAsks asks;
  asks.record(ask(1, "lib-a"), 100);
  asks.record(ask(1, "lib-a"), 110);
  asks.record(ask(1, "lib-b"), 120);
  asks.record(ask(1), 130);
  EXPECT_EQ(asks.pending(key(1), "lib-a"), 2);
  EXPECT_EQ(asks.pending(key(1), "lib-b"), 1);
  EXPECT_EQ(asks.pending(key(1), ""), 1);
  EXPECT_EQ(asks.pending_for("NVIDIA H200").size(), 3u);
  auto of_b = asks.pending_for("NVIDIA H200", std::string("lib-b"));
  ASSERT_EQ(of_b.size(), 1u);
  EXPECT_EQ(of_b[0].repo, "lib-b");
  EXPECT_EQ(of_b[0].asks, 1);
  ASSERT_TRUE(asks.flush(*m_store).ok());
  asks.record(ask(1, "lib-a"), 200);
  ASSERT_TRUE(asks.flush(*m_store).ok());
  auto stored = m_store->list_best_asks("NVIDIA H200");
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 3u);
  EXPECT_EQ((*stored)[0].repo, "lib-a") << "most asked first";
  EXPECT_EQ((*stored)[0].asks, 3);
  EXPECT_EQ((*stored)[0].last_ms, 200);
  auto only_b = m_store->list_best_asks("NVIDIA H200", 100, std::string("lib-b"));
  ASSERT_TRUE(only_b.ok());
  ASSERT_EQ(only_b->size(), 1u);
  EXPECT_EQ((*only_b)[0].asks, 1);
  auto of_none = m_store->list_best_asks("", 100, std::string(""));
  ASSERT_TRUE(of_none.ok());
  ASSERT_EQ(of_none->size(), 1u);
  EXPECT_EQ((*of_none)[0].repo, "");
  EXPECT_EQ((*of_none)[0].first_ms, 130);
}

}  // namespace
}  // namespace kport::coordinator
