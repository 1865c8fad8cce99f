// What the tcgen05 fp8 gemms (gemm_fp8.tcgen05, grouped_gemm_fp8.tcgen05) need of a problem's
// scale mode, K, operands and UE8M0 bytes, the part their supports() share: sm_100a's
// block-scaled MMA takes UE8M0 scales only, TMA needs 16-byte row strides and 16-byte aligned
// bases, and block scales cover whole 128-wide K blocks. Plain C++: each answers "" or why not.
#pragma once

#include <cstdint>
#include <string>

#include "kport/kernels/fp8_scales.h"
#include "kport/kernels/registry.h"

namespace kport::kernels::sm100 {

// Why `variant` refuses fp32 block scales (scale=2), and what to ask instead; `blocks` names
// the blocks the UE8M0 bytes cover ("1x128 and 128x128 blocks", "... per group").
inline std::string tcgen05_fp32_block_scales_refused(const char* variant, const char* blocks) {
  return std::string("fp32 block scales (scale=2) are not taken by ") + variant +
         ": sm_100a's block-scaled MMA takes UE8M0 scales (powers of two); ask scale=3 (block128_ue8m0: the same " +
         blocks + ", its scales as UE8M0 bytes)";
}

// "" when TMA and the MMA of its scale mode take the K, A, B and UE8M0 bytes of `g` (a
// GemmFp8Args or GroupedGemmFp8Args, named `args` in the answer), else why not.
template <class Args>
std::string tcgen05_fp8_operands_supported(const Args& g, const char* args) {
  if (g.k % 16 != 0)
    return "K=" + std::to_string(g.k) +
           " is not a multiple of 16: TMA needs 16-byte row strides of A and B; pad K with zeros to a multiple of 16";
  const bool ue8m0 = g.scale == Fp8Scale::block128_ue8m0;
  if (ue8m0 && g.k % k_fp8_block != 0)
    return "K=" + std::to_string(g.k) +
           " is not a multiple of 128: block scales cover whole 128-wide K blocks; pad K with zeros (scale 1) to a "
           "multiple of 128";
  auto misaligned = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 != 0; };
  if (misaligned(g.a) || misaligned(g.b)) return "A and B must be 16-byte aligned for TMA";
  if (ue8m0 && (g.ue8m0_a == nullptr || g.ue8m0_b == nullptr))
    return std::string("block128_ue8m0 needs the scales as UE8M0 bytes (") + args +
           " ue8m0_a and ue8m0_b), not only as fp32";
  if (ue8m0 && (misaligned(g.ue8m0_a) || misaligned(g.ue8m0_b)))
    return "the UE8M0 scales (ue8m0_a, ue8m0_b) must be 16-byte aligned for TMA";
  return "";
}

}  // namespace kport::kernels::sm100
