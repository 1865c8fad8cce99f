// Two GPUs of one model agree when the cases both timed at one commit take the same time
// within the noise of their kind (compute-bound 1 %, memory-bound 2 % at the median); the
// pair's clocks say whether a slower one ran at a lower SM clock.
#include "kport/porting/gpu_agreement.h"

#include <gtest/gtest.h>

namespace kport::porting {
namespace {

std::optional<Bound> bound_of(std::string_view family) {
  if (family == "gemm") return Bound::compute;
  if (family == "softmax") return Bound::memory;
  return std::nullopt;
}

SameCase timed(const char* a, const char* b, const char* family, double ta, double tb, double ca = 1980,
               double cb = 1980) {
  return SameCase{a, b, family, ta, tb, ca, cb};
}

}  // namespace

TEST(GpuAgreement, TwoGpusAgreeWithinTheNoiseOfEachKind) {
  const std::vector<SameCase> cases = {
      timed("GPU-a", "GPU-b", "gemm", 100, 100.4), timed("GPU-a", "GPU-b", "gemm", 50, 49.9),
      timed("GPU-a", "GPU-b", "gemm", 80, 80.5), timed("GPU-a", "GPU-b", "softmax", 10, 10.15),
      timed("GPU-a", "GPU-b", "softmax", 20, 20.1)};
  const auto pairs = gpu_agreement(cases, bound_of);
  ASSERT_EQ(pairs.size(), 1u);
  const auto& p = pairs[0];
  EXPECT_EQ(p.gpu_a, "GPU-a");
  EXPECT_EQ(p.gpu_b, "GPU-b");
  EXPECT_EQ(p.cases, 5);
  EXPECT_TRUE(p.agree);
  ASSERT_EQ(p.bounds.size(), 2u);
  EXPECT_EQ(p.bounds[0].bound, Bound::compute);
  EXPECT_EQ(p.bounds[0].cases, 3);
  EXPECT_NEAR(p.bounds[0].median_diff, 0.004, 1e-12);
  EXPECT_EQ(p.bounds[0].within, 3);
  EXPECT_EQ(p.bounds[1].bound, Bound::memory);
  EXPECT_DOUBLE_EQ(p.bounds[1].tolerance, 0.02);
  EXPECT_NEAR(p.bounds[1].median_diff, 0.01, 1e-12);
  EXPECT_DOUBLE_EQ(p.clock_a, 1980);
  EXPECT_EQ(describe(p),
            "GPU-a and GPU-b agree: 5 cases timed on both, compute-bound 0.4 % apart at the median (within 1.0 %), "
            "memory-bound 1.0 % apart at the median (within 2.0 %); GPU-b takes 0.5 % longer than GPU-a at the "
            "median; SM clocks 1980 and 1980 MHz");
}

// A GPU held at a lower clock is 8 % slower on compute-bound cases: the pair differs, and
// its clocks show why. Memory-bound cases still agree. A family nobody knows counts as
// compute-bound; a pair is judged on its own cases only.
TEST(GpuAgreement, AGpuAtALowerClockDiffersAndItsClockSaysWhy) {
  std::vector<SameCase> cases = {
      timed("GPU-a", "GPU-c", "gemm", 100, 108, 1980, 1830), timed("GPU-a", "GPU-c", "gemm", 50, 54, 1980, 1830),
      timed("GPU-a", "GPU-c", "lite", 70, 75.6, 1980, 1830), timed("GPU-a", "GPU-c", "softmax", 10, 10.1, 1980, 1830),
      timed("GPU-a", "GPU-b", "gemm", 100, 100.2)};
  const auto pairs = gpu_agreement(cases, bound_of);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].gpu_b, "GPU-b");
  EXPECT_TRUE(pairs[0].agree);
  EXPECT_EQ(pairs[0].cases, 1);
  const auto& slow = pairs[1];
  EXPECT_FALSE(slow.agree);
  ASSERT_EQ(slow.bounds.size(), 2u);
  EXPECT_EQ(slow.bounds[0].cases, 3) << "lite, unknown, counts as compute-bound";
  EXPECT_FALSE(slow.bounds[0].agree);
  EXPECT_EQ(slow.bounds[0].within, 0);
  EXPECT_TRUE(slow.bounds[1].agree);
  EXPECT_DOUBLE_EQ(slow.clock_b, 1830);
  EXPECT_EQ(describe(slow),
            "GPU-a and GPU-c differ: 4 cases timed on both, compute-bound 8.0 % apart at the median (beyond 1.0 %), "
            "memory-bound 1.0 % apart at the median (within 2.0 %); GPU-c takes 8.0 % longer than GPU-a at the "
            "median; SM clocks 1980 and 1830 MHz");
  // Untimed cases are not judged; no case, no pair.
  cases = {timed("GPU-a", "GPU-b", "gemm", 0, 10)};
  EXPECT_TRUE(gpu_agreement(cases, bound_of).empty());
}

}  // namespace kport::porting
