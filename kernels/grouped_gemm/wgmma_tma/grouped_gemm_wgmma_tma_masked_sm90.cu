// grouped_gemm.wgmma_tma in the masked layout of MoE decode: gemm.wgmma_tma's kernel in its
// masked form (gemm_wgmma_tma_masked_kernel) at the contiguous instances' tiles. Target sm_90a.
//
// A and D are read and written through 3-D tensor maps [G][M][K] and [G][M][N]: a tile's rows
// are one group's, a tile past a group's M is zero-filled on load and clipped on store, so M
// (each group's capacity) is free. The persistent scheduler numbers only the tiles of each
// group's first masked_m[g] rows, reading the counts in device memory, so the grid, the maps
// and the arguments do not depend on them: a captured decode step runs with new counts as it
// is. The grid is the most tiles the counts can ask for, at most one CTA per SM; CTAs past the
// tiles there are leave at once. D's rows past a group's count within its last tile are written
// with what their A rows give; rows of tiles past the count are not written.
#include "grouped_gemm/wgmma_tma/grouped_gemm_wgmma_tma_masked_sm90.h"

#include "gemm/wgmma_tma/gemm_wgmma_tma_sm90.cuh"

namespace kport::kernels::grouped_gemm_wgmma_tma {

using gemm_wgmma_tma::Config;
using gemm_wgmma_tma::gemm_wgmma_tma_masked_kernel;
using gemm_wgmma_tma::k_threads;
using gemm_wgmma_tma::resident_ctas;

template <int BN, int Stages>
cudaError_t launch_masked(const GroupedGemmArgs& g, cudaStream_t stream) {
  using Cfg = Config<128, BN, 64, Stages, 1, 1, true>;
  using T = __nv_bfloat16;
  const auto m = static_cast<cuuint64_t>(g.m), n = static_cast<cuuint64_t>(g.n), k = static_cast<cuuint64_t>(g.k);
  const auto groups = static_cast<cuuint64_t>(g.groups);
  // Dims innermost first, byte strides of rows and of whole groups; boxes of one group's rows.
  const cuuint64_t a_dims[3] = {k, m, groups}, a_strides[2] = {k * 2, m * k * 2};
  const cuuint64_t b_dims[3] = {n, k, groups}, b_strides[2] = {n * 2, k * n * 2};
  const cuuint64_t d_dims[3] = {n, m, groups}, d_strides[2] = {n * 2, m * n * 2};
  const cuuint32_t a_box[3] = {64, static_cast<cuuint32_t>(Cfg::BM), 1};
  const cuuint32_t b_box[3] = {64, static_cast<cuuint32_t>(Cfg::BK), 1};
  CUtensorMap ta, tb, td;
  if (!tma_host::make_tmap_16bit_sw128<3>(&ta, g.a, a_dims, a_strides, a_box, g.dtype) ||
      !tma_host::make_tmap_16bit_sw128<3>(&tb, g.b, b_dims, b_strides, b_box, g.dtype) ||
      !tma_host::make_tmap_16bit_sw128<3>(&td, g.d, d_dims, d_strides, a_box, g.dtype))
    return cudaErrorInvalidValue;
  auto kernel = gemm_wgmma_tma_masked_kernel<Cfg, T>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  int ctas = 0;
  if ((err = resident_ctas<Cfg, T>(&ctas)) != cudaSuccess) return err;
  // Every row valid is the most tiles there can be (masked_supports keeps it within int).
  const long long most = static_cast<long long>(g.groups) * ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + BN - 1) / BN);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(most < ctas ? most : ctas));
  cfg.blockDim = dim3(k_threads);
  cfg.dynamicSmemBytes = Cfg::smem_bytes;
  cfg.stream = stream;
  err = cudaLaunchKernelEx(&cfg, kernel, ta, tb, td, g.masked_m, g.groups, g.m, g.n, g.k);
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

template cudaError_t launch_masked<256, 4>(const GroupedGemmArgs&, cudaStream_t);
template cudaError_t launch_masked<128, 6>(const GroupedGemmArgs&, cudaStream_t);

}  // namespace kport::kernels::grouped_gemm_wgmma_tma
