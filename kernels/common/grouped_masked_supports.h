// What a grouped gemm's masked layout (masked_m set) needs of a bf16 problem on a TMA-fed
// kernel of BM x BN tiles, shared by the masked units of grouped_gemm.wgmma_tma and
// grouped_gemm.tcgen05: their grids count tiles in int, their tensor maps need 16-byte aligned
// A, B and D, and the kernels read the counts as ints. Plain C++.
#pragma once

#include <climits>
#include <cstdint>
#include <string>

#include "kport/kernels/registry.h"

namespace kport::kernels {

// "" when a masked kernel of a bm x bn tile runs `g` (dtype, sizes and TMA strides already
// checked), else why not.
inline std::string grouped_gemm_masked_supports(const GroupedGemmArgs& g, int bm, int bn) {
  const long long tiles =
      static_cast<long long>(g.groups) * ((g.m + bm - 1) / bm) * ((static_cast<long long>(g.n) + bn - 1) / bn);
  if (tiles > INT_MAX)
    return "the masked layout's tiles (g * ceil(m/" + std::to_string(bm) + ") * ceil(n/" + std::to_string(bn) +
           ")) must fit an int";
  auto misaligned = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 != 0; };
  if (misaligned(g.a) || misaligned(g.b) || misaligned(g.d)) return "A, B and D must be 16-byte aligned for TMA";
  if (reinterpret_cast<std::uintptr_t>(g.masked_m) % alignof(int) != 0) return "masked_m must be int-aligned";
  return "";
}

}  // namespace kport::kernels
