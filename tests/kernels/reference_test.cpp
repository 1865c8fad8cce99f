// The CPU references against hand-computed answers and properties every correct
// implementation has.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "reference/reference.h"

namespace kr = kport::reference;

TEST(GemmReference, HandComputed2x3Times3x2) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};     // [2,3]
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};  // [3,2]
  std::vector<double> c(4);
  kr::gemm(a.data(), b.data(), c.data(), 2, 2, 3);
  EXPECT_EQ(c, (std::vector<double>{58, 64, 139, 154}));
}

TEST(GemmReference, IdentityLeavesMatrixUnchanged) {
  const int n = 5;
  std::vector<float> id(n * n, 0.0f), b(n * 3);
  for (int i = 0; i < n; ++i) id[i * n + i] = 1.0f;
  for (int i = 0; i < n * 3; ++i) b[i] = 0.25f * i - 1.0f;
  std::vector<double> c(n * 3);
  kr::gemm(id.data(), b.data(), c.data(), n, 3, n);
  for (int i = 0; i < n * 3; ++i) EXPECT_EQ(c[i], b[i]);
}

TEST(GemmReference, AccumulatesInDouble) {
  // 1 + 2^-30 added 4 times, then -4: exact in double, lost in float.
  const float tiny = std::ldexp(1.0f, -30);
  const std::vector<float> a = {1, tiny, tiny, tiny, tiny, -1};
  const std::vector<float> b = {1, 1, 1, 1, 1, 1};
  double c = 0;
  kr::gemm(a.data(), b.data(), &c, 1, 1, 6);
  EXPECT_DOUBLE_EQ(c, 4.0 * std::ldexp(1.0, -30));
}

TEST(SoftmaxReference, HandComputedAndRowsSumToOne) {
  const std::vector<float> x = {0.0f, std::log(2.0f), 5.0f, 5.0f, 5.0f, 5.0f};
  std::vector<double> y(6);
  kr::softmax(x.data(), y.data(), 3, 2);
  EXPECT_NEAR(y[0], 1.0 / 3, 1e-7);
  EXPECT_NEAR(y[1], 2.0 / 3, 1e-7);
  for (int r = 0; r < 3; ++r) EXPECT_NEAR(y[2 * r] + y[2 * r + 1], 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(y[2], 0.5);
}

TEST(SoftmaxReference, LargeInputsDoNotOverflow) {
  const std::vector<float> x = {1000.0f, 1000.0f, -1000.0f};
  std::vector<double> y(3);
  kr::softmax_row(x.data(), y.data(), 3);
  EXPECT_DOUBLE_EQ(y[0], 0.5);
  EXPECT_DOUBLE_EQ(y[1], 0.5);
  EXPECT_EQ(y[2], 0.0);
}

TEST(SoftmaxReference, OneColumnIsOne) {
  const float x = -7.5f;
  double y = 0;
  kr::softmax_row(&x, &y, 1);
  EXPECT_EQ(y, 1.0);
}

TEST(RmsnormReference, HandComputed) {
  const std::vector<float> x = {3, 4}, w = {1, 2};
  std::vector<double> y(2);
  kr::rmsnorm_row(x.data(), w.data(), y.data(), 2, 0.0);
  const double rms = std::sqrt(12.5);
  EXPECT_DOUBLE_EQ(y[0], 3 / rms);
  EXPECT_DOUBLE_EQ(y[1], 8 / rms);
}

TEST(RmsnormReference, ConstantRowGivesTheWeight) {
  const int cols = 64;
  std::vector<float> x(cols, -2.5f), w(cols);
  for (int j = 0; j < cols; ++j) w[j] = 0.5f + 0.01f * j;
  std::vector<double> y(cols);
  kr::rmsnorm(x.data(), w.data(), y.data(), 1, cols, 1e-6);
  // x / rms(x) = -1 for a constant negative row (up to eps).
  for (int j = 0; j < cols; ++j) EXPECT_NEAR(y[j], -w[j], 1e-6);
}

TEST(AttentionReference, OneKeyReturnsItsValue) {
  const int d = 4;
  const std::vector<float> q = {1, -2, 3, 0.5f}, k = {0.5f, 0.25f, -1, 2}, v = {9, -8, 7, 6};
  std::vector<double> o(d), lse(1);
  kr::attention_head(q.data(), k.data(), v.data(), o.data(), lse.data(), 1, d, false, 0.5);
  for (int t = 0; t < d; ++t) EXPECT_DOUBLE_EQ(o[t], v[t]);
  const double dot = 0.5 - 0.5 - 3 + 1;
  EXPECT_NEAR(lse[0], 0.5 * dot, 1e-12);  // log(exp(s)) = s
}

TEST(AttentionReference, CausalFirstRowSeesOnlyTheFirstKey) {
  const int l = 3, d = 2;
  const std::vector<float> q = {1, 0, 0, 1, 1, 1}, k = {1, 1, 2, 0, 0, 3};
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  std::vector<double> o(l * d), lse(l);
  kr::attention_head(q.data(), k.data(), v.data(), o.data(), lse.data(), l, d, true, 1.0);
  EXPECT_DOUBLE_EQ(o[0], 1);
  EXPECT_DOUBLE_EQ(o[1], 2);
  // Row 1 mixes keys 0 and 1 with scores 1 and 0.
  const double p0 = std::exp(1.0) / (std::exp(1.0) + 1.0);
  EXPECT_NEAR(o[2], p0 * 1 + (1 - p0) * 3, 1e-12);
  EXPECT_NEAR(lse[1], std::log(std::exp(1.0) + 1.0), 1e-12);
}

TEST(AttentionReference, ZeroQueryAveragesValuesAndLseIsLogL) {
  const int l = 4, d = 2;
  std::vector<float> q(l * d, 0.0f), k(l * d), v(l * d);
  for (int i = 0; i < l * d; ++i) k[i] = 0.3f * i, v[i] = float(i);
  std::vector<double> o(l * d), lse(l);
  kr::attention_head(q.data(), k.data(), v.data(), o.data(), lse.data(), l, d, false, 1.0);
  for (int i = 0; i < l; ++i) {
    EXPECT_NEAR(o[i * d + 0], (0 + 2 + 4 + 6) / 4.0, 1e-12);
    EXPECT_NEAR(o[i * d + 1], (1 + 3 + 5 + 7) / 4.0, 1e-12);
    EXPECT_NEAR(lse[i], std::log(4.0), 1e-12);
  }
}

TEST(AttentionReference, BatchedEqualsPerHead) {
  const int b = 2, h = 3, l = 5, d = 4, n = b * h * l * d;
  std::vector<float> q(n), k(n), v(n);
  for (int i = 0; i < n; ++i) {
    q[i] = std::sin(0.1f * i), k[i] = std::cos(0.07f * i), v[i] = 0.01f * (i % 17);
  }
  std::vector<double> o(n), lse(b * h * l), o1(l * d), lse1(l);
  kr::attention(q.data(), k.data(), v.data(), o.data(), lse.data(), b, h, l, d, true, 0.5);
  const int head = 4;
  kr::attention_head(q.data() + head * l * d, k.data() + head * l * d, v.data() + head * l * d, o1.data(), lse1.data(),
                     l, d, true, 0.5);
  for (int i = 0; i < l * d; ++i) EXPECT_EQ(o[head * l * d + i], o1[i]);
  for (int i = 0; i < l; ++i) EXPECT_EQ(lse[head * l + i], lse1[i]);
}
