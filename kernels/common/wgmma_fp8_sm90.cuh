// Warpgroup MMA over 8-bit floats (wgmma m64nNk32, sm_90a only): e4m3 or e5m2 for each of A
// and B, fp32 accumulation. Both operands come from shared memory and are K-major (the
// instruction has no transpose for 8-bit types), so a gemm keeps A as [M,K] and B as [N,K].
// Descriptors, fence / commit / wait and KPORT_WGMMA_ENABLED are wgmma_sm90.cuh's; the
// instruction wrappers are generated (generate_wgmma_ops_sm90.py --output-fp8).
#pragma once

#include <cuda_fp8.h>

#include <cstdint>

#include "common/wgmma_sm90.cuh"
#include "generated/wgmma_fp8_ops_sm90.cuh"

namespace kport::kernels::sm90 {

template <class T>
inline constexpr Fp8Kind k_fp8_kind = __is_same(T, __nv_fp8_e5m2) ? Fp8Kind::e5m2 : Fp8Kind::e4m3;

// D[64 x N] (+)= A[64 x 32] * B[N x 32]^T over TA, TB (__nv_fp8_e4m3 or __nv_fp8_e5m2), both
// K-major from their descriptors. scale_d = 0 overwrites D. N a multiple of 16.
template <int N, class TA, class TB>
__device__ __forceinline__ void wgmma_fp8_ss(float (&d)[N / 2], uint64_t da, uint64_t db, int scale_d) {
  static_assert(__is_same(TA, __nv_fp8_e4m3) || __is_same(TA, __nv_fp8_e5m2), "e4m3 or e5m2 A");
  static_assert(__is_same(TB, __nv_fp8_e4m3) || __is_same(TB, __nv_fp8_e5m2), "e4m3 or e5m2 B");
  WgmmaFp8Ops<N, k_fp8_kind<TA>, k_fp8_kind<TB>>::ss(d, da, db, scale_d);
}

}  // namespace kport::kernels::sm90
