// Hopper fp8 gemm: D[M,N] = (sa . A[M,K]) * (sb . B[N,K])^T, A and B e4m3 or e5m2, both
// K-contiguous, fp32 accumulation, D in bf16. Target sm_90a only (wgmma, setmaxnreg).
//
// Algorithm: a persistent grid (one CTA per SM) walks BMxBN output tiles in a grouped order
// so that the tiles in flight share rows of A and B in L2. Each CTA has three warpgroups. The
// producer warpgroup gives registers away and one of its threads streams 128x128-byte tiles
// of A and BNx128 tiles of B (one 128-byte swizzle row per tile row, which is one K block of
// 128 fp8 values), and in block128 mode the 128 row scales of A for that K block, into a ring
// of shared-memory stages with TMA, each guarded by a "full" and an "empty" mbarrier. The two
// consumer warpgroups own 64 rows of the tile each and issue four wgmma m64nBNk32 over a
// stage into a fresh accumulator, wait for them, hand the stage back and promote: the K
// block's partial sums are added into a second fp32 accumulator, times sa[row,kb] *
// sb[nb,kb] in block128 mode, nb being the 128-row block of B that the column lies in. A tile
// wider than 128 columns (BN 160, 176, 192) may straddle two or three such blocks: its first
// 128 - (tn*BN)%128 columns take the first block's scale, the next 128 the next one's, the
// rest the third's (promote_at: one compiled promotion per possible start offset). Promoting
// every 128 K keeps the sum in full fp32 (the tensor core's own fp8 accumulation keeps fewer
// bits), and it is where block scales must be applied anyway. While one warpgroup promotes,
// the other's wgmma run. Per-tensor and row-wise scales multiply once, in the epilogue, which
// converts to bf16 and stores straight from registers (odd N included).
// Overlap (the _ov instances) keeps two K blocks in flight per warpgroup in two accumulators:
// block kb+1's wgmma are issued before block kb is promoted. Without Promote (the _fastacc
// instances, per-tensor and row-wise scales only) the wgmma accumulate over all of K in one
// accumulator, which leaves registers for a 128x256 tile. The two fp32 arrays of a promoting
// tile take BN registers a consumer thread (3*BN/2 with overlap), which bounds BN at 192 under
// setmaxnreg 232 (128 with overlap).
// Tall tiles (Waves = 2, the 256x128 instances): each consumer warpgroup takes two 64-row
// slices of a stage in turn (rows cw*64, then 128 + cw*64) into its one accumulator, each
// promoted into a total of its own, so a stage loaded once feeds four wgmma groups: fewer
// bytes from L2 per MAC than any 128-row tile.
// Optionally (ClusterM = 2) two CTAs on vertically adjacent tiles form a cluster: each loads
// its own A (and A scales) and half of the shared B tile, multicast to both, and a stage is
// refilled only when the consumers of both CTAs have released it; L2 then serves 24 KiB per
// CTA and K block instead of 32 (BN 128).
//
// Grouped (GroupedConfig, grouped_gemm_fp8's instances): G gemms in the contiguous layout of
// prefill MoE, A [G*M, K] and D [G*M, N] with each group's M a multiple of BM, so every tile
// row lies in one group and the tile walk is the plain gemm's over G*M rows. B is a 3-D map
// [G][N][K] whose loads take the tile's group, tile row / (M / BM), as the third coordinate
// (each group's N and K edges zero-filled within it), and the tile reads its group's scales of
// B (fp8_group_scale_b_offset); A's scales are the tall A's, as the plain gemm's. The dense
// instances' code does not change: their Config says Grouped = false and the kernel's
// signature is the same (the last argument carries M / BM when grouped).
// The masked layout (gemm_fp8_masked_kernel, grouped_gemm_fp8's decode path): A [G][M][K] as a
// 3-D map, so M is free and no tile reads another group's rows; only tiles holding some of
// group g's first masked_m[g] rows exist (MaskedTiles, counts read on the device), walked
// group after group; the epilogue stores those rows only. A's scales are still the tall A's
// (row g*M + i of [G*M] rows).
//
// Constraints: K a multiple of 16 (TMA needs 16-byte row strides of A and B), of 128 with
// block scales (a K block is one scale block); A, B (and block scale_a) 16-byte aligned.
// block128_ue8m0 (power-of-two block scales) runs the block128 kernel on its fp32 copy.
// M and N are free: TMA fills the edges of A and B with zeros and the epilogue masks D.
//
// This header holds the kernel and its launch for every Config; each
// gemm_fp8_wgmma_tma_sm90_<group>.cu instantiates and registers one group of instances, so
// the groups compile in parallel (one unit of all of them was a pipeline build's long pole
// on the H200's 16 cores). Everything here has internal linkage: each unit keeps its own copy.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <numeric>
#include <string>

#include "common/convert.cuh"
#include "common/masked_tiles.cuh"
#include "common/mbarrier_sm90.cuh"
#include "common/smem.cuh"
#include "common/sync_sm90.cuh"
#include "common/tma_host_sm90.h"
#include "common/tma_sm90.cuh"
#include "common/wgmma_fp8_sm90.cuh"
#include "kport/kernels/registry.h"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using namespace kport::kernels::sm90;

constexpr int k_consumers = 2;                      // consumer warpgroups
constexpr int k_threads = 128 * (1 + k_consumers);  // + one producer warpgroup
constexpr int k_group_m = 8;                        // tile rows per L2 group
constexpr int k_producer_regs = 40;
constexpr int k_consumer_regs = 232;

template <int BN_, int Stages_, int ClusterM_, bool Overlap_ = false, bool Promote_ = true, int Waves_ = 1,
          bool ScalesFirst_ = false, bool StagedD_ = false>
struct Config {
  // Waves: 64-row slices of the tile each consumer warpgroup takes in turn per K block (rows
  // cw*64 and 128 + cw*64 with two), so a 256-row tile reads each stage of B four times while
  // the stage is loaded once: a quarter fewer bytes from L2 per MAC than 128x128.
  static constexpr int Waves = Waves_;
  static constexpr int BM = 64 * k_consumers * Waves, BN = BN_, BK = k_fp8_block, Stages = Stages_,
                       ClusterM = ClusterM_;
  static_assert(Waves == 1 || Waves == 2, "one or two 64-row slices per consumer warpgroup");
  static constexpr bool Overlap = Overlap_;  // two K blocks in flight per warpgroup
  // Promote: every 128-K block is added into a separate fp32 total (needed for block scales).
  // Without, the wgmma accumulate over all of K in one register tile (per-tensor and row-wise
  // scales only), which leaves room for 256 columns.
  static constexpr bool Promote = Promote_;
  static_assert(Promote || !Overlap, "two blocks in flight only pay when promoting");
  static_assert(Waves == 1 || (Promote && !Overlap), "two slices share one wgmma accumulator, promoted in turn");
  static_assert(BN % 16 == 0 && BN >= 64 && BN <= 256, "whole 8-column accumulator groups, one wgmma per k32");
  // Registers of a consumer thread: BN/2 per accumulator (the wgmma's, the promoted total and,
  // with Overlap, a second wgmma accumulator) must leave ~40 of setmaxnreg 232 for the rest.
  static_assert((Promote ? (Overlap ? 3 : 1 + Waves) : 1) * BN / 2 <= 192, "accumulators fit under setmaxnreg 232");
  // Tile column tn starts (tn * BN) % 128 rows into a 128-row scale block of B, a multiple
  // of gcd(BN, 128), so it spans at most sb_blocks scale blocks (1 for BN 64 and 128, 2 for
  // 160 and 192, 3 for 176).
  static constexpr int sb_offset_step = std::gcd(BN, k_fp8_block);
  static constexpr int sb_blocks = (BN + k_fp8_block - sb_offset_step + k_fp8_block - 1) / k_fp8_block;
  static_assert(!Promote || sb_blocks <= 3, "the promotion takes up to three scales of B per tile");
  static_assert(!Overlap || sb_blocks == 1, "the overlapped promotion applies one scale of B per tile");
  static_assert(Stages >= 2 && Stages <= 8, "pipeline depth");
  static_assert(ClusterM == 1 || ClusterM == 2, "CTAs along M sharing one B tile");
  // ScalesFirst: a K block's A scales are read from the stage as soon as it is full, before
  // its wgmma are issued (the promoting path without Overlap), so the promotion never waits
  // for them. Otherwise they are read after the wgmma's wait.
  static constexpr bool ScalesFirst = ScalesFirst_;
  static_assert(!ScalesFirst || (Promote && !Overlap), "the scales of the one K block in flight");
  // StagedD: the epilogue writes D into a shared-memory slab (128 rows x 64 columns, 128-byte
  // swizzle) and one thread stores it by TMA, which drains while the next slab is written and
  // the next tile's main loop runs; otherwise every thread stores its values from registers.
  // TMA needs N a multiple of 8 and D 16-byte aligned (supports() refuses the rest).
  static constexpr bool StagedD = StagedD_;
  static_assert(!StagedD || BN % 64 == 0, "D staged in 64-column slabs");
  static constexpr int d_bytes = StagedD ? 128 * 64 * 2 : 0;  // one slab of D, both consumer warpgroups' rows
  static constexpr int b_part_rows = BN / ClusterM;           // rows of B each CTA of a cluster loads
  static_assert(b_part_rows * BK % 1024 == 0, "each CTA multicasts whole swizzle atoms");
  static constexpr int a_bytes = BM * BK;  // one byte per element
  static constexpr int b_bytes = BN * BK;
  static constexpr int sa_bytes = BM * 4;  // block128: the K block's scales of the tile's rows
  static constexpr int stage_bytes = a_bytes + b_bytes;
  static_assert(a_bytes % 1024 == 0 && b_bytes % 1024 == 0, "swizzle atoms are 1 KiB");
  static constexpr int sa_offset = Stages * stage_bytes + d_bytes;  // the stages' A scales, from the 1 KiB aligned base
  static constexpr int smem_bytes = Stages * (stage_bytes + sa_bytes) + d_bytes + 2 * Stages * 8 + 1024;
  static_assert(smem_bytes <= 227 * 1024, "fits the sm_90 per-block shared memory");
  static constexpr bool Grouped = false;  // GroupedConfig below
};

// A dense Config's tile, pipeline and promotion over grouped_gemm_fp8's contiguous layout (a
// type of its own, so the dense instances' kernels keep their names and code).
template <class Base>
struct GroupedConfig : Base {
  static constexpr bool Grouped = true;
  static_assert(Base::ClusterM == 1, "a grouped tile takes no B multicast (the cluster's tiles may be two groups')");
  // A tile of 128 or 256 rows (Waves 2) lies in one group: each group's M is a multiple of BM.
  // StagedD stores D by TMA over the G*M rows of the contiguous layout (gemm_fp8_staged_kernel);
  // the masked layout, which stores a group's valid rows only, runs its own 128-row configs.
};

template <int GroupM>
__device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int per_group = GroupM * tiles_n;
  const int group = tile / per_group;
  const int first_m = group * GroupM;
  const int rows = min(tiles_m - first_m, GroupM);
  const int r = tile - group * per_group;
  tm = first_m + r % rows;
  tn = r / rows;
}

template <bool First, class A>
__device__ __forceinline__ A& pick(A& first, A& second) {
  if constexpr (First)
    return first;
  else
    return second;
}

// Promotes one K block: total += acc * scale. A thread's values come in 8-column groups of
// four (columns c and c+1 of rows r and r+8); the scale of a value is its row's sa times the
// sb of the 128-row block of B its column lies in: groups g < G1 lie in the tile's first
// scale block (scales x0*, from sb of that block), G1 <= g < G2 in the next (x1*), the rest in
// the one after (x2*); x*0 belong to row r and x*1 to row r+8. G1 and G2 are template
// arguments, so each value's scale is chosen at compile time, not per value at run time.
template <int G1, int G2, int R>
__device__ __forceinline__ void promote(float (&total)[R], const float (&acc)[R], float x00, float x01, float x10,
                                        float x11, float x20, float x21) {
#pragma unroll
  for (int i = 0; i < R; i += 4) {
    const int g = i / 4;
    const float s0 = g < G1 ? x00 : g < G2 ? x10 : x20;
    const float s1 = g < G1 ? x01 : g < G2 ? x11 : x21;
    total[i] = fmaf(acc[i], s0, total[i]);
    total[i + 1] = fmaf(acc[i + 1], s0, total[i + 1]);
    total[i + 2] = fmaf(acc[i + 2], s1, total[i + 2]);
    total[i + 3] = fmaf(acc[i + 3], s1, total[i + 3]);
  }
}

// Same for a tile that starts `offset` rows into a scale block of B (a multiple of Step, the
// same for the whole CTA, so the branch is uniform): its first min(BN, 128 - offset) columns
// lie in that block, the next up to 256 - offset in the following one, the rest in the one
// after. One compiled promotion per possible offset.
template <int BN, int Step, int Offset = 0, int R>
__device__ __forceinline__ void promote_at(int offset, float (&total)[R], const float (&acc)[R], float x00, float x01,
                                           float x10, float x11, float x20, float x21) {
  constexpr int g1 = (k_fp8_block - Offset < BN ? k_fp8_block - Offset : BN) / 8;
  constexpr int g2 = (2 * k_fp8_block - Offset < BN ? 2 * k_fp8_block - Offset : BN) / 8;
  if constexpr (Offset + Step >= k_fp8_block) {
    promote<g1, g2>(total, acc, x00, x01, x10, x11, x20, x21);  // the last possible offset
  } else if (offset == Offset) {
    promote<g1, g2>(total, acc, x00, x01, x10, x11, x20, x21);
  } else {
    promote_at<BN, Step, Offset + Step>(offset, total, acc, x00, x01, x10, x11, x20, x21);
  }
}

__device__ __forceinline__ void store_pair(__nv_bfloat16* d, int n, int row, int col, float v0, float v1, bool pairs) {
  __nv_bfloat16* p = d + static_cast<size_t>(row) * n + col;
  if (pairs && col + 1 < n) {
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(v0, v1);
  } else {
    if (col < n) p[0] = __float2bfloat16_rn(v0);
    if (col + 1 < n) p[1] = __float2bfloat16_rn(v1);
  }
}

// The kernels' body. m is the rows of A and D (G*M when grouped, each group's when Masked);
// masked_m and groups are read only when Masked, a_rows_or_group_tiles only when not.
template <class Cfg, class T, Fp8Scale Mode, bool Masked>
__device__ __forceinline__ void gemm_fp8_body(const CUtensorMap& tmap_a, const CUtensorMap& tmap_b,
                                              const CUtensorMap& tmap_sa, __nv_bfloat16* __restrict__ d,
                                              const float* __restrict__ scale_a, const float* __restrict__ scale_b,
                                              int m, int n, int k, int a_rows_or_group_tiles,
                                              const int* __restrict__ masked_m, int groups, const CUtensorMap* tmap_d) {
#if KPORT_WGMMA_ENABLED
  static_assert(!Masked || Cfg::Grouped, "masked tiles are grouped ones");
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, S = Cfg::Stages;
  constexpr bool k_block = Mode == Fp8Scale::block128;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw_base = smem_u32(smem_raw);
  const uint32_t smem_base = (raw_base + 1023u) & ~1023u;
  const uint8_t* smem_gen = smem_raw + (smem_base - raw_base);  // the same bytes, generic address
  const uint32_t d_base = smem_base + S * Cfg::stage_bytes;     // StagedD: D's slab (1 KiB aligned)
  const uint32_t sa_base = smem_base + Cfg::sa_offset;
  const uint32_t bar_base = sa_base + S * Cfg::sa_bytes;
  auto full_bar = [&](int s) { return bar_base + 8u * s; };
  auto empty_bar = [&](int s) { return bar_base + 8u * (S + s); };
  auto stage_a = [&](int s) { return smem_base + s * Cfg::stage_bytes; };
  auto stage_b = [&](int s) { return smem_base + s * Cfg::stage_bytes + Cfg::a_bytes; };

  constexpr int CM = Cfg::ClusterM;
  const int wg = threadIdx.x / 128;
  // The CTAs of a cluster take vertically adjacent tiles (the same rows of B): each loads its
  // own A and 1/CM of the B tile, multicast to all of them.
  const uint32_t rank = CM > 1 ? cluster_rank() : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full_bar(s), 1);
      mbar_init(empty_bar(s), k_consumers * 4 * CM);  // every consumer warp whose B lands here
    }
    mbar_fence_init();
    tma_prefetch_desc(&tmap_a);
    tma_prefetch_desc(&tmap_b);
    if constexpr (k_block) tma_prefetch_desc(&tmap_sa);
    if constexpr (Cfg::StagedD) tma_prefetch_desc(tmap_d);
  }
  if constexpr (CM > 1)
    cluster_sync();  // peers' barriers exist before anyone signals them
  else
    __syncthreads();

  const int tiles_m = (m + BM - 1) / BM;
  const int tiles_n = (n + BN - 1) / BN;
  const int groups_m = (tiles_m + CM - 1) / CM;  // tile rows in units of clusters
  const int tiles = groups_m * tiles_n;          // work items, one per cluster
  const int k_blocks = (k + BK - 1) / BK;
  const int first_tile = blockIdx.x / CM, tile_step = gridDim.x / CM;
  // The last argument: the rows of A's box (dense, < BM for fewer rows than a tile), or the
  // tile rows of one group (grouped, whose A's box is always BM rows).
  const int a_rows = Cfg::Grouped ? BM : a_rows_or_group_tiles;
  const int group_tiles = Cfg::Grouped ? a_rows_or_group_tiles : 1;

  if (wg == 0) {
    regs_dealloc<k_producer_regs>();
    if (threadIdx.x == 0) {
      int s = 0;
      uint32_t phase = 0;
      // A's box is a_rows (< BM when M is: the rows past them are never stored, see launch_typed).
      const uint32_t bytes = a_rows * BK + Cfg::b_bytes + (k_block ? Cfg::sa_bytes : 0);
      MaskedTiles<BM> masked{masked_m, groups, m, tiles_n};  // Masked: the groups' tiles, as the consumers walk them
      for (int tile = first_tile; Masked ? masked.seek(tile) : tile < tiles; tile += tile_step) {
        int tm, tn;
        if constexpr (Masked) {
          tile_coords<k_group_m>(tile - masked.first, masked.tiles_m, tiles_n, tm, tn);  // tm: in its group
        } else {
          tile_coords<k_group_m / CM>(tile, groups_m, tiles_n, tm, tn);
          tm = tm * CM + rank;  // may pass the last tile row: TMA then fills zeros
        }
        // B's third coordinate
        const int group = Masked ? masked.group : Cfg::Grouped ? tm / group_tiles : 0;
        for (int kb = 0; kb < k_blocks; ++kb) {
          // empty here means every CTA of the cluster has released stage s
          mbar_wait(empty_bar(s), phase ^ 1);
          mbar_arrive_expect_tx(full_bar(s), bytes);
          if constexpr (Masked)
            tma_load_3d(stage_a(s), &tmap_a, kb * BK, tm * BM, group, full_bar(s));
          else
            tma_load_2d(stage_a(s), &tmap_a, kb * BK, tm * BM, full_bar(s));
          constexpr int part = Cfg::b_part_rows;
          if constexpr (CM > 1)
            tma_load_2d_multicast(stage_b(s) + rank * part * BK, &tmap_b, kb * BK, tn * BN + rank * part, full_bar(s),
                                  static_cast<uint16_t>((1u << CM) - 1));
          else if constexpr (Cfg::Grouped)
            tma_load_3d(stage_b(s), &tmap_b, kb * BK, tn * BN, group, full_bar(s));
          else
            tma_load_2d(stage_b(s), &tmap_b, kb * BK, tn * BN, full_bar(s));
          // The tile's row scales: its group's rows of the tall A's (Masked), else its own rows.
          if constexpr (k_block && Masked)
            tma_load_2d(sa_base + s * Cfg::sa_bytes, &tmap_sa, group * m + tm * BM, kb, full_bar(s));
          else if constexpr (k_block)
            tma_load_2d(sa_base + s * Cfg::sa_bytes, &tmap_sa, tm * BM, kb, full_bar(s));
          if (++s == S) {
            s = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    regs_alloc<k_consumer_regs>();
    const int cw = wg - 1;  // which 64-row half of the tile
    const int t = threadIdx.x % 128;
    const int warp = t / 32, lane = t % 32;
    const int row_in_tile = cw * 64 + warp * 16 + lane / 4;  // and row_in_tile + 8
    constexpr int W = Cfg::Waves;
    // acc2: the second K block in flight (Overlap); total[w]: the promoted sums of slice w
    float acc[BN / 2], acc2[BN / 2], total[W][BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = acc2[i] = 0.0f;
    int s = 0;
    uint32_t phase = 0;
    uint32_t ring = 0;  // Overlap: ring position (stage, phase) of the next K block to issue
    // Overlap: wait for K block `pos` of the ring and issue its wgmma into `into`.
    auto issue = [&](float(&into)[BN / 2], uint32_t pos) {
      const int st = static_cast<int>(pos % S);
      mbar_wait(full_bar(st), (pos / S) & 1u);
      wgmma_fence();
      const uint32_t a_base = stage_a(st) + cw * 64 * 128;
      const uint32_t b_base = stage_b(st);
#pragma unroll
      for (int kk = 0; kk < BK / 32; ++kk) {
        const uint64_t da = make_desc_sw128(a_base + kk * 32, 16, 1024);
        const uint64_t db = make_desc_sw128(b_base + kk * 32, 16, 1024);
        wgmma_fp8_ss<BN, T, T>(into, da, db, kk > 0 ? 1 : 0);
      }
      wgmma_commit();
    };
    // Stage release: lane 0 of each consumer warp arrives here, lane r at cluster peer r.
    auto release = [&](int stage) {
      __syncwarp();
      if constexpr (CM > 1) {
        if (lane < CM) mbar_arrive_cluster(empty_bar(stage), lane);
      } else {
        if (lane == 0) mbar_arrive(empty_bar(stage));
      }
    };
    // Overlap: K block `pos` has completed in `from`: read its A scales, release its stage,
    // add it into the total.
    auto retire = [&](float(&from)[BN / 2], uint32_t pos, float sb) {
      fence_regs(from);
      const int st = static_cast<int>(pos % S);
      float s0 = sb, s1 = sb;
      if constexpr (k_block) {
        const float* sa = reinterpret_cast<const float*>(smem_gen + Cfg::sa_offset + st * Cfg::sa_bytes);
        s0 *= sa[row_in_tile];
        s1 *= sa[row_in_tile + 8];
      }
      release(st);
      promote<BN / 8, BN / 8>(total[0], from, s0, s1, s0, s1, s0, s1);
    };
    MaskedTiles<BM> masked{masked_m, groups, m, tiles_n};  // Masked: the groups' tiles, as the producer walks them
    const bool store_issuer = threadIdx.x == 128;          // StagedD: the thread that stores D's slabs
    uint32_t d_stores = 0;                                 // StagedD: slabs stored so far
    for (int tile = first_tile; Masked ? masked.seek(tile) : tile < tiles; tile += tile_step) {
      int tm, tn;
      if constexpr (Masked) {
        tile_coords<k_group_m>(tile - masked.first, masked.tiles_m, tiles_n, tm, tn);
      } else {
        tile_coords<k_group_m / CM>(tile, groups_m, tiles_n, tm, tn);
        tm = tm * CM + rank;
      }
      // Grouped: this tile's group's scales of B (the dense gemm's layout, once per group).
      const float* group_sb =
          Cfg::Grouped ? scale_b + fp8_group_scale_b_offset(Mode, Masked ? masked.group : tm / group_tiles, n, k)
                       : scale_b;
#pragma unroll
      for (int w = 0; w < W; ++w)
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) total[w][i] = 0.0f;
      // block128: the tile's columns [0, 128 - sb_offset) lie in scale block sb_first of B
      // (its scales at sb_row), the next 128 in sb_first + 1 (sb_row1), the rest in
      // sb_first + 2 (sb_row2). A block past the last one of B holds only columns past N,
      // never stored, so its pointer repeats the one before rather than read beyond scale_b.
      const int sb_first = tn * BN / k_fp8_block, sb_offset = tn * BN % k_fp8_block;
      const float* sb_row = group_sb + static_cast<size_t>(sb_first) * k_blocks;
      const float* sb_row1 = (sb_first + 1) * k_fp8_block < n ? sb_row + k_blocks : sb_row;
      const float* sb_row2 = (sb_first + 2) * k_fp8_block < n ? sb_row + 2 * k_blocks : sb_row1;
      if constexpr (!Cfg::Promote) {
        // One accumulator over all of K, one K block of wgmma kept in flight: stage kb-1 is
        // released once its group has retired.
        int prev = -1;
        for (int kb = 0; kb < k_blocks; ++kb) {
          mbar_wait(full_bar(s), phase);
          fence_regs(acc);
          wgmma_fence();
          const uint32_t a0 = stage_a(s) + cw * 64 * 128;
          const uint32_t b0 = stage_b(s);
#pragma unroll
          for (int kk = 0; kk < BK / 32; ++kk) {
            const uint64_t da = make_desc_sw128(a0 + kk * 32, 16, 1024);
            const uint64_t db = make_desc_sw128(b0 + kk * 32, 16, 1024);
            wgmma_fp8_ss<BN, T, T>(acc, da, db, (kb > 0 || kk > 0) ? 1 : 0);
          }
          wgmma_commit();
          fence_regs(acc);
          if (prev >= 0) {
            wgmma_wait<1>();
            release(prev);
          }
          prev = s;
          if (++s == S) {
            s = 0;
            phase ^= 1;
          }
        }
        wgmma_wait<0>();
        fence_regs(acc);
        release(prev);
      } else if constexpr (Cfg::Overlap) {
        // Two K blocks in flight: the wgmma of block kb+1 run while block kb is promoted, so the
        // tensor cores never wait for this warpgroup's promotion.
        // Straight-line steady state (no branch between an issue and the wait that retires it,
        // so ptxas can keep the wgmma asynchronous), then a tail of one or two K blocks that
        // ends with nothing in flight.
        auto sb_at = [&](int kb) { return k_block ? __ldg(sb_row + kb) : 1.0f; };
        issue(acc, ring);
        int kb = 0;
        for (; kb + 2 < k_blocks; kb += 2) {
          const float sb0 = sb_at(kb), sb1 = sb_at(kb + 1);
          issue(acc2, ring + 1);
          wgmma_wait<1>();
          retire(acc, ring, sb0);
          issue(acc, ring + 2);
          wgmma_wait<1>();
          retire(acc2, ring + 1, sb1);
          ring += 2;
        }
        const float sb0 = sb_at(kb);
        if (kb + 1 < k_blocks) {
          const float sb1 = sb_at(kb + 1);
          issue(acc2, ring + 1);
          wgmma_wait<1>();
          retire(acc, ring, sb0);
          wgmma_wait<0>();
          retire(acc2, ring + 1, sb1);
          ring += 2;
        } else {
          wgmma_wait<0>();
          retire(acc, ring, sb0);
          ring += 1;
        }
      } else {
        for (int kb = 0; kb < k_blocks; ++kb) {
          float sb = 1.0f, sb1 = 1.0f, sb2 = 1.0f;
          if constexpr (k_block) {
            sb = __ldg(sb_row + kb);  // in flight during the wgmma
            if constexpr (Cfg::sb_blocks > 1) sb1 = __ldg(sb_row1 + kb);
            if constexpr (Cfg::sb_blocks > 2) sb2 = __ldg(sb_row2 + kb);
          }
          mbar_wait(full_bar(s), phase);
          float first_sa[W][2];  // ScalesFirst: this K block's A scales, read before any wgmma is issued
          if constexpr (k_block && Cfg::ScalesFirst) {
            const float* sa = reinterpret_cast<const float*>(smem_gen + Cfg::sa_offset + s * Cfg::sa_bytes);
#pragma unroll
            for (int w = 0; w < W; ++w) {
              first_sa[w][0] = sa[w * 128 + row_in_tile];
              first_sa[w][1] = sa[w * 128 + row_in_tile + 8];
            }
          }
          // Slice w: the warpgroup's 64 rows at w * 128 + cw * 64, into the one accumulator,
          // promoted into total[w] before the next slice is issued; the stage is released after
          // the last slice's wgmma have read it.
#pragma unroll
          for (int w = 0; w < W; ++w) {
            wgmma_fence();
            const uint32_t a0 = stage_a(s) + cw * 64 * 128 + w * 128 * 128;
            const uint32_t b0 = stage_b(s);
#pragma unroll
            for (int kk = 0; kk < BK / 32; ++kk) {
              const uint64_t da = make_desc_sw128(a0 + kk * 32, 16, 1024);
              const uint64_t db = make_desc_sw128(b0 + kk * 32, 16, 1024);
              wgmma_fp8_ss<BN, T, T>(acc, da, db, kk > 0 ? 1 : 0);
            }
            wgmma_commit();
            wgmma_wait<0>();
            fence_regs(acc);
            float sa0 = 1.0f, sa1 = 1.0f;
            if constexpr (k_block && Cfg::ScalesFirst) {
              sa0 = first_sa[w][0];
              sa1 = first_sa[w][1];
            } else if constexpr (k_block) {
              const float* sa = reinterpret_cast<const float*>(smem_gen + Cfg::sa_offset + s * Cfg::sa_bytes);
              sa0 = sa[w * 128 + row_in_tile];
              sa1 = sa[w * 128 + row_in_tile + 8];
            }
            if (w == W - 1) {
              release(s);
              if (++s == S) {
                s = 0;
                phase ^= 1;
              }
            }
            if constexpr (k_block && Cfg::sb_blocks > 1)
              promote_at<BN, Cfg::sb_offset_step>(sb_offset, total[w], acc, sa0 * sb, sa1 * sb, sa0 * sb1, sa1 * sb1,
                                                  sa0 * sb2, sa1 * sb2);
            else
              promote<BN / 8, BN / 8>(total[w], acc, sa0 * sb, sa1 * sb, sa0 * sb, sa1 * sb, sa0 * sb, sa1 * sb);
          }
        }
      }

      // Epilogue. Accumulator layout of m64nN: per 8-column group g a thread holds rows r and
      // r+8, columns 8g + 2*(lane%4) and +1.
      // Masked: rows of the tile's group, stored up to its count, their scales the tall A's.
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const float(&res)[BN / 2] = pick<Cfg::Promote>(total[w], acc);  // the K-long sums
        const int r0 = tm * BM + w * 128 + row_in_tile, r1 = r0 + 8;
        const int rows_end = Masked ? masked.rows : m;
        __nv_bfloat16* const d_rows = Masked ? d + static_cast<size_t>(masked.group) * m * n : d;
        const float* const sa_rows = Masked ? scale_a + static_cast<size_t>(masked.group) * m : scale_a;
        float a0 = 1.0f, a1 = 1.0f;
        if constexpr (Mode == Fp8Scale::tensor) a0 = a1 = __ldg(scale_a) * __ldg(group_sb);
        if constexpr (Mode == Fp8Scale::row) {
          a0 = r0 < rows_end ? __ldg(sa_rows + r0) : 0.0f;
          a1 = r1 < rows_end ? __ldg(sa_rows + r1) : 0.0f;
        }
        if constexpr (Cfg::StagedD) {
          // One 64-column slab at a time: both consumer warpgroups write the slice's 128 rows
          // into the slab (128-byte swizzle, as D's tensor map reads it; a thread's row r has
          // r % 8 = lane / 4), then one thread stores it by TMA, clipped at M and N. The slab
          // is written again only once the store before has read it.
#pragma unroll
          for (int slab = 0; slab < BN / 64; ++slab) {
            if (store_issuer && d_stores > 0) bulk_wait_read<0>();
            named_bar_sync(1, 128 * k_consumers);
#pragma unroll
            for (int g = 0; g < 8; ++g) {
              const int col = tn * BN + slab * 64 + g * 8 + 2 * (lane % 4);
              float b0 = 1.0f, b1 = 1.0f;
              if constexpr (Mode == Fp8Scale::row) {
                b0 = col < n ? __ldg(group_sb + col) : 0.0f;
                b1 = col + 1 < n ? __ldg(group_sb + col + 1) : 0.0f;
              }
              const int a = (slab * 8 + g) * 4;
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const float ah = h ? a1 : a0;
                const uint32_t addr = d_base + (row_in_tile + h * 8) * 128 + ((g ^ (lane / 4)) << 4) + (lane % 4) * 4;
                st_shared_u32(addr, pack2<__nv_bfloat16>(res[a + 2 * h] * ah * b0, res[a + 2 * h + 1] * ah * b1));
              }
            }
            fence_proxy_async_smem();
            named_bar_sync(1, 128 * k_consumers);
            if (store_issuer) {
              tma_store_2d(tmap_d, d_base, tn * BN + slab * 64, tm * BM + w * 128);
              bulk_commit();
            }
            ++d_stores;
          }
          continue;
        }
        const bool pairs = (n % 2 == 0) && (reinterpret_cast<uintptr_t>(d) % 4 == 0);
#pragma unroll
        for (int g = 0; g < BN / 8; ++g) {
          const int col = tn * BN + g * 8 + 2 * (lane % 4);
          float b0 = 1.0f, b1 = 1.0f;
          if constexpr (Mode == Fp8Scale::row) {
            b0 = col < n ? __ldg(group_sb + col) : 0.0f;
            b1 = col + 1 < n ? __ldg(group_sb + col + 1) : 0.0f;
          }
          if (r0 < rows_end) store_pair(d_rows, n, r0, col, res[g * 4] * a0 * b0, res[g * 4 + 1] * a0 * b1, pairs);
          if (r1 < rows_end) store_pair(d_rows, n, r1, col, res[g * 4 + 2] * a1 * b0, res[g * 4 + 3] * a1 * b1, pairs);
        }
      }
    }
    if constexpr (Cfg::StagedD)
      if (store_issuer) bulk_wait<0>();  // the last slab has reached D before the CTA's shared memory goes
  }
  // No CTA may leave while a peer can still multicast into its shared memory or arrive on its
  // barriers.
  if constexpr (CM > 1) cluster_sync();
#endif
}

template <class Cfg, class T, Fp8Scale Mode>
__global__ void __launch_bounds__(k_threads, 1)
    gemm_fp8_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                    const __grid_constant__ CUtensorMap tmap_sa, __nv_bfloat16* __restrict__ d,
                    const float* __restrict__ scale_a, const float* __restrict__ scale_b, int m, int n, int k,
                    int a_rows_or_group_tiles) {
  static_assert(!Cfg::StagedD, "gemm_fp8_staged_kernel stores D through its tensor map");
  gemm_fp8_body<Cfg, T, Mode, false>(tmap_a, tmap_b, tmap_sa, d, scale_a, scale_b, m, n, k, a_rows_or_group_tiles,
                                     nullptr, 0, nullptr);
}

// The same with D stored through tmap_d (Cfg::StagedD: [M, N] bf16, boxes of 128 rows x 64
// columns, 128-byte swizzle; the contiguous grouped layout's [G*M, N]). The last argument as
// gemm_fp8_kernel's.
template <class Cfg, class T, Fp8Scale Mode>
__global__ void __launch_bounds__(k_threads, 1)
    gemm_fp8_staged_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                           const __grid_constant__ CUtensorMap tmap_sa, const __grid_constant__ CUtensorMap tmap_d,
                           __nv_bfloat16* __restrict__ d, const float* __restrict__ scale_a,
                           const float* __restrict__ scale_b, int m, int n, int k, int a_rows_or_group_tiles) {
  static_assert(Cfg::StagedD, "the dense or contiguous grouped kernel with D staged");
  gemm_fp8_body<Cfg, T, Mode, false>(tmap_a, tmap_b, tmap_sa, d, scale_a, scale_b, m, n, k, a_rows_or_group_tiles,
                                     nullptr, 0, &tmap_d);
}

// The masked layout: A [groups][m][k] as a 3-D map, B [groups][n][k], D [groups][m][n];
// masked_m[g] (device memory) of group g's m rows are valid, and only their tiles run and only
// they are stored. Scales as the contiguous layout's (A's of the [groups*m] rows).
template <class Cfg, class T, Fp8Scale Mode>
__global__ void __launch_bounds__(k_threads, 1)
    gemm_fp8_masked_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                           const __grid_constant__ CUtensorMap tmap_sa, __nv_bfloat16* __restrict__ d,
                           const float* __restrict__ scale_a, const float* __restrict__ scale_b,
                           const int* __restrict__ masked_m, int groups, int m, int n, int k) {
  static_assert(!Cfg::StagedD, "the masked layout stores a group's valid rows from registers");
  gemm_fp8_body<Cfg, T, Mode, true>(tmap_a, tmap_b, tmap_sa, d, scale_a, scale_b, m, n, k, 0, masked_m, groups,
                                    nullptr);
}

// ---- host side --------------------------------------------------------------------------------

// Cfg::StagedD (the dense and contiguous grouped instances alike): D is stored by TMA, whose
// 16-byte row strides need N a multiple of 8 and D 16-byte aligned. Why not, or "".
template <class Cfg>
std::string staged_d_refusal(int n, const void* d) {
  if (!Cfg::StagedD || (n % 8 == 0 && reinterpret_cast<uintptr_t>(d) % 16 == 0)) return "";
  return "N=" + std::to_string(n) +
         ": this instance stores D by TMA, which needs N a multiple of 8 and D 16-byte aligned; the instances "
         "without _sd store any N";
}

// The kernel a launcher runs, and D's map where it is staged ([rows, N] bf16, boxes of one
// slab's 128 rows x 64 columns; unused otherwise).
template <class Cfg, class T, Fp8Scale Mode>
constexpr auto dense_or_staged_kernel() {
  if constexpr (Cfg::StagedD)
    return gemm_fp8_staged_kernel<Cfg, T, Mode>;
  else
    return gemm_fp8_kernel<Cfg, T, Mode>;
}
template <class Cfg>
bool make_staged_d_map(CUtensorMap* map, void* d, int rows, int n) {
  return !Cfg::StagedD || tma_host::make_tmap(map, d, rows, n, 128, DType::bf16);
}

template <class Cfg>
std::string supports(const Problem& p) {
  if (p.family != Family::gemm_fp8) return "not a gemm_fp8 problem";
  const GemmFp8Args& g = p.gemm_fp8;
  if (g.dtype != DType::e4m3 && g.dtype != DType::e5m2)
    return std::string("dtype ") + dtype_name(g.dtype) + " not supported: gemm_fp8.wgmma_tma takes e4m3 or e5m2";
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return "M, N and K must be positive";
  if (g.k % 16 != 0)
    return "K=" + std::to_string(g.k) +
           " is not a multiple of 16: TMA needs 16-byte row strides of A and B; pad K with zeros to a multiple of 16";
  // block128_ue8m0 hands its power-of-two scales over in fp32 too (block128's layout, the same
  // values exactly): this kernel reads those, so the two block modes run the same code.
  const bool block = fp8_scale_is_block(g.scale);
  if (!Cfg::Promote && block)
    return "block scales need the promoting instances (this one accumulates over all of K in the tensor cores); "
           "use gemm_fp8.wgmma_tma.128x128x128_s6";
  if (block && g.k % k_fp8_block != 0)
    return "K=" + std::to_string(g.k) +
           " is not a multiple of 128: block scales cover whole 128-wide K blocks; pad K with zeros (scale 1) to "
           "a multiple of 128";
  auto misaligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 != 0; };
  if (misaligned(g.a) || misaligned(g.b)) return "A and B must be 16-byte aligned for TMA";
  if (block && misaligned(g.scale_a)) return "block scale_a must be 16-byte aligned for TMA";
  return staged_d_refusal<Cfg>(g.n, g.d);
}

// CTAs of this kernel that fit on the device at once (whole clusters): the persistent grid
// must not exceed it, or some clusters would wait for others to finish all their tiles.
template <class Cfg>
cudaError_t resident_ctas(int* ctas) {
  static int cached[64] = {};
  int dev = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err != cudaSuccess) return err;
  if (dev < 64 && cached[dev] > 0) {
    *ctas = cached[dev];
    return cudaSuccess;
  }
  int sms = 0;
  if ((err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess) return err;
  int result = sms;
  if constexpr (Cfg::ClusterM > 1) {
    auto kernel = gemm_fp8_kernel<Cfg, __nv_fp8_e4m3, Fp8Scale::tensor>;  // same resources in every mode
    if ((err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes)) !=
        cudaSuccess)
      return err;
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = Cfg::ClusterM;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3(sms / Cfg::ClusterM * Cfg::ClusterM);
    cfg.blockDim = dim3(k_threads);
    cfg.dynamicSmemBytes = Cfg::smem_bytes;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if ((err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg)) != cudaSuccess) return err;
    if (clusters < 1) return cudaErrorInvalidConfiguration;
    result = clusters * Cfg::ClusterM;
  }
  if (dev < 64) cached[dev] = result;
  *ctas = result;
  return cudaSuccess;
}

// block128: A's scales through TMA as [K / 128 rows, `rows` columns], rows
// fp8_scale_a_stride(rows) floats apart, a box of one K block's scales of BM rows. The dense,
// contiguous grouped (rows G*M) and masked grouped launchers' map.
template <class Cfg>
bool make_scale_a_map(CUtensorMap* map, const float* scale_a, int rows, int k) {
  const long long kblocks = k / k_fp8_block;
  return tma_host::make_tmap_2d(map, scale_a, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, kblocks, rows,
                                4LL * fp8_scale_a_stride(rows), 1, Cfg::BM, CU_TENSOR_MAP_SWIZZLE_NONE);
}

template <class Cfg, class T, Fp8Scale Mode>
cudaError_t launch_typed(const GemmFp8Args& g, cudaStream_t stream) {
  CUtensorMap ta, tb, tsa;
  // Fewer rows than a tile (decode): A's box covers only the rows there are, rounded up to a
  // whole 8-row swizzle atom, which lands them where a full box would. The tile's other rows
  // keep whatever the stage held; their results are never stored (rows past M are masked), and
  // a row of D depends on its own row of A alone. A box mostly past the tensor's end is
  // costly: TMA's zero fill of the missing rows made the 128x64 tile slower at M = 64 than at
  // M = 128 (69.6 against 52.7 us at N 7168, K 16384, block scales, on an H200).
  const int a_rows = g.m < Cfg::BM ? (g.m + 7) / 8 * 8 : Cfg::BM;
  if (!tma_host::make_tmap_8bit_sw128(&ta, g.a, g.m, g.k, a_rows) ||
      !tma_host::make_tmap_8bit_sw128(&tb, g.b, g.n, g.k, Cfg::b_part_rows))
    return cudaErrorInvalidValue;
  tsa = ta;  // unused unless block128
  if constexpr (Mode == Fp8Scale::block128)
    if (!make_scale_a_map<Cfg>(&tsa, g.scale_a, g.m, g.k)) return cudaErrorInvalidValue;
  CUtensorMap td;  // StagedD: D
  if (!make_staged_d_map<Cfg>(&td, g.d, g.m, g.n)) return cudaErrorInvalidValue;
  auto kernel = dense_or_staged_kernel<Cfg, T, Mode>();
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  int ctas = 0;
  if ((err = resident_ctas<Cfg>(&ctas)) != cudaSuccess) return err;
  constexpr int CM = Cfg::ClusterM;
  const long long items =
      static_cast<long long>((g.m + Cfg::BM * CM - 1) / (Cfg::BM * CM)) * ((g.n + Cfg::BN - 1) / Cfg::BN);
  const int grid = static_cast<int>(items < ctas / CM ? items : ctas / CM) * CM;
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = CM;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(k_threads);
  cfg.dynamicSmemBytes = Cfg::smem_bytes;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = CM > 1 ? 1 : 0;
  if constexpr (Cfg::StagedD)
    err = cudaLaunchKernelEx(&cfg, kernel, ta, tb, tsa, td, static_cast<__nv_bfloat16*>(g.d), g.scale_a, g.scale_b, g.m,
                             g.n, g.k, a_rows);
  else
    err = cudaLaunchKernelEx(&cfg, kernel, ta, tb, tsa, static_cast<__nv_bfloat16*>(g.d), g.scale_a, g.scale_b, g.m,
                             g.n, g.k, a_rows);
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

template <class Cfg, class T>
cudaError_t launch_mode(const GemmFp8Args& g, cudaStream_t stream) {
  switch (g.scale) {
    case Fp8Scale::tensor: return launch_typed<Cfg, T, Fp8Scale::tensor>(g, stream);
    case Fp8Scale::row: return launch_typed<Cfg, T, Fp8Scale::row>(g, stream);
    case Fp8Scale::block128:
    case Fp8Scale::block128_ue8m0:  // its fp32 scales, in block128's layout
      if constexpr (Cfg::Promote)
        return launch_typed<Cfg, T, Fp8Scale::block128>(g, stream);
      else
        return cudaErrorInvalidValue;  // supports() refuses it
  }
  return cudaErrorInvalidValue;
}

template <class Cfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  if (p.gemm_fp8.dtype == DType::e5m2) return launch_mode<Cfg, __nv_fp8_e5m2>(p.gemm_fp8, stream);
  return launch_mode<Cfg, __nv_fp8_e4m3>(p.gemm_fp8, stream);
}

template <class Cfg>
std::string config_json() {
  return "{\"bm\":" + std::to_string(Cfg::BM) + ",\"bn\":" + std::to_string(Cfg::BN) +
         ",\"bk\":" + std::to_string(Cfg::BK) + ",\"stages\":" + std::to_string(Cfg::Stages) +
         ",\"consumer_warpgroups\":" + std::to_string(k_consumers) + ",\"threads\":" + std::to_string(k_threads) +
         ",\"promote_every_k\":" + std::to_string(Cfg::Promote ? k_fp8_block : 0) +
         (Cfg::Promote ? ",\"scales\":[\"tensor\",\"row\",\"block128\",\"block128_ue8m0\"]"
                       : ",\"scales\":[\"tensor\",\"row\"]") +
         ",\"cluster_m\":" + std::to_string(Cfg::ClusterM) + ",\"k_blocks_in_flight\":" + (Cfg::Overlap ? "2" : "1") +
         (Cfg::ScalesFirst ? ",\"scales_before_issue\":true" : "") +
         (Cfg::StagedD ? ",\"d_through_tma\":true,\"run_n_multiple\":8" : "") + ",\"persistent\":true}";
}

template <class Cfg>
Instance make_instance(const char* name) {
  return Instance{
      Family::gemm_fp8,           "wgmma_tma",        name,           {"wgmma", "tma", "mbarrier", "setmaxnreg"},
      {DType::e4m3, DType::e5m2}, config_json<Cfg>(), &supports<Cfg>, &launch<Cfg>};
}

}  // namespace
}  // namespace kport::kernels::gemm_fp8_wgmma_tma
