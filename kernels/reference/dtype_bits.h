// Host-side conversions between float and the 16- and 8-bit storage formats (bf16, IEEE fp16,
// fp8 e4m3 and e5m2; fp8 widening only),
// in plain C++ so references and tests need no CUDA headers. Narrowing rounds to nearest
// even and keeps NaN a NaN; widening is exact.
#pragma once

#include <cstdint>

namespace kport::reference {

float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);
float fp16_to_float(std::uint16_t bits);
std::uint16_t float_to_fp16(float value);
// The two 8-bit float formats of the fp8 gemm (OCP FP8): e4m3 (bias 7, no infinities, S.1111.111
// is NaN, largest 448) and e5m2 (bias 15, IEEE-like: infinities and NaNs at exponent 31).
float e4m3_to_float(std::uint8_t bits);
float e5m2_to_float(std::uint8_t bits);

}  // namespace kport::reference
