// grouped_gemm_fp8.tcgen05 in the masked layout of MoE decode: the tcgen05 gemm tile
// (common/tcgen05_gemm_sm100.cuh) with gemm_fp8.tcgen05's fp8 pieces
// (common/tcgen05_fp8_gemm_sm100.cuh) at the contiguous instance's tile, one CTA a tile of the
// valid rows, in every scale mode the contiguous layout takes. Target: sm_100a (and the other
// tcgen05 targets); never run (no GPU of that family is available to the project), so its
// numerics are unverified.
//
// Group g holds masked_m[g] valid leading rows of its m (counts in device memory, read by the
// kernel). A is read through a 3-D tensor map [G][M][K]: a tile's rows are one group's, rows
// past M are zero-filled, so M is free. CTA t takes the t-th tile of the valid rows
// (MaskedTiles::seek_warp, common/masked_tiles.cuh); the grid is the most tiles the counts could
// ask for, CTAs past the last valid tile leave at once, and nothing of the launch depends on the
// counts (a captured decode step replays with new counts). The epilogue stores a group's first
// masked_m[g] rows only. The scales are laid out as the contiguous layout's:
// - per tensor and row-wise (tcgen05.mma kind::f8f6f4, scaled in the epilogue): A's of the G*M
//   rows (row-wise: group g's row i is row g*M + i), B's per group;
// - UE8M0 block scales (kind::mxf8f6f4.block_scale): A's packed for the G*M rows. A group's
//   local row tile tm is the tall A's scale tile g*M/128 + tm only when M is a multiple of 128
//   (otherwise a tile of a group's rows straddles two scale tiles at an offset the tensor-memory
//   scale layout cannot take), so supports() refuses block scales with another M. B's packed
//   one group after the other, as the contiguous layout reads them.
#include "grouped_gemm_fp8/tcgen05/grouped_gemm_fp8_tcgen05_masked_sm100.h"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/tcgen05_fp8_gemm_sm100.cuh"
#include "common/tcgen05_gemm_sm100.cuh"
#include "common/tcgen05_launch_sm100.cuh"
#include "common/tcgen05_sm100.cuh"
#include "common/tma_host_sm90.h"
#include "common/tma_sm90.cuh"
#include "kport/kernels/fp8_scales.h"

namespace kport::kernels::grouped_gemm_fp8_tcgen05 {
namespace {

using namespace kport::kernels::sm90;  // mbarriers and TMA: the same PTX on sm_100
using namespace kport::kernels::sm100;

// Per-tensor and row-wise scales, Cfg an F8Config. m = M (a group's rows, any), masked_m[groups]
// the valid rows of each.
template <class Cfg, class T, Fp8Scale Mode>
__global__ void __launch_bounds__(k_gemm_threads, 1)
    grouped_gemm_fp8_tcgen05_masked_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                           const __grid_constant__ CUtensorMap tmap_b, __nv_bfloat16* __restrict__ d,
                                           const float* __restrict__ scale_a, const float* __restrict__ scale_b,
                                           const int* __restrict__ masked_m, int groups, int m, int n, int k) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  const MaskedGemmTile<Cfg> at(masked_m, groups, m, n);
  if (!at.found) return;
  const int group = at.tiles.group;
  // A as 128x128 tiles of the group's [M][K] slice; B as BNx128 tiles of the group's.
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    tma_load_3d(a, &tmap_a, kb * BK, tm * BM, group, bar);
    tma_load_3d(b, &tmap_b, kb * BK, tn * BN, group, bar);
  };
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
    mma_f8_kblock<Cfg, std::is_same_v<T, __nv_fp8_e5m2>>(tmem_d, a, b, kb);
  };
  __nv_bfloat16* d_group = d + static_cast<std::size_t>(group) * m * n;
  // Row-wise: the group's rows among the G*M of scale_a; per tensor: A's one scale.
  const float* sa = Mode == Fp8Scale::row ? scale_a + static_cast<std::size_t>(group) * m : scale_a;
  const float* sb = scale_b + fp8_group_scale_b_offset(Mode, group, n, k);
  auto store = [&](int row, int col, const uint32_t(&r)[32]) {
    store_row_fp8_scaled<Mode>(d_group, n, row, col, r, sa, sb);
  };
  gemm_tile_at<Cfg>(&tmap_a, &tmap_b, at, at.tiles.rows, n, k, load, mma, store);
#endif
}

// Block scales as UE8M0 (Fp8Scale::block128_ue8m0), Cfg an F8BlockConfig; m a multiple of 128.
// tmap_sfa views the tall A's packed scales (G*M/128 row tiles) and tmap_sfb every group's B's,
// one after the other; b_tiles is ceil(N / 128), the row tiles of one group's B.
template <class Cfg, class T>
__global__ void __launch_bounds__(k_gemm_threads, 1)
    grouped_gemm_fp8_tcgen05_masked_ue8m0_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                                 const __grid_constant__ CUtensorMap tmap_b,
                                                 const __grid_constant__ CUtensorMap tmap_sfa,
                                                 const __grid_constant__ CUtensorMap tmap_sfb,
                                                 __nv_bfloat16* __restrict__ d, const int* __restrict__ masked_m,
                                                 int groups, int m, int n, int k, int b_tiles) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  const MaskedGemmTile<Cfg> at(masked_m, groups, m, n);
  if (!at.found) return;
  const int group = at.tiles.group;
  // The group's rows start scale tile group * M / 128 of the tall A's; its B's, as contiguous.
  const int a_first = group * (m / k_ue8m0_tile_rows);
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    load_ue8m0_tiles<Cfg>(b, bar, &tmap_sfa, &tmap_sfb, kb, a_first + tm, tn, group * b_tiles);
    tma_load_3d(a, &tmap_a, kb * BK, tm * BM, group, bar);
    tma_load_3d(b, &tmap_b, kb * BK, tn * BN, group, bar);
  };
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
    mma_mxf8_kblock<Cfg, std::is_same_v<T, __nv_fp8_e5m2>>(tmem_d, a, b, kb);
  };
  __nv_bfloat16* d_group = d + static_cast<std::size_t>(group) * m * n;
  auto store = [&](int row, int col, const uint32_t(&r)[32]) { store_row_fp8_unscaled(d_group, n, row, col, r); };
  gemm_tile_at<Cfg>(&tmap_a, &tmap_b, at, at.tiles.rows, n, k, load, mma, store);
#endif
}

// A as [G][M][K], B as [G][N][K]: boxes of one tile's rows and 128 K of one group.
template <int BM, int BN>
bool make_operand_maps(const GroupedGemmFp8Args& g, CUtensorMap* ta, CUtensorMap* tb) {
  return tma_host::make_tmap_8bit_sw128_3d(ta, g.a, g.groups, g.m, g.k, BM) &&
         tma_host::make_tmap_8bit_sw128_3d(tb, g.b, g.groups, g.n, g.k, BN);
}

// Every row valid is the most tiles there can be (supports() keeps it within int).
template <class Cfg>
int most_tiles(const GroupedGemmFp8Args& g) {
  return g.groups * gemm_tiles<Cfg>(g.m, g.n);
}

template <class Cfg, class T, Fp8Scale Mode>
cudaError_t launch_typed(const GroupedGemmFp8Args& g, cudaStream_t stream) {
  CUtensorMap ta, tb;
  if (!make_operand_maps<Cfg::BM, Cfg::BN>(g, &ta, &tb)) return cudaErrorInvalidValue;
  return launch_gemm_kernel<Cfg>(grouped_gemm_fp8_tcgen05_masked_kernel<Cfg, T, Mode>, most_tiles<Cfg>(g), stream, ta,
                                 tb, static_cast<__nv_bfloat16*>(g.d), g.scale_a, g.scale_b, g.masked_m, g.groups, g.m,
                                 g.n, g.k);
}

template <class Cfg, class T>
cudaError_t launch_ue8m0(const GroupedGemmFp8Args& g, cudaStream_t stream) {
  CUtensorMap ta, tb, tsa, tsb;
  if (!make_operand_maps<Cfg::BM, Cfg::BN>(g, &ta, &tb) || !make_ue8m0_maps<Cfg>(g, &tsa, &tsb))
    return cudaErrorInvalidValue;
  return launch_gemm_kernel<Cfg>(grouped_gemm_fp8_tcgen05_masked_ue8m0_kernel<Cfg, T>, most_tiles<Cfg>(g), stream, ta,
                                 tb, tsa, tsb, static_cast<__nv_bfloat16*>(g.d), g.masked_m, g.groups, g.m, g.n, g.k,
                                 fp8_ue8m0_row_tiles(g.n));
}

}  // namespace

template <int BN, int Stages>
cudaError_t launch_masked(const GroupedGemmFp8Args& g, cudaStream_t stream) {
  using Cfg = F8Config<128, BN, Stages>;
  using BlockCfg = F8BlockConfig<128, BN, Stages>;
  return launch_fp8_kernel(
      g.dtype, g.scale, [&]<class T, Fp8Scale Mode>() { return launch_typed<Cfg, T, Mode>(g, stream); },
      [&]<class T>() { return launch_ue8m0<BlockCfg, T>(g, stream); });
}

template cudaError_t launch_masked<256, 4>(const GroupedGemmFp8Args&, cudaStream_t);

}  // namespace kport::kernels::grouped_gemm_fp8_tcgen05
