// Host side of the tcgen05 gemm kernels (common/tcgen05_gemm_sm100.cuh), the rules every
// tcgen05 gemm variant launches by: a grid of one CTA a tile (gemm_tiles), the kernel launched
// with its tile's dynamic shared memory (launch_gemm_kernel); for the fp8 gemms the kernel that
// the dtype and scale mode pick (launch_fp8_kernel) and the tensor maps of the packed UE8M0
// block scales (make_ue8m0_maps).
#pragma once

#include <cuda.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/tcgen05_gemm_sm100.cuh"
#include "common/tma_host_sm90.h"
#include "kport/kernels/fp8_scales.h"
#include "kport/kernels/registry.h"

namespace kport::kernels::sm100 {

// The CTAs of a one-tile-a-CTA grid over an m x n gemm at Cfg's BM x BN tile, edge tiles
// included (the caller keeps the product within int).
template <class Cfg>
constexpr int gemm_tiles(int m, int n) {
  return ((m + Cfg::BM - 1) / Cfg::BM) * ((n + Cfg::BN - 1) / Cfg::BN);
}

// Launches `kernel`, a tcgen05 gemm kernel of Cfg, on `tiles` CTAs of k_gemm_threads threads
// with Cfg::smem_bytes of dynamic shared memory (opted into first: it is above the default
// 48 KiB), passing `args`. An empty grid launches nothing. Asynchronous; the first error.
template <class Cfg, class Kernel, class... Args>
cudaError_t launch_gemm_kernel(Kernel kernel, int tiles, cudaStream_t stream, const Args&... args) {
  const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  if (tiles == 0) return cudaSuccess;
  kernel<<<tiles, k_gemm_threads, Cfg::smem_bytes, stream>>>(args...);
  return cudaGetLastError();
}

// The kernel of a tcgen05 fp8 gemm that `dtype` and `scale` pick, T the fp8 type
// (__nv_fp8_e4m3 or __nv_fp8_e5m2): per-tensor and row-wise scales run
// scaled.template operator()<T, Mode>() (kind::f8f6f4, scaled in the epilogue), UE8M0 block
// scales block_scaled.template operator()<T>() (the block-scaled MMA). fp32 block scales run
// on no tcgen05 kernel: supports() refuses them, and here they are cudaErrorInvalidValue.
template <class Scaled, class BlockScaled>
cudaError_t launch_fp8_kernel(DType dtype, Fp8Scale scale, Scaled scaled, BlockScaled block_scaled) {
  auto by_scale = [&]<class T>() -> cudaError_t {
    switch (scale) {
      case Fp8Scale::tensor: return scaled.template operator()<T, Fp8Scale::tensor>();
      case Fp8Scale::row: return scaled.template operator()<T, Fp8Scale::row>();
      case Fp8Scale::block128: return cudaErrorInvalidValue;
      case Fp8Scale::block128_ue8m0: return block_scaled.template operator()<T>();
    }
    return cudaErrorInvalidValue;
  };
  if (dtype == DType::e5m2) return by_scale.template operator()<__nv_fp8_e5m2>();
  return by_scale.template operator()<__nv_fp8_e4m3>();
}

// The maps of A's and B's packed UE8M0 scales (fp8_scales.h) for a block-scaled kernel of
// Cfg (an F8BlockConfig): A's over a_row_tiles row tiles in boxes of the tile's BM rows, B's
// over b_row_tiles in boxes of its BN rows (tma_host::make_tmap_ue8m0).
template <class Cfg>
bool make_ue8m0_maps(CUtensorMap* tsa, CUtensorMap* tsb, const std::uint8_t* a, long long a_row_tiles,
                     const std::uint8_t* b, long long b_row_tiles, int k) {
  return tma_host::make_tmap_ue8m0(tsa, a, a_row_tiles, k, Cfg::BM / k_ue8m0_tile_rows) &&
         tma_host::make_tmap_ue8m0(tsb, b, b_row_tiles, k, Cfg::BN / k_ue8m0_tile_rows);
}

// gemm_fp8's: A's ceil(M/128) row tiles, B's ceil(N/128).
template <class Cfg>
bool make_ue8m0_maps(const GemmFp8Args& g, CUtensorMap* tsa, CUtensorMap* tsb) {
  return make_ue8m0_maps<Cfg>(tsa, tsb, g.ue8m0_a, fp8_ue8m0_row_tiles(g.m), g.ue8m0_b, fp8_ue8m0_row_tiles(g.n), g.k);
}

// grouped_gemm_fp8's, in either layout: A's those of the tall [G*M] A (M a multiple of 128
// with block scales), B's every group's ceil(N/128) one group after the other.
template <class Cfg>
bool make_ue8m0_maps(const GroupedGemmFp8Args& g, CUtensorMap* tsa, CUtensorMap* tsb) {
  return make_ue8m0_maps<Cfg>(tsa, tsb, g.ue8m0_a, g.groups * g.m / k_ue8m0_tile_rows, g.ue8m0_b,
                              static_cast<long long>(g.groups) * fp8_ue8m0_row_tiles(g.n), g.k);
}

}  // namespace kport::kernels::sm100
