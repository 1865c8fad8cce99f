// Host-side conversions between float and the 16-bit storage formats (bf16, IEEE fp16),
// in plain C++ so references and tests need no CUDA headers. Narrowing rounds to nearest
// even and keeps NaN a NaN; widening is exact.
#pragma once

#include <cstdint>

namespace kport::reference {

float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);
float fp16_to_float(std::uint16_t bits);
std::uint16_t float_to_fp16(float value);

}  // namespace kport::reference
