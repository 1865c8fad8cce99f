// Shared-memory addressing common to every architecture: the 32-bit shared-state-space
// address of a generic pointer into shared memory, as the PTX shared-memory instructions
// (ldmatrix, cp.async, mbarrier, TMA, wgmma descriptors) take it, a 32-bit store and an
// 8-byte load at such an address. `p` must point into this CTA's shared memory.
#pragma once

#include <cstdint>

namespace kport::kernels {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void st_shared_u32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

// 8-byte aligned.
__device__ __forceinline__ uint2 ld_shared_u32x2(uint32_t addr) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(addr) : "memory");
  return v;
}

}  // namespace kport::kernels
