// grouped_gemm.tcgen05 in the masked layout of MoE decode: the tcgen05 gemm tile of
// common/tcgen05_gemm_sm100.cuh at the contiguous instance's tile, one CTA a tile of the valid
// rows. Target: sm_100a (and the other tcgen05 targets); never run (no GPU of that family is
// available to the project), so its numerics are unverified.
//
// Group g holds masked_m[g] valid leading rows of its m (counts in device memory, read by the
// kernel). A is read through a 3-D tensor map [G][M][K]: a tile's rows are one group's, rows
// past M are zero-filled, so M is free and a tile never reads another group's rows. The grid
// is the most tiles the counts could ask for (every row valid); CTA t takes the t-th tile of
// the valid rows, group after group, each group's tiles in the gemm's grouped order
// (MaskedTiles::seek_warp, common/masked_tiles.cuh), and CTAs past the last valid tile leave
// before they touch a barrier or tensor memory. Nothing of the launch depends on the counts, so
// a captured decode step replays with new counts as it is. The epilogue stores a group's first
// masked_m[g] rows only: D's other rows are never written.
#include "grouped_gemm/tcgen05/grouped_gemm_tcgen05_masked_sm100.h"

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

#include "common/tcgen05_gemm_sm100.cuh"
#include "common/tcgen05_launch_sm100.cuh"
#include "common/tcgen05_sm100.cuh"
#include "common/tma_host_sm90.h"
#include "common/tma_sm90.cuh"

namespace kport::kernels::grouped_gemm_tcgen05 {
namespace {

using namespace kport::kernels::sm90;  // mbarriers and TMA: the same PTX on sm_100
using namespace kport::kernels::sm100;

// m = M (a group's rows, any), masked_m[groups] the valid rows of each.
template <class Cfg>
__global__ void __launch_bounds__(k_gemm_threads, 1)
    grouped_gemm_tcgen05_masked_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                       const __grid_constant__ CUtensorMap tmap_b, __nv_bfloat16* __restrict__ d,
                                       const int* __restrict__ masked_m, int groups, int m, int n, int k) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  const MaskedGemmTile<Cfg> at(masked_m, groups, m, n);
  if (!at.found) return;
  const int group = at.tiles.group;
  // A as 128x64 tiles of the group's [M][K] slice; B as the contiguous layout's 64-column slabs.
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    tma_load_3d(a, &tmap_a, kb * BK, tm * BM, group, bar);
#pragma unroll
    for (int j = 0; j < BN / 64; ++j)
      tma_load_3d(b + j * Cfg::b_chunk_bytes, &tmap_b, tn * BN + j * 64, kb * BK, group, bar);
  };
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) { mma_f16_kblock<Cfg, true>(tmem_d, a, b, kb); };
  __nv_bfloat16* d_group = d + static_cast<std::size_t>(group) * m * n;
  auto store = [&](int row, int col, const uint32_t(&r)[32]) { store_row32(d_group, n, row, col, r); };
  // Rows are counted inside the group and end at its valid rows.
  gemm_tile_at<Cfg>(&tmap_a, &tmap_b, at, at.tiles.rows, n, k, load, mma, store);
#endif
}

}  // namespace

template <int BN, int Stages>
cudaError_t launch_masked(const GroupedGemmArgs& g, cudaStream_t stream) {
  using Cfg = F16Config<128, BN, 64, Stages>;
  const auto m = static_cast<cuuint64_t>(g.m), n = static_cast<cuuint64_t>(g.n), k = static_cast<cuuint64_t>(g.k);
  const auto groups = static_cast<cuuint64_t>(g.groups);
  // Dims innermost first, byte strides of rows and of whole groups; boxes of one group's rows.
  const cuuint64_t a_dims[3] = {k, m, groups}, a_strides[2] = {k * 2, m * k * 2};
  const cuuint64_t b_dims[3] = {n, k, groups}, b_strides[2] = {n * 2, k * n * 2};
  const cuuint32_t a_box[3] = {64, static_cast<cuuint32_t>(Cfg::BM), 1};
  const cuuint32_t b_box[3] = {64, static_cast<cuuint32_t>(Cfg::BK), 1};
  CUtensorMap ta, tb;
  if (!tma_host::make_tmap_16bit_sw128<3>(&ta, g.a, a_dims, a_strides, a_box, g.dtype) ||
      !tma_host::make_tmap_16bit_sw128<3>(&tb, g.b, b_dims, b_strides, b_box, g.dtype))
    return cudaErrorInvalidValue;
  // Every row valid is the most tiles there can be (grouped_gemm_masked_supports keeps it within int).
  return launch_gemm_kernel<Cfg>(grouped_gemm_tcgen05_masked_kernel<Cfg>, g.groups * gemm_tiles<Cfg>(g.m, g.n), stream,
                                 ta, tb, static_cast<__nv_bfloat16*>(g.d), g.masked_m, g.groups, g.m, g.n, g.k);
}

template cudaError_t launch_masked<256, 4>(const GroupedGemmArgs&, cudaStream_t);

}  // namespace kport::kernels::grouped_gemm_tcgen05
