// The host conversions the harness uses to read bf16/fp16 outputs back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "reference/dtype_bits.h"

namespace kr = kport::reference;

TEST(DtypeBits, Bf16KnownValues) {
  EXPECT_EQ(kr::float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(kr::float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(kr::bf16_to_float(0x3F80), 1.0f);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  EXPECT_EQ(kr::float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(kr::float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_TRUE(std::isnan(kr::bf16_to_float(kr::float_to_bf16(std::nanf("")))));
  EXPECT_TRUE(std::isnan(kr::bf16_to_float(0xFFFF)));  // the harness's poison pattern
}

TEST(DtypeBits, Fp16KnownValues) {
  EXPECT_EQ(kr::float_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(kr::float_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(kr::float_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(kr::float_to_fp16(65520.0f), 0x7C00);  // rounds to infinity
  EXPECT_EQ(kr::float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(kr::float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie to even
  EXPECT_EQ(kr::fp16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(kr::fp16_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(kr::fp16_to_float(0xFFFF)));
}

TEST(DtypeBits, EveryFiniteBitPatternRoundTrips) {
  for (std::uint32_t u = 0; u <= 0xFFFF; ++u) {
    const auto bits = static_cast<std::uint16_t>(u);
    const float h = kr::fp16_to_float(bits);
    if (!std::isnan(h)) {
      EXPECT_EQ(kr::float_to_fp16(h), bits) << std::hex << u;
    }
    const float b = kr::bf16_to_float(bits);
    if (!std::isnan(b)) {
      EXPECT_EQ(kr::float_to_bf16(b), bits) << std::hex << u;
    }
  }
}
