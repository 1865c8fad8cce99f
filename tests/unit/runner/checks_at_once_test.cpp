// How many instances one GPU's worker checks at once when kport-runner is not told: the
// host's cores shared among its GPUs' workers.
#include <gtest/gtest.h>

#include "kport/runner/check_job.h"

namespace kport::runner {
namespace {

TEST(ChecksAtOnce, TheHostsCoresAreSharedAmongItsGpus) {
  EXPECT_EQ(checks_at_once(16, 1), 16);   // one GPU of a 16-core host
  EXPECT_EQ(checks_at_once(128, 8), 16);  // eight GPUs of a 128-core host
  EXPECT_EQ(checks_at_once(32, 2), 16);
  EXPECT_EQ(checks_at_once(30, 4), 7);  // a share is whole cores
}

TEST(ChecksAtOnce, EveryGpuChecksAtLeastOneAndNoneMoreThan64) {
  EXPECT_EQ(checks_at_once(2, 8), 1);  // fewer cores than GPUs
  EXPECT_EQ(checks_at_once(0, 1), 1);  // the core count unknown (hardware_concurrency 0)
  EXPECT_EQ(checks_at_once(8, 0), 8);  // no GPU counted: the host's cores
  EXPECT_EQ(checks_at_once(256, 1), 64);
}

}  // namespace
}  // namespace kport::runner
