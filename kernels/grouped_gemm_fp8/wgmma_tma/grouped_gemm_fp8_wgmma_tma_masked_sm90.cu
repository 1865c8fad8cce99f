// grouped_gemm_fp8.wgmma_tma in the masked layout of MoE decode: gemm_fp8.wgmma_tma's kernel in
// its masked form (gemm_fp8_masked_kernel) at the contiguous instances' tiles, every scale
// mode (block128_ue8m0 on its fp32 copy, through block128's code). Target sm_90a.
//
// A is read through a 3-D tensor map [G][M][K]: a tile's rows are one group's, rows past M are
// zero-filled, so M (each group's capacity) is free. The persistent scheduler numbers only the
// tiles of each group's first masked_m[g] rows, reading the counts in device memory, so the
// grid, the maps and the arguments do not depend on them: a captured decode step runs with new
// counts as it is. The epilogue stores a group's first masked_m[g] rows only. A's scales are
// those of the [G*M] rows (row-wise per row, block128 per row and K block, the tile's through
// the same TMA box at column g*M + its first row); B's are the contiguous layout's.
#include "grouped_gemm_fp8/wgmma_tma/grouped_gemm_fp8_wgmma_tma_masked_sm90.h"

#include "gemm_fp8/wgmma_tma/gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::grouped_gemm_fp8_wgmma_tma {
namespace {

using gemm_fp8_wgmma_tma::Config;
using gemm_fp8_wgmma_tma::gemm_fp8_masked_kernel;
using gemm_fp8_wgmma_tma::GroupedConfig;
using gemm_fp8_wgmma_tma::k_threads;
using gemm_fp8_wgmma_tma::make_scale_a_map;
using gemm_fp8_wgmma_tma::resident_ctas;

template <class Cfg, class T, Fp8Scale Mode>
cudaError_t launch_typed(const GroupedGemmFp8Args& g, cudaStream_t stream) {
  const int rows = g.groups * g.m;  // supports() keeps it within int
  CUtensorMap ta, tb, tsa;
  if (!tma_host::make_tmap_8bit_sw128_3d(&ta, g.a, g.groups, g.m, g.k, Cfg::BM) ||
      !tma_host::make_tmap_8bit_sw128_3d(&tb, g.b, g.groups, g.n, g.k, Cfg::BN))
    return cudaErrorInvalidValue;
  tsa = ta;                                  // unused unless block128
  if constexpr (Mode == Fp8Scale::block128)  // the scales of the [G*M] rows, as the contiguous layout's
    if (!make_scale_a_map<Cfg>(&tsa, g.scale_a, rows, g.k)) return cudaErrorInvalidValue;
  auto kernel = gemm_fp8_masked_kernel<Cfg, T, Mode>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  int ctas = 0;
  if ((err = resident_ctas<Cfg>(&ctas)) != cudaSuccess) return err;
  // Every row valid is the most tiles there can be (supports() keeps it within int).
  const long long most =
      static_cast<long long>(g.groups) * ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(most < ctas ? most : ctas));
  cfg.blockDim = dim3(k_threads);
  cfg.dynamicSmemBytes = Cfg::smem_bytes;
  cfg.stream = stream;
  err = cudaLaunchKernelEx(&cfg, kernel, ta, tb, tsa, static_cast<__nv_bfloat16*>(g.d), g.scale_a, g.scale_b,
                           g.masked_m, g.groups, g.m, g.n, g.k);
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

template <class Cfg, class T>
cudaError_t launch_mode(const GroupedGemmFp8Args& g, cudaStream_t stream) {
  switch (g.scale) {
    case Fp8Scale::tensor: return launch_typed<Cfg, T, Fp8Scale::tensor>(g, stream);
    case Fp8Scale::row: return launch_typed<Cfg, T, Fp8Scale::row>(g, stream);
    case Fp8Scale::block128:
    case Fp8Scale::block128_ue8m0:  // its fp32 scales, in block128's layout
      return launch_typed<Cfg, T, Fp8Scale::block128>(g, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

template <int BN>
cudaError_t launch_masked(const GroupedGemmFp8Args& g, cudaStream_t stream) {
  using Cfg = GroupedConfig<Config<BN, 6, 1>>;
  if (g.dtype == DType::e5m2) return launch_mode<Cfg, __nv_fp8_e5m2>(g, stream);
  return launch_mode<Cfg, __nv_fp8_e4m3>(g, stream);
}

template cudaError_t launch_masked<128>(const GroupedGemmFp8Args&, cudaStream_t);
template cudaError_t launch_masked<160>(const GroupedGemmFp8Args&, cudaStream_t);

}  // namespace kport::kernels::grouped_gemm_fp8_wgmma_tma
