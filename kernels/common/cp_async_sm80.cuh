// cp.async global->shared copies (sm_80+). cp_async_16_sm80 copies 16 bytes, or zero-fills
// them when `valid` is false (out-of-bounds tiles); both addresses 16-byte aligned.
// cp_async_8_sm80 the same for 8 bytes, both addresses 8-byte aligned (rows of 8-byte
// multiples, where 16-byte copies and TMA cannot go).
#pragma once

#include <cstdint>

#include "common/smem.cuh"

namespace kport::kernels {

// To a 32-bit shared address (smem_u32); the void* form converts a generic pointer.
__device__ __forceinline__ void cp_async_16_sm80(std::uint32_t smem_addr, const void* gmem, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr), "l"(gmem), "r"(src_bytes) : "memory");
}

__device__ __forceinline__ void cp_async_16_sm80(void* smem, const void* gmem, bool valid) {
  cp_async_16_sm80(smem_u32(smem), gmem, valid);
}

__device__ __forceinline__ void cp_async_8_sm80(std::uint32_t smem_addr, const void* gmem, bool valid) {
  const int src_bytes = valid ? 8 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(smem_addr), "l"(gmem), "r"(src_bytes) : "memory");
}

__device__ __forceinline__ void cp_async_commit_sm80() { asm volatile("cp.async.commit_group;" ::: "memory"); }

template <int k_pending>
__device__ __forceinline__ void cp_async_wait_sm80() {
  asm volatile("cp.async.wait_group %0;" ::"n"(k_pending) : "memory");
}

}  // namespace kport::kernels
