// The fp8 formats, the gemm_fp8 scale layouts and the dequantized reference, on the host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kport/kernels/fp8_scales.h"
#include "reference/dtype_bits.h"
#include "reference/reference.h"

namespace kr = kport::reference;
using kport::kernels::Fp8Scale;

TEST(Fp8Bits, E4m3KnownValues) {
  EXPECT_EQ(kr::e4m3_to_float(0x38), 1.0f);  // exponent 7 = bias
  EXPECT_EQ(kr::e4m3_to_float(0xC0), -2.0f);
  EXPECT_EQ(kr::e4m3_to_float(0x7E), 448.0f);                // the largest finite value
  EXPECT_EQ(kr::e4m3_to_float(0x08), std::ldexp(1.0f, -6));  // smallest normal
  EXPECT_EQ(kr::e4m3_to_float(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(kr::e4m3_to_float(0x07), 7 * std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isnan(kr::e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(kr::e4m3_to_float(0xFF)));
  EXPECT_TRUE(std::signbit(kr::e4m3_to_float(0x80)));
  EXPECT_EQ(kr::e4m3_to_float(0x80), 0.0f);
}

TEST(Fp8Bits, E5m2KnownValues) {
  EXPECT_EQ(kr::e5m2_to_float(0x3C), 1.0f);
  EXPECT_EQ(kr::e5m2_to_float(0x7B), 57344.0f);
  EXPECT_EQ(kr::e5m2_to_float(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(kr::e5m2_to_float(0x7C), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(kr::e5m2_to_float(0x7F)));
}

// Positive patterns in order are increasing values, negative ones mirror them: no pattern
// decodes to a wrong magnitude.
TEST(Fp8Bits, EveryPatternIsOrderedAndSymmetric) {
  for (int b = 1; b < 0x7E; ++b) {
    EXPECT_LT(kr::e4m3_to_float(static_cast<std::uint8_t>(b)), kr::e4m3_to_float(static_cast<std::uint8_t>(b + 1)));
    EXPECT_EQ(kr::e4m3_to_float(static_cast<std::uint8_t>(b | 0x80)), -kr::e4m3_to_float(static_cast<std::uint8_t>(b)));
  }
  for (int b = 1; b < 0x7C; ++b) {
    EXPECT_LT(kr::e5m2_to_float(static_cast<std::uint8_t>(b)), kr::e5m2_to_float(static_cast<std::uint8_t>(b + 1)));
    EXPECT_EQ(kr::e5m2_to_float(static_cast<std::uint8_t>(b | 0x80)), -kr::e5m2_to_float(static_cast<std::uint8_t>(b)));
  }
}

TEST(Fp8Scales, LayoutsOfEachMode) {
  using kport::kernels::fp8_scale_count;
  using kport::kernels::fp8_scale_index;
  EXPECT_EQ(fp8_scale_count(Fp8Scale::tensor, true, 1000, 4096), 1);
  EXPECT_EQ(fp8_scale_index(Fp8Scale::tensor, false, 999, 31, 1000, 32), 0);
  EXPECT_EQ(fp8_scale_count(Fp8Scale::row, false, 7168, 4096), 7168);
  EXPECT_EQ(fp8_scale_index(Fp8Scale::row, true, 17, 3, 1000, 32), 17);
  // block128 A: K-block-major, rows padded to a multiple of 4 (M=1001 -> 1004).
  EXPECT_EQ(kport::kernels::fp8_scale_a_stride(1001), 1004);
  EXPECT_EQ(fp8_scale_count(Fp8Scale::block128, true, 1001, 384), 3 * 1004);
  EXPECT_EQ(fp8_scale_index(Fp8Scale::block128, true, 5, 2, 1001, 3), 2 * 1004 + 5);
  // block128 B: one per 128 rows and K block, row-major over (row block, K block).
  EXPECT_EQ(fp8_scale_count(Fp8Scale::block128, false, 129, 384), 2 * 3);
  EXPECT_EQ(fp8_scale_index(Fp8Scale::block128, false, 127, 1, 129, 3), 1);
  EXPECT_EQ(fp8_scale_index(Fp8Scale::block128, false, 128, 1, 129, 3), 3 + 1);
}

TEST(Fp8Reference, GemmNtIsATimesBTransposed) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};     // [2,3]
  const std::vector<float> b = {7, 9, 11, 8, 10, 12};  // [2,3]: the columns of a [3,2] b
  std::vector<double> c(4);
  kr::gemm_nt(a.data(), b.data(), c.data(), 2, 2, 3);
  EXPECT_EQ(c, (std::vector<double>{58, 64, 139, 154}));
  // The products' root-sum-square beside the sum: row 0 of a with row 0 of b is 7, 18, 33.
  std::vector<double> d(4), rss(4);
  kr::gemm_nt(a.data(), b.data(), d.data(), 2, 2, 3, rss.data());
  EXPECT_EQ(d, c);
  EXPECT_DOUBLE_EQ(rss[0], std::sqrt(7.0 * 7 + 18 * 18 + 33 * 33));
  EXPECT_DOUBLE_EQ(rss[3], std::sqrt(4.0 * 4 * 8 * 8 + 5 * 5 * 10 * 10 + 6 * 6 * 12 * 12));
}

// The reference computes several outputs of a row at once; each output's products are still
// summed in K order, so every value is the double one output at a time gives, to the bit, at
// widths that are and are not whole blocks of outputs.
TEST(Fp8Reference, OutputsComputedTogetherAreTheSameDoublesAsOneAtATime) {
  std::mt19937 rng(20261205);
  std::uniform_real_distribution<float> value(-448.0f, 448.0f);
  for (int n : {1, 5, 6, 7, 13, 24}) {
    const int m = 3, k = 331;
    std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k);
    for (float& x : a) x = value(rng);
    for (float& x : b) x = value(rng);
    std::vector<double> d(static_cast<std::size_t>(m) * n), rss(d.size());
    kr::gemm_nt(a.data(), b.data(), d.data(), m, n, k, rss.data());
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = 0, squares = 0;
        for (int p = 0; p < k; ++p) {
          const double product = static_cast<double>(a[i * k + p]) * b[j * k + p];
          sum += product;
          squares += product * product;
        }
        EXPECT_EQ(d[i * n + j], sum) << "n " << n << " at " << i << "," << j;
        EXPECT_EQ(rss[i * n + j], std::sqrt(squares)) << "n " << n << " at " << i << "," << j;
      }
  }
}

// With block scales every 128-wide K block of a row of A and every 128x128 block of B is
// scaled on its own: D = sum over K blocks of sa[row,kb] * sb[nb,kb] * (A_q B_q^T) over kb.
TEST(Fp8Reference, BlockScalesApplyPerKBlock) {
  const int m = 2, n = 1, k = 256;
  std::vector<float> a(m * k, 1.0f), b(n * k, 1.0f);
  const int stride = kport::kernels::fp8_scale_a_stride(m);  // 4
  std::vector<float> sa(2 * stride, 0.0f), sb = {0.5f, 4.0f};
  sa[0 * stride + 0] = 1.0f, sa[1 * stride + 0] = 2.0f;   // row 0: K blocks 0 and 1
  sa[0 * stride + 1] = 3.0f, sa[1 * stride + 1] = 0.25f;  // row 1
  kr::dequantize_fp8(a.data(), sa.data(), m, k, Fp8Scale::block128, true);
  kr::dequantize_fp8(b.data(), sb.data(), n, k, Fp8Scale::block128, false);
  std::vector<double> d(m * n);
  kr::gemm_nt(a.data(), b.data(), d.data(), m, n, k);
  EXPECT_DOUBLE_EQ(d[0], 128 * (1.0 * 0.5 + 2.0 * 4.0));
  EXPECT_DOUBLE_EQ(d[1], 128 * (3.0 * 0.5 + 0.25 * 4.0));
}

TEST(Fp8Reference, RowScalesScaleRowsOfDAndColumnsOfD) {
  std::vector<float> a = {1, 1, 2, 2}, b = {1, 1, 3, 3, 5, 5};  // A [2,2], B [3,2]
  const std::vector<float> sa = {2.0f, 0.5f}, sb = {1.0f, 10.0f, 100.0f};
  kr::dequantize_fp8(a.data(), sa.data(), 2, 2, Fp8Scale::row, true);
  kr::dequantize_fp8(b.data(), sb.data(), 3, 2, Fp8Scale::row, false);
  std::vector<double> d(6);
  kr::gemm_nt(a.data(), b.data(), d.data(), 2, 3, 2);
  EXPECT_EQ(d, (std::vector<double>{4, 120, 2000, 2, 60, 1000}));
}
