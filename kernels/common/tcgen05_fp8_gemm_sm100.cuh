// The fp8 side of the tcgen05 gemm tile (common/tcgen05_gemm_sm100.cuh), shared by
// gemm_fp8.tcgen05 and grouped_gemm_fp8.tcgen05: their configurations, a K block's MMAs, the
// loads of the UE8M0 scale tiles and the epilogue's bf16 rows of D. The variants keep only
// where their operands and scales lie (a dense A and B, or a tall A and a B per group).
//
// Both operands are K-major fp8: a 128-byte swizzle row holds 128 values, so a K block (BK =
// 128) is one swizzle row of every row of A and B, and four MMAs of K = 32 (32 bytes into the
// row each) cover it.
// - Per-tensor and row-wise scales: tcgen05.mma kind::f8f6f4 (F8Config, mma_f8_kblock); the
//   epilogue multiplies by the scales (store_row_fp8_scaled).
// - UE8M0 block scales (block128_ue8m0): tcgen05.mma kind::mxf8f6f4.block_scale.scale_vec::1X
//   (F8BlockConfig, mma_mxf8_kblock), one scale per row of A and of B for each MMA, read from
//   tensor memory. The packed layout of fp8_scales.h holds four 128-K blocks per 32-bit word,
//   so every fourth K block the stage also carries the K-block group's scale tiles (A's 128
//   rows, B's BN rows; load_ue8m0_tiles), tcgen05.cp moves them into tensor memory, and each
//   MMA of K block kb picks byte kb % 4 through the instruction's scale-factor ids. The
//   epilogue only converts (store_row_bf16).
// Callers guard their kernels with KPORT_TCGEN05_ENABLED.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "common/convert.cuh"
#include "common/mbarrier_sm90.cuh"
#include "common/tcgen05_gemm_sm100.cuh"
#include "common/tcgen05_sm100.cuh"
#include "common/tma_sm90.cuh"
#include "kport/kernels/fp8_scales.h"

namespace kport::kernels::sm100 {

// 128x128 tiles of A and BNx128 tiles of B, one byte a value; the accumulator takes BN
// tensor-memory columns.
template <int BM_, int BN_, int Stages_>
struct F8Config {
  static constexpr int BM = BM_, BN = BN_, BK = 128, Stages = Stages_;
  static_assert(BM == 128, "cta_group::1 MMA with all 128 tensor-memory lanes");
  static_assert(BN % 32 == 0 && BN >= 32 && BN <= 256, "N of one MMA; 32-column loads; one TMA box of B rows");
  static_assert((BN & (BN - 1)) == 0, "tensor memory is allocated in powers of two columns");
  static constexpr int a_bytes = BM * BK;  // one byte a value
  static constexpr int stage_bytes = a_bytes + BN * BK;
  static constexpr int tx_bytes = stage_bytes;  // A and B, all a stage holds
  static constexpr int tmem_cols = BN;
  static constexpr int smem_bytes = gemm_smem_bytes(Stages, stage_bytes);
  static_assert(smem_bytes <= 227 * 1024, "fits the sm_100 per-block shared memory");
};

// Block-scaled: a stage also has room for a K-block group's scale tiles after B (A's 128 rows,
// then B's BN rows, 512 bytes a 128 rows), loaded with every fourth K block. Tensor memory:
// the accumulator in columns [0, BN), then two sets of scale columns (A's 4, B's BN / 32)
// that alternate by K-block group, so the copy of group g + 1 never overwrites columns that
// MMAs of group g may still read (see mma_mxf8_kblock).
template <int BM_, int BN_, int Stages_>
struct F8BlockConfig {
  static constexpr int BM = BM_, BN = BN_, BK = 128, Stages = Stages_;
  static_assert(BM == 128, "cta_group::1 MMA with all 128 tensor-memory lanes: one scale tile of A");
  static_assert(BN % 128 == 0 && BN <= 256, "N of one MMA in whole 128-row scale tiles of B");
  static_assert(BK == k_fp8_block && k_ue8m0_tile_rows == 128, "one K block is one scale block");
  static_assert(Stages <= 5, "group g + 2's scale copy waits for the MMAs of group g (see mma_mxf8_kblock)");
  static constexpr int a_bytes = BM * BK;  // one byte a value
  static constexpr int tx_bytes = a_bytes + BN * BK;
  static constexpr int sf_a_bytes = k_ue8m0_tile_bytes;
  static constexpr int sf_bytes = sf_a_bytes + BN / k_ue8m0_tile_rows * k_ue8m0_tile_bytes;
  static constexpr int stage_bytes = (tx_bytes + sf_bytes + 1023) / 1024 * 1024;
  static constexpr int sf_col = BN, sf_set_cols = 16;  // a set: A's 4 columns, then B's
  static_assert(4 + BN / 32 <= sf_set_cols, "A's and B's scale columns fit a set");
  static constexpr int tmem_cols = BN + 2 * sf_set_cols <= 256 ? 256 : 512;
  static_assert(BN + 2 * sf_set_cols <= tmem_cols, "accumulator and scales fit the allocation");
  static constexpr int smem_bytes = gemm_smem_bytes(Stages, stage_bytes);
  static_assert(smem_bytes <= 227 * 1024, "fits the sm_100 per-block shared memory");
};

// The kind::f8f6f4 MMAs of K block kb of an F8Config stage: K steps of 32 values advance both
// K-major descriptors by 32 bytes inside the 128-byte swizzle row; 8-row groups are 1024
// bytes apart. kb == 0 overwrites the accumulator.
template <class Cfg, bool IsE5m2>
__device__ __forceinline__ void mma_f8_kblock(uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
  constexpr uint32_t idesc = make_idesc_f8<Cfg::BM, Cfg::BN, IsE5m2>();
#pragma unroll
  for (int kk = 0; kk < Cfg::BK / 32; ++kk) {
    const uint64_t da = make_sdesc_sw128(a + kk * 32, 16, 1024);
    const uint64_t db = make_sdesc_sw128(b + kk * 32, 16, 1024);
    mma_f8(tmem_d, da, db, idesc, (kb > 0 || kk > 0) ? 1u : 0u);
  }
}

// The scale tiles of K block kb's group, loaded with the group's first K block (one thread, in
// the stage's load after A's and B's bytes were expected): A's row tile tm and B's BN / 128
// row tiles from b_first + tn * BN / 128 (b_first: the first row tile of the tile's B, 0 for
// one B, a group's first for B's packed one group after another), through maps over [row
// tiles][K-block groups][128 words] of 32 bits (tma_host::make_tmap_ue8m0). Their bytes are
// expected here, before they are loaded, while A's and B's are still pending, so the phase
// cannot complete in between. Past a map's row tiles TMA fills zeros: scales of rows whose
// columns of D are never stored.
template <class Cfg>
__device__ __forceinline__ void load_ue8m0_tiles(uint32_t b, uint32_t bar, const CUtensorMap* tmap_sfa,
                                                 const CUtensorMap* tmap_sfb, int kb, int tm, int tn, int b_first) {
  using namespace kport::kernels::sm90;  // mbarriers and TMA: the same PTX on sm_100
  constexpr int G = k_ue8m0_tile_kblocks;
  if (kb % G == 0) {
    const uint32_t sf = b + Cfg::BN * Cfg::BK;
    mbar_expect_tx(bar, Cfg::sf_bytes);
    tma_load_3d(sf, tmap_sfa, 0, kb / G, tm, bar);
    tma_load_3d(sf + Cfg::sf_a_bytes, tmap_sfb, 0, kb / G, b_first + tn * (Cfg::BN / k_ue8m0_tile_rows), bar);
  }
}

// The block-scaled MMAs of K block kb of an F8BlockConfig stage. K block kb uses byte kb % 4
// of the scale words of its group, in set (kb / 4) % 2. The group's first K block copies the
// tiles from its stage into that set: a 512-byte tile is 32 lines of 16 bytes (line l: the
// words of rows l, l+32, l+64, l+96), which 32x128b.warpx4 puts in lanes l (+32, 64, 96) of
// four columns, row r in column r / 32. The copy is issued by this thread before the MMAs that
// read it (tcgen05.cp then tcgen05.mma: in order). It overwrites the set group g - 2 used,
// whose last MMAs are K block 4g - 5's: this stage was loaded only after the commit of K block
// 4g - Stages (>= 4g - 5) landed, and a commit tracks every MMA issued before it, so those have
// completed.
template <class Cfg, bool IsE5m2>
__device__ __forceinline__ void mma_mxf8_kblock(uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
  constexpr int BN = Cfg::BN, BK = Cfg::BK, G = k_ue8m0_tile_kblocks;
  const uint32_t id = static_cast<uint32_t>(kb % G);
  const uint32_t sfa = tmem_d + Cfg::sf_col + static_cast<uint32_t>((kb / G) % 2) * Cfg::sf_set_cols;
  const uint32_t sfb = sfa + 4;
  if (id == 0) {
    const uint32_t sf = b + BN * BK;
    tmem_cp_32x128b_warpx4(sfa, make_sdesc_plain(sf, 0, 128));
#pragma unroll
    for (int t = 0; t < BN / k_ue8m0_tile_rows; ++t)
      tmem_cp_32x128b_warpx4(sfb + 4 * t, make_sdesc_plain(sf + Cfg::sf_a_bytes + t * k_ue8m0_tile_bytes, 0, 128));
  }
  const uint32_t idesc = idesc_with_sf_ids(make_idesc_mxf8<Cfg::BM, BN, IsE5m2>(), id, id);
#pragma unroll
  for (int kk = 0; kk < BK / 32; ++kk) {
    const uint64_t da = make_sdesc_sw128(a + kk * 32, 16, 1024);
    const uint64_t db = make_sdesc_sw128(b + kk * 32, 16, 1024);
    mma_mxf8_block_scale(tmem_d, da, db, idesc, sfa, sfb, (kb > 0 || kk > 0) ? 1u : 0u);
  }
}

// Stores one row's 32 values from column `col` of D (n columns, row-major) as bf16 (16-byte
// stores when the whole segment is inside N and aligned, else element by element up to N).
__device__ __forceinline__ void store_row_bf16(__nv_bfloat16* __restrict__ d, int n, int row, int col,
                                               const float (&v)[32]) {
  __nv_bfloat16* dst = d + static_cast<size_t>(row) * n + col;
  if (col + 32 <= n && n % 8 == 0) {
    // n % 8 == 0 and col % 32 == 0 keep these 16-byte aligned
#pragma unroll
    for (int q = 0; q < 4; ++q)
      reinterpret_cast<uint4*>(dst)[q] = make_uint4(
          pack2<__nv_bfloat16>(v[8 * q], v[8 * q + 1]), pack2<__nv_bfloat16>(v[8 * q + 2], v[8 * q + 3]),
          pack2<__nv_bfloat16>(v[8 * q + 4], v[8 * q + 5]), pack2<__nv_bfloat16>(v[8 * q + 6], v[8 * q + 7]));
  } else {
#pragma unroll
    for (int i = 0; i < 32; ++i)
      if (col + i < n) dst[i] = __float2bfloat16_rn(v[i]);
  }
}

// A row's 32 accumulator columns from col, times the per-tensor (Mode tensor: scale_a[0] *
// scale_b[0]) or row-wise scales (Mode row: scale_a[row] * scale_b[col + i]), stored as bf16.
// scale_b points at the scales of the B this row was multiplied by.
template <Fp8Scale Mode>
__device__ __forceinline__ void store_row_fp8_scaled(__nv_bfloat16* __restrict__ d, int n, int row, int col,
                                                     const uint32_t (&r)[32], const float* __restrict__ scale_a,
                                                     const float* __restrict__ scale_b) {
  static_assert(Mode == Fp8Scale::tensor || Mode == Fp8Scale::row, "block scales are applied inside the MMA");
  float row_scale = 0.0f;
  if constexpr (Mode == Fp8Scale::tensor) row_scale = __ldg(scale_a) * __ldg(scale_b);
  if constexpr (Mode == Fp8Scale::row) row_scale = __ldg(scale_a + row);
  float v[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    float s = row_scale;
    if constexpr (Mode == Fp8Scale::row) s *= col + i < n ? __ldg(scale_b + col + i) : 0.0f;
    v[i] = __uint_as_float(r[i]) * s;
  }
  store_row_bf16(d, n, row, col, v);
}

// A row's 32 accumulator columns from col as bf16, unscaled (block scales were applied inside
// the MMA).
__device__ __forceinline__ void store_row_fp8_unscaled(__nv_bfloat16* __restrict__ d, int n, int row, int col,
                                                       const uint32_t (&r)[32]) {
  float v[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) v[i] = __uint_as_float(r[i]);
  store_row_bf16(d, n, row, col, v);
}

}  // namespace kport::kernels::sm100
