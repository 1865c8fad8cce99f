#include "backoff.h"

#include <gtest/gtest.h>

#include <set>

namespace kport::runner {
namespace {

using std::chrono::milliseconds;

TEST(RunnerBackoff, DoublesUpToTheCapWithEqualJitter) {
  Backoff b(milliseconds(500), milliseconds(15'000), 42);
  std::int64_t ceiling = 500;
  for (int i = 0; i < 12; ++i) {
    const auto d = b.next().count();
    EXPECT_GE(d, ceiling / 2) << "failure " << i;
    EXPECT_LE(d, ceiling) << "failure " << i;
    ceiling = std::min<std::int64_t>(ceiling * 2, 15'000);
  }
  EXPECT_EQ(b.failures(), 12);
  b.reset();
  EXPECT_LE(b.next().count(), 500);
}

TEST(RunnerBackoff, RunnersThatFailTogetherDoNotRetryInStep) {
  std::set<std::int64_t> waits;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Backoff b(milliseconds(500), milliseconds(15'000), seed);
    for (int i = 0; i < 4; ++i) b.next();
    waits.insert(b.next().count());  // the fifth wait: in [4000, 8000]
  }
  EXPECT_GE(waits.size(), 15u);
}

TEST(RunnerBackoff, AnOutageOfAnyLengthStaysAtTheCap) {
  Backoff b(milliseconds(1), milliseconds(1000), 7);
  for (int i = 0; i < 10'000; ++i) {
    const auto d = b.next().count();
    ASSERT_GE(d, 0);
    ASSERT_LE(d, 1000);
  }
}

}  // namespace
}  // namespace kport::runner
