#include "reference/dtype_bits.h"

#include <cmath>
#include <cstring>

namespace kport::reference {

namespace {
std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace

float bf16_to_float(std::uint16_t bits) { return float_of(std::uint32_t{bits} << 16); }

std::uint16_t float_to_bf16(float value) {
  std::uint32_t u = bits_of(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // quiet NaN
  const std::uint32_t rounding = 0x7FFF + ((u >> 16) & 1);                     // ties to even
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

float fp16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = std::uint32_t{bits & 0x8000u} << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1F;
  const std::uint32_t man = bits & 0x3FF;
  if (exp == 0x1F) return float_of(sign | 0x7F800000u | (man << 13));  // inf / NaN
  if (exp == 0) {                                                      // zero or subnormal: man * 2^-24
    const float mag = std::ldexp(static_cast<float>(man), -24);
    return sign ? -mag : mag;
  }
  return float_of(sign | ((exp + 112) << 23) | (man << 13));
}

std::uint16_t float_to_fp16(float value) {
  const std::uint32_t u = bits_of(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000);
  if (std::isnan(value)) return static_cast<std::uint16_t>(sign | 0x7E00);
  const float mag = std::fabs(value);
  if (mag >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7C00);  // rounds to inf
  if (mag < 6.103515625e-05f) {  // subnormal range: quantum 2^-24, nearbyint is ties-to-even
    const auto q = static_cast<std::uint16_t>(std::nearbyint(std::ldexp(mag, 24)));
    return static_cast<std::uint16_t>(sign | q);
  }
  const std::uint32_t exp = ((u >> 23) & 0xFF) - 112;
  std::uint32_t half = (exp << 10) | ((u >> 13) & 0x3FF);
  const std::uint32_t rest = u & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // carries into exponent
  return static_cast<std::uint16_t>(sign | half);
}

float e4m3_to_float(std::uint8_t bits) {
  const bool negative = (bits & 0x80u) != 0;
  const int exp = (bits >> 3) & 0xF, man = bits & 0x7;
  float mag;
  if (exp == 0xF && man == 0x7)
    mag = std::nanf("");
  else if (exp == 0)
    mag = std::ldexp(static_cast<float>(man), -9);  // subnormal: man/8 * 2^-6
  else
    mag = std::ldexp(static_cast<float>(8 + man), exp - 10);  // (1 + man/8) * 2^(exp-7)
  return negative ? -mag : mag;
}

float e5m2_to_float(std::uint8_t bits) {
  // e5m2 is the upper byte of an IEEE fp16 with the same value.
  return fp16_to_float(static_cast<std::uint16_t>(std::uint16_t{bits} << 8));
}

}  // namespace kport::reference
