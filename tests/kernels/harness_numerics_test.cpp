// The pass/fail rule of `check` and its tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "numerics.h"
#include "tolerance.h"

using namespace kport::harness;
using kport::kernels::DType;
using kport::kernels::Family;

TEST(Numerics, ExactOutputPasses) {
  const std::vector<float> out = {1, -2, 3};
  const std::vector<double> ref = {1, -2, 3};
  CompareStats s;
  compare_host(out.data(), ref.data(), 3, s);
  EXPECT_EQ(normwise_error(s), 0.0);
  EXPECT_EQ(s.compared, 3u);
  EXPECT_TRUE(judge(s, tolerance_for(Family::gemm, DType::f32)).passed);
}

TEST(Numerics, PoisonLeftInTheOutputFails) {
  const std::vector<float> out = {1, std::numeric_limits<float>::quiet_NaN(), 3};
  const std::vector<double> ref = {1, 2, 3};
  CompareStats s;
  compare_host(out.data(), ref.data(), 3, s);
  EXPECT_EQ(s.nonfinite, 1u);
  const Verdict v = judge(s, tolerance_for(Family::softmax, DType::bf16));
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.reason.find("NaN"), std::string::npos);
}

TEST(Numerics, NormwiseErrorAgainstTolerance) {
  std::vector<float> out(100);
  std::vector<double> ref(100);
  for (int i = 0; i < 100; ++i) ref[i] = 1.0, out[i] = 1.0f + 5e-3f;  // 0.5 % everywhere
  CompareStats s;
  compare_host(out.data(), ref.data(), 100, s);
  EXPECT_NEAR(normwise_error(s), 5e-3, 1e-6);
  EXPECT_TRUE(judge(s, tolerance_for(Family::gemm, DType::bf16)).passed);
  EXPECT_FALSE(judge(s, tolerance_for(Family::gemm, DType::f16)).passed);
  EXPECT_FALSE(judge(s, tolerance_for(Family::gemm, DType::f32)).passed);
}

TEST(Numerics, OneLargeOutlierFailsOnMaxAbs) {
  std::vector<float> out(10000, 1.0f);
  std::vector<double> ref(10000, 1.0);
  out[17] = 1.5f;  // normwise 0.5/100 = 5e-3, but one element is 50 % off
  CompareStats s;
  compare_host(out.data(), ref.data(), out.size(), s);
  const Verdict v = judge(s, tolerance_for(Family::rmsnorm, DType::bf16));
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.reason.find("max abs"), std::string::npos);
}

TEST(Numerics, AttentionLseIsJudged) {
  const std::vector<float> out = {1};
  const std::vector<double> ref = {1};
  CompareStats s;
  compare_host(out.data(), ref.data(), 1, s);
  const Tolerance tol = tolerance_for(Family::attention, DType::bf16);
  EXPECT_TRUE(judge(s, tol, 1e-4).passed);
  EXPECT_FALSE(judge(s, tol, 1e-1).passed);
  EXPECT_FALSE(judge(s, tol, 0.0, 3).passed);
}

TEST(Numerics, TolerancesTightenWithPrecision) {
  for (Family f : {Family::gemm, Family::attention, Family::rmsnorm, Family::softmax}) {
    EXPECT_LT(tolerance_for(f, DType::f32).normwise, tolerance_for(f, DType::f16).normwise);
    EXPECT_LT(tolerance_for(f, DType::f16).normwise, tolerance_for(f, DType::bf16).normwise);
  }
  // TF32-level error (~3e-4) must not pass as fp32.
  EXPECT_LT(tolerance_for(Family::gemm, DType::f32).normwise, 3e-4);
}

// A sum that cancels far below its terms (one element: +a, -a, +a, ... and a small rest) is
// judged against the floor (a quarter of its products' root-sum-square, as check_gemm_fp8
// passes it), not against what cancellation left; an element above its floor is judged as
// before, and a wrong element still fails.
TEST(Numerics, AFloorJudgesACancelledSumAgainstItsTerms) {
  const std::vector<double> ref = {0.0927};
  const std::vector<double> floor = {15.9 * k_fp8_cancellation_floor};
  const std::vector<float> near = {static_cast<float>(0.0927 + 5.7e-4)};  // the error of the H200's kernel
  CompareStats plain, floored;
  compare_host(near.data(), ref.data(), 1, plain);
  compare_host(near.data(), ref.data(), 1, floored, floor.data());
  const Tolerance tol = tolerance_for(Family::gemm_fp8, DType::e5m2);
  EXPECT_FALSE(judge(plain, tol).passed) << normwise_error(plain);
  EXPECT_TRUE(judge(floored, tol).passed) << normwise_error(floored);
  EXPECT_NEAR(normwise_error(floored), 5.7e-4 / (15.9 * k_fp8_cancellation_floor), 1e-6);

  const std::vector<float> wrong = {0.5f};  // an error of the terms' size
  CompareStats bad;
  compare_host(wrong.data(), ref.data(), 1, bad, floor.data());
  EXPECT_FALSE(judge(bad, tol).passed) << normwise_error(bad);

  const std::vector<double> big = {20.0};  // above its floor: the floor changes nothing
  const std::vector<float> out = {20.05f};
  CompareStats with, without;
  compare_host(out.data(), big.data(), 1, with, floor.data());
  compare_host(out.data(), big.data(), 1, without);
  EXPECT_EQ(normwise_error(with), normwise_error(without));
}

// The largest error's bound takes the same floor: the H200's e4m3 row-scaled m=1,n=1,k=128
// summed to 2.9e-6, and its 2.5e-5 error failed although it is far inside the products'
// size. An error beyond the bound of the floor still fails, on the largest error, saying so.
TEST(Numerics, TheMaxBoundOfACancelledSumIsItsFloorToo) {
  const std::vector<double> ref = {2.855e-6};
  const std::vector<double> floor = {11.3 * k_fp8_cancellation_floor};
  const std::vector<float> out = {static_cast<float>(2.855e-6 + 2.49e-5)};
  CompareStats plain, floored;
  compare_host(out.data(), ref.data(), 1, plain);
  compare_host(out.data(), ref.data(), 1, floored, floor.data());
  const Tolerance tol = tolerance_for(Family::gemm_fp8, DType::e4m3);
  EXPECT_FALSE(judge(plain, tol).passed);
  EXPECT_TRUE(judge(floored, tol).passed) << judge(floored, tol).reason;
  EXPECT_DOUBLE_EQ(floored.max_abs_ref, 2.855e-6) << "what is reported stays the reference's own";
  EXPECT_DOUBLE_EQ(floored.max_abs_scale, 11.3 * k_fp8_cancellation_floor);

  // 10,000 cancelled sums, one 0.02 off: normwise 0.02 / (0.7 x 100) passes, the largest
  // error is over 1.6e-2 x 0.7.
  std::vector<double> many(10000, 1e-6), floors(10000, 0.7);
  std::vector<float> got(10000, 1e-6f);
  got[42] = 0.02f;
  CompareStats bad;
  compare_host(got.data(), many.data(), many.size(), bad, floors.data());
  const Verdict v = judge(bad, tol);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.reason.find("max abs error"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("cancellation floor"), std::string::npos) << v.reason;
}
