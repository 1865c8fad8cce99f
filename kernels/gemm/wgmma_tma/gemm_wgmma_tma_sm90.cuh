// Hopper gemm: C[M,N] = A[M,K] * B[K,N], row-major, bf16/fp16 in, fp32 accumulate, C in the
// input type. Target sm_90a only (wgmma, setmaxnreg).
//
// Algorithm: a persistent grid (one CTA per SM) walks output tiles in a grouped order, so the
// tiles in flight share rows of A and columns of B in L2. Each CTA has three warpgroups. The
// producer warpgroup gives registers away (setmaxnreg.dec) and one of its threads streams
// BMxBK tiles of A and BKxBN tiles of B into a ring of shared-memory stages with TMA
// (128-byte swizzle), each stage guarded by a "full" and an "empty" mbarrier. The two consumer
// warpgroups take the registers (setmaxnreg.inc), each owns 64 rows of the tile and issues
// wgmma m64nBNk16 over the stage (A K-major, B MN-major through the transpose bit), keeping
// one k-block of wgmma in flight before releasing the previous stage. The epilogue converts the
// fp32 accumulators, stages 64-column slabs of C in shared memory and writes them with TMA
// stores that drain while the next tile's wgmma run.
// Optionally (ClusterM = 2) two CTAs on vertically adjacent tiles form a cluster: each loads
// its own A tile and half of the shared B tile, multicast to both, and a stage is refilled
// only when the consumers of both CTAs have released it.
// Optionally (SplitK = 2, the _k2 instances) two CTAs of a cluster share one output tile and
// split its K blocks in halves: the second CTA adds its fp32 partial tile into the first's
// shared memory (distributed shared memory, one mbarrier each way per tile), and the first
// adds it to its own and stores C. A skinny problem (M = 128, N = K = 8192: 64 tiles of
// 128x128 for 132 SMs) then runs on twice as many SMs, without a workspace or a second kernel.
// A 64-row tile (BM = 64, the skinny-M instances) has one consumer warpgroup; a 64-column
// one (BN = 64) is one slab of B and C, twice the split-K CTAs where N is 4096. ShortA loads
// A's box only as tall as M when M is below the tile.
//
// Optionally (Grouped, grouped_gemm's instances) the problem is G gemms in the contiguous
// layout: A and C are [G*M, K] and [G*M, N] with each group's M a multiple of BM, so every
// tile row belongs to one group and the tile walk is the plain gemm's over G*M rows; B is a
// 3-D map [G][K][N] and a tile's B loads take its group, tile row / (M / BM), as the third
// coordinate, so the K edge of one group's B is zero-filled rather than read from the next.
// The masked layout (gemm_wgmma_tma_masked_kernel, grouped_gemm's decode path) is the same
// gemm over A [G][M][K] and C [G][M][N] as 3-D maps, so M is free and no tile reaches into
// another group; only tiles holding some of group g's first masked_m[g] rows exist
// (MaskedTiles, counts read on the device), walked group after group.
//
// Optionally (CpAsync, the _ca8 instance) rows that are whole 8 bytes but not 16 (K or N = 2500:
// 5000-byte rows, which TMA cannot describe): all 128 threads of the producer warpgroup copy the
// stages in 8-byte pieces with cp.async, into the same 128-byte-swizzled layout, and arrive on
// the stage's full barrier as their copies land; the consumers fence the async proxy before
// their wgmma read it, and store C from the staged slabs in 8-byte pieces themselves.
//
// Constraints: K and N multiples of 8 (TMA needs 16-byte global row strides) and 16-byte
// aligned A, B and C (CpAsync: multiples of 4 and 8-byte aligned); M is free. Edges in M, N and
// K are handled by TMA: zero fill on loads, clipping on stores (CpAsync: by the copies' bounds).
//
// This header holds the kernel and its launch-time helpers, included by the gemm instances
// (gemm_wgmma_tma_sm90.cu) and by grouped_gemm.wgmma_tma; each unit instantiates its own.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "common/convert.cuh"
#include "common/cp_async_sm80.cuh"
#include "common/dsmem_sm90.cuh"
#include "common/masked_tiles.cuh"
#include "common/mbarrier_sm90.cuh"
#include "common/smem.cuh"
#include "common/sync_sm90.cuh"
#include "common/tma_host_sm90.h"
#include "common/tma_sm90.cuh"
#include "common/wgmma_sm90.cuh"
#include "kport/kernels/registry.h"

namespace kport::kernels::gemm_wgmma_tma {
namespace {

using namespace kport::kernels::sm90;

constexpr int k_consumers = 2;                      // consumer warpgroups of a 128-row tile
constexpr int k_threads = 128 * (1 + k_consumers);  // + one producer warpgroup
constexpr int k_group_m = 8;                        // tile rows per L2 group
constexpr int k_producer_regs = 40;
constexpr int k_consumer_regs = 232;

template <int BM_, int BN_, int BK_, int Stages_, int ClusterM_, int SplitK_ = 1, bool Grouped_ = false,
          bool ShortA_ = false, bool CpAsync_ = false>
struct Config {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, Stages = Stages_, ClusterM = ClusterM_, SplitK = SplitK_;
  static constexpr bool Grouped = Grouped_;
  static_assert(!Grouped || (ClusterM == 1 && SplitK == 1), "grouped tiles take neither B multicast nor split K");
  static_assert(SplitK == 1 || (SplitK == 2 && ClusterM == 1), "K split over a 2-CTA cluster, without B multicast");
  static constexpr int ClusterSize = ClusterM * SplitK;
  // Consumer warpgroups: each owns 64 rows of the tile (one for the 64-row tiles of skinny M).
  static constexpr int Consumers = BM / 64;
  static constexpr int Threads = 128 * (1 + Consumers);  // + one producer warpgroup
  static_assert(BM == 64 || BM == 128, "one or two consumer warpgroups of 64 rows");
  // ShortA: with fewer rows than a tile (M < BM), A's box holds only the rows there are,
  // rounded up to a whole 8-row swizzle atom (the launch passes them as the last argument),
  // instead of a whole tile mostly filled with zeros by TMA. The tile's other rows keep what
  // the stage held; their rows of C are never stored (the store clips at M) and a row of C
  // depends on its own row of A alone.
  static constexpr bool ShortA = ShortA_;
  static_assert(!ShortA || !Grouped, "a grouped tile's rows are always whole");
  // CpAsync: A, B and C in 8-byte pieces by the threads (rows of 8-byte multiples), not TMA.
  static constexpr bool CpAsync = CpAsync_;
  static_assert(!CpAsync || (ClusterM == 1 && !Grouped && !ShortA),
                "the copied stages are one CTA's own (no multicast), its C stored by its consumers");
  static_assert(BN % 64 == 0 && BN <= 256, "whole 64-column slabs of B and C, one wgmma per k16");
  static_assert(BK == 64, "one 128-byte swizzle row of 16-bit elements per K block");
  static_assert(Stages >= 2 && Stages <= 8, "pipeline depth");
  static_assert(ClusterM == 1 || ClusterM == 2, "CTAs along M sharing one B tile");
  static_assert((BN / 64) % ClusterM == 0, "each CTA of a cluster multicasts whole B slabs");
  static constexpr int a_bytes = BM * BK * 2;
  static constexpr int b_chunk_bytes = BK * 64 * 2;  // one 64-column slab of B
  static constexpr int b_bytes = BK * BN * 2;
  static constexpr int stage_bytes = a_bytes + b_bytes;
  static_assert(a_bytes % 1024 == 0 && b_chunk_bytes % 1024 == 0, "swizzle atoms are 1 KiB");
  static constexpr int c_chunk_bytes = BM * 64 * 2;  // one 64-column slab of C, staged
  // SplitK: the second CTA's fp32 partial tile, received by the first.
  static constexpr int red_bytes = SplitK == 2 ? BM * BN * 4 : 0;
  // stages, two C staging buffers, the partial tile, the barriers (two per stage, two for the
  // partial tile), plus slack to align the base to 1 KiB
  static constexpr int smem_bytes = Stages * stage_bytes + 2 * c_chunk_bytes + red_bytes + 2 * Stages * 8 + 16 + 1024;
  static_assert(smem_bytes <= 227 * 1024, "fits the sm_90 per-block shared memory");
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

// The kernels' body. m is the rows of A and C (G*M when grouped, each group's when Masked);
// group_tiles_m, the tile rows of one group (M / BM), is read only when Cfg::Grouped and not
// Masked, and the rows of A's box in its place when Cfg::ShortA; masked_m and groups only when
// Masked.
// With Cfg::CpAsync the tensor maps are null and a, b, c are the matrices; otherwise those are
// null.
template <class Cfg, class T, bool Masked>
__device__ __forceinline__ void gemm_wgmma_tma_body(const CUtensorMap* tmap_a, const CUtensorMap* tmap_b,
                                                    const CUtensorMap* tmap_c, int m, int n, int k, int group_tiles_m,
                                                    const int* masked_m, int groups, const T* a, const T* b, T* c) {
#if KPORT_WGMMA_ENABLED
  static_assert(!Masked || (Cfg::Grouped && Cfg::ClusterSize == 1), "masked tiles are grouped ones");
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, S = Cfg::Stages;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t smem_base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t c_base = smem_base + S * Cfg::stage_bytes;
  const uint32_t red_base = c_base + 2 * Cfg::c_chunk_bytes;
  const uint32_t bar_base = red_base + Cfg::red_bytes;
  auto full_bar = [&](int s) { return bar_base + 8u * s; };
  auto empty_bar = [&](int s) { return bar_base + 8u * (S + s); };
  // SplitK: red_full (in the first CTA) completes when the second CTA's partial tile has
  // landed; red_empty (in the second) when the first has read it.
  const uint32_t red_full = bar_base + 16u * S, red_empty = red_full + 8u;
  auto stage_a = [&](int s) { return smem_base + s * Cfg::stage_bytes; };
  auto stage_b = [&](int s) { return smem_base + s * Cfg::stage_bytes + Cfg::a_bytes; };

  constexpr int CM = Cfg::ClusterM, CS = Cfg::ClusterSize;
  const int wg = threadIdx.x / 128;
  // The CTAs of a cluster take vertically adjacent tiles (same columns of C): each loads its
  // own A and 1/CM of the B tile, multicast to all of them. With SplitK they take the same
  // tile, and CTA `kr` its kr-th share of the K blocks.
  const uint32_t crank = CS > 1 ? cluster_rank() : 0;
  const uint32_t rank = CM > 1 ? crank : 0;
  const uint32_t kr = Cfg::SplitK > 1 ? crank : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full_bar(s), Cfg::CpAsync ? 128 : 1);  // CpAsync: every producer thread's copies
      // one arrival per consumer warp of every CTA whose B slabs land here
      mbar_init(empty_bar(s), Cfg::Consumers * 4 * CM);
    }
    if constexpr (Cfg::SplitK > 1) {
      // one arrival per consumer warp of the peer
      mbar_init(red_full, Cfg::Consumers * 4);
      mbar_init(red_empty, Cfg::Consumers * 4);
    }
    mbar_fence_init();
    if constexpr (!Cfg::CpAsync) {
      tma_prefetch_desc(tmap_a);
      tma_prefetch_desc(tmap_b);
      tma_prefetch_desc(tmap_c);
    }
  }
  if constexpr (CS > 1)
    cluster_sync();  // peers' barriers exist before anyone signals them
  else
    __syncthreads();

  const int tiles_m = (m + BM - 1) / BM;
  const int tiles_n = (n + BN - 1) / BN;
  const int groups_m = (tiles_m + CM - 1) / CM;  // tile rows in units of clusters
  const int tiles = groups_m * tiles_n;          // work items, one per cluster
  const int k_blocks = (k + BK - 1) / BK;
  const int first_tile = blockIdx.x / CS, tile_step = gridDim.x / CS;
  // This CTA's K blocks of every tile (all of them unless SplitK); the second half may be
  // empty (K of one block), and its partial tile is then zero.
  const int k_share = (k_blocks + Cfg::SplitK - 1) / Cfg::SplitK;
  const int kb_begin = min(k_blocks, static_cast<int>(kr) * k_share), kb_end = min(k_blocks, kb_begin + k_share);

  // ShortA: the bytes a stage's loads bring (A's box may be shorter than the tile)
  const uint32_t stage_tx =
      Cfg::ShortA ? static_cast<uint32_t>(group_tiles_m * BK * 2 + Cfg::b_bytes) : uint32_t{Cfg::stage_bytes};
  if (wg == 0) {
    regs_dealloc<k_producer_regs>();
    if constexpr (Cfg::CpAsync) {
      // Thread t copies 8-byte piece q = t % 16 of 128-byte rows t / 16 + 8 i of A's tile and of
      // each 64-column slab of B's; those rows are all r0 mod 8, so the swizzled offset of its
      // piece within a row is the same for all of them. A piece is wholly inside or outside the
      // matrix (K and N multiples of 4); outside, it is zero-filled and nothing is read.
      const int q = threadIdx.x % 16, r0 = threadIdx.x / 16;
      const uint32_t piece = (((q >> 1) ^ r0) << 4) | ((q & 1) << 3);
      int s = 0;
      uint32_t phase = 0;
      for (int tile = first_tile; tile < tiles; tile += tile_step) {
        int tm, tn;
        tile_coords<k_group_m>(tile, groups_m, tiles_n, tm, tn);
        for (int kb = kb_begin; kb < kb_end; ++kb) {
          mbar_wait(empty_bar(s), phase ^ 1);
          const int kc = kb * BK + q * 4;
          const uint32_t sa = stage_a(s) + r0 * 128 + piece;
#pragma unroll 4
          for (int i = 0; i < BM / 8; ++i) {
            const int row = tm * BM + r0 + 8 * i;
            const bool in = row < m && kc < k;
            cp_async_8_sm80(sa + i * 1024, in ? a + static_cast<size_t>(row) * k + kc : a, in);
          }
#pragma unroll 1
          for (int j = 0; j < BN / 64; ++j) {
            const int col = tn * BN + j * 64 + q * 4;
            const uint32_t sb = stage_b(s) + j * Cfg::b_chunk_bytes + r0 * 128 + piece;
#pragma unroll 4
            for (int i = 0; i < BK / 8; ++i) {
              const int row = kb * BK + r0 + 8 * i;
              const bool in = row < k && col < n;
              cp_async_8_sm80(sb + i * 1024, in ? b + static_cast<size_t>(row) * n + col : b, in);
            }
          }
          mbar_arrive_on_cp_async(full_bar(s));
          if (++s == S) {
            s = 0;
            phase ^= 1;
          }
        }
      }
    } else if (threadIdx.x == 0) {
      int s = 0;
      uint32_t phase = 0;
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
        const int group = Masked ? masked.group : Cfg::Grouped ? tm / group_tiles_m : 0;
        for (int kb = kb_begin; kb < kb_end; ++kb) {
          // empty here means every CTA of the cluster has released stage s
          mbar_wait(empty_bar(s), phase ^ 1);
          mbar_arrive_expect_tx(full_bar(s), stage_tx);
          if constexpr (Masked)
            tma_load_3d(stage_a(s), tmap_a, kb * BK, tm * BM, group, full_bar(s));
          else
            tma_load_2d(stage_a(s), tmap_a, kb * BK, tm * BM, full_bar(s));
          constexpr int slabs = BN / 64 / CM;
#pragma unroll
          for (int jj = 0; jj < slabs; ++jj) {
            const int j = rank * slabs + jj;
            const uint32_t dst = stage_b(s) + j * Cfg::b_chunk_bytes;
            if constexpr (CM > 1)
              tma_load_2d_multicast(dst, tmap_b, tn * BN + j * 64, kb * BK, full_bar(s),
                                    static_cast<uint16_t>((1u << CM) - 1));
            else if constexpr (Cfg::Grouped)
              tma_load_3d(dst, tmap_b, tn * BN + j * 64, kb * BK, group, full_bar(s));
            else
              tma_load_2d(dst, tmap_b, tn * BN + j * 64, kb * BK, full_bar(s));
          }
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
    float acc[BN / 2];
    int s = 0;
    uint32_t phase = 0;
    const bool store_issuer = threadIdx.x == 128;
    uint32_t c_slabs = 0;     // C slabs staged so far; slab i uses buffer i % 2
    uint32_t tiles_done = 0;  // SplitK: partial tiles handed over, the parity of red_full/red_empty
    MaskedTiles<BM> masked{masked_m, groups, m, tiles_n};  // Masked: the groups' tiles, as the producer walks them
    // Stage release: lane 0 of each consumer warp arrives here, lane r at cluster peer r.
    auto release = [&](int stage) {
      if constexpr (CM > 1) {
        if (lane < CM) mbar_arrive_cluster(empty_bar(stage), lane);
      } else {
        if (lane == 0) mbar_arrive(empty_bar(stage));
      }
    };
    for (int tile = first_tile; Masked ? masked.seek(tile) : tile < tiles; tile += tile_step) {
      int tm, tn;
      if constexpr (Masked) {
        tile_coords<k_group_m>(tile - masked.first, masked.tiles_m, tiles_n, tm, tn);
      } else {
        tile_coords<k_group_m / CM>(tile, groups_m, tiles_n, tm, tn);
        tm = tm * CM + rank;
      }
      int prev = -1;
      if (kb_begin == kb_end) {
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      }
      for (int kb = kb_begin; kb < kb_end; ++kb) {
        mbar_wait(full_bar(s), phase);
        if constexpr (Cfg::CpAsync) fence_proxy_async_smem();  // the copies wrote through the generic proxy
        fence_regs(acc);
        wgmma_fence();
        const uint32_t a0 = stage_a(s) + cw * 64 * 128;
        const uint32_t b0 = stage_b(s);
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          const uint64_t da = make_desc_sw128(a0 + kk * 32, 16, 1024);
          const uint64_t db = make_desc_sw128(b0 + kk * 2048, Cfg::b_chunk_bytes, 1024);
          wgmma_ss<BN, T, 1>(acc, da, db, (kb > kb_begin || kk > 0) ? 1 : 0);  // B MN-major
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
      if (prev >= 0) release(prev);

      if constexpr (Cfg::SplitK == 2) {
        // The partial tiles meet in the first CTA: thread i of the second writes its
        // accumulators as float4 j at red_base + (j * 128 * Consumers + i) * 16 of the first
        // (a warp's 32 stores are 512 contiguous bytes), and the same thread of the first,
        // which holds the same elements, adds them.
        const int tid = cw * 128 + t;
        const uint32_t tiles = tiles_done++;
        if (kr == 1) {
          if (tiles > 0) mbar_wait_cluster(red_empty, (tiles - 1) & 1u);  // the last one was read
          const uint32_t dst = cluster_map(red_base, 0);
#pragma unroll
          for (int j = 0; j < BN / 8; ++j)
            st_cluster_f32x4(dst + (j * 128 * Cfg::Consumers + tid) * 16, acc[4 * j], acc[4 * j + 1], acc[4 * j + 2],
                             acc[4 * j + 3]);
          fence_cluster();
          __syncwarp();
          if (lane == 0) mbar_arrive_cluster(red_full, 0);
          continue;  // the first CTA stores the tile
        }
        mbar_wait_cluster(red_full, tiles & 1u);
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const float4 v = ld_shared_f32x4(red_base + (j * 128 * Cfg::Consumers + tid) * 16);
          acc[4 * j] += v.x;
          acc[4 * j + 1] += v.y;
          acc[4 * j + 2] += v.z;
          acc[4 * j + 3] += v.w;
        }
        fence_cluster();
        __syncwarp();
        if (lane == 0) mbar_arrive_cluster(red_empty, 1);
      }

      // Epilogue, one 64-column slab of C at a time: both consumer warpgroups write their
      // rows into a staging buffer (128-byte swizzle, matching the C tensor map), then one
      // thread hands the slab to a TMA store, which clips at the M and N edges. Two buffers
      // alternate, so the stores drain while the next slab is written and while the next
      // tile's wgmma run. Accumulator layout of m64nN: per 8-column group a thread holds rows
      // r and r+8, columns 2*(lane%4) and +1. (CpAsync: the consumers store the slab.)
#pragma unroll
      for (int slab = 0; slab < BN / 64; ++slab, ++c_slabs) {
        const uint32_t buf = c_base + (c_slabs & 1) * Cfg::c_chunk_bytes;
        if (!Cfg::CpAsync && store_issuer && c_slabs >= 2) bulk_wait_read<1>();  // slab - 2 has left buf
        named_bar_sync(1, 128 * Cfg::Consumers);
#pragma unroll
        for (int g = 0; g < 8; ++g) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = cw * 64 + warp * 16 + lane / 4 + h * 8;  // tile row; r%8 = lane/4
            const uint32_t addr = buf + r * 128 + ((g ^ (lane / 4)) << 4) + (lane % 4) * 4;
            const int a = (slab * 8 + g) * 4 + h * 2;
            st_shared_u32(addr, pack2<T>(acc[a], acc[a + 1]));
          }
        }
        if constexpr (Cfg::CpAsync) {
          // The consumers store the slab in 8-byte pieces, as the producer loads them:
          // thread u piece u % 16 of rows u / 16 + 8 * Consumers * i (all u / 16 mod 8).
          named_bar_sync(1, 128 * Cfg::Consumers);
          const int u = cw * 128 + t, q = u % 16, r0 = u / 16;
          const int col = tn * BN + slab * 64 + q * 4;
          const uint32_t src = buf + r0 * 128 + ((((q >> 1) ^ (r0 & 7)) << 4) | ((q & 1) << 3));
#pragma unroll
          for (int i = 0; i < 8; ++i) {
            const int r = r0 + 8 * Cfg::Consumers * i, row = tm * BM + r;
            const uint2 v = ld_shared_u32x2(src + 8 * Cfg::Consumers * i * 128);
            if (row < m && col < n) *reinterpret_cast<uint2*>(c + static_cast<size_t>(row) * n + col) = v;
          }
          continue;  // the next slab's barrier keeps its buffer until every piece is read
        }
        fence_proxy_async_smem();
        named_bar_sync(1, 128 * Cfg::Consumers);
        if (store_issuer) {
          if constexpr (Masked)  // clipped at the group's m rows; rows past its count are left as computed
            tma_store_3d(tmap_c, buf, tn * BN + slab * 64, tm * BM, masked.group);
          else
            tma_store_2d(tmap_c, buf, tn * BN + slab * 64, tm * BM);
          bulk_commit();
        }
      }
    }
    if (!Cfg::CpAsync && store_issuer) bulk_wait<0>();
  }
  // No CTA may leave while a peer can still multicast or write into its shared memory or
  // arrive on its barriers.
  if constexpr (CS > 1) cluster_sync();
#endif
}

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::Threads, 1)
    gemm_wgmma_tma_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                          const __grid_constant__ CUtensorMap tmap_c, int m, int n, int k, int group_tiles_m) {
  gemm_wgmma_tma_body<Cfg, T, false>(&tmap_a, &tmap_b, &tmap_c, m, n, k, group_tiles_m, nullptr, 0, nullptr, nullptr,
                                     nullptr);
}

// Cfg::CpAsync: the matrices themselves, rows of 8-byte multiples, 8-byte aligned.
template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::Threads, 1)
    gemm_wgmma_cp_async_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n,
                               int k) {
  gemm_wgmma_tma_body<Cfg, T, false>(nullptr, nullptr, nullptr, m, n, k, 0, nullptr, 0, a, b, c);
}

// The masked layout: A [groups][m][k] and C [groups][m][n] as 3-D maps, B [groups][k][n];
// masked_m[g] (device memory) of group g's m rows are valid, and only tiles holding valid rows
// run. C's rows past a group's count are unspecified.
template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::Threads, 1)
    gemm_wgmma_tma_masked_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                                 const __grid_constant__ CUtensorMap tmap_c, const int* __restrict__ masked_m,
                                 int groups, int m, int n, int k) {
  gemm_wgmma_tma_body<Cfg, T, true>(&tmap_a, &tmap_b, &tmap_c, m, n, k, 0, masked_m, groups, nullptr, nullptr, nullptr);
}

// ---- host side --------------------------------------------------------------------------------

// Clusters of this kernel that fit on the device at once: the persistent grid must not exceed
// it, or some clusters would wait for others to finish all their tiles.
template <class Cfg, class T>
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
  if constexpr (Cfg::ClusterSize > 1) {
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = Cfg::ClusterSize;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3(sms / Cfg::ClusterSize * Cfg::ClusterSize);
    cfg.blockDim = dim3(Cfg::Threads);
    cfg.dynamicSmemBytes = Cfg::smem_bytes;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    err = cudaOccupancyMaxActiveClusters(&clusters, gemm_wgmma_tma_kernel<Cfg, T>, &cfg);
    if (err != cudaSuccess) return err;
    if (clusters < 1) return cudaErrorInvalidConfiguration;
    result = clusters * Cfg::ClusterSize;
  }
  if (dev < 64) cached[dev] = result;
  *ctas = result;
  return cudaSuccess;
}

}  // namespace
}  // namespace kport::kernels::gemm_wgmma_tma
