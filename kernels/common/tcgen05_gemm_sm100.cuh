// One output tile of a tcgen05 gemm on sm_100a, the part every tcgen05 gemm of the library
// shares: a CTA of four warps per BM x BN tile, tiles in a grouped order for L2 reuse. Warp 0
// streams K blocks through a ring of Cfg::Stages shared-memory stages with TMA, warp 1
// issues the MMAs of each stage from one thread into an fp32 accumulator in tensor memory and
// tcgen05.commit hands the stage back, warp 2 allocates and frees the tensor memory, and when
// the last commit lands every warp moves its 32 accumulator lanes (rows) to registers, 32
// columns at a time. What differs between variants comes in as three callables:
//   load(stage_a, stage_b, kb, tm, tn, full_bar)  the TMA loads of K block kb (one thread),
//                                                  after full_bar expects Cfg::tx_bytes;
//                                                  loads beyond those expect their own bytes
//   mma(tmem_d, stage_a, stage_b, kb)              the MMAs of K block kb's stage (one
//                                                  thread); kb == 0 overwrites the accumulator
//   store(row, col, r)                             a row's 32 accumulator columns from col,
//                                                  row < m and col < n
// gemm_tile takes the CTA's tile from blockIdx.x in the grouped order; gemm_tile_at is handed
// its tile by a callable (a grouped gemm's masked layout, whose CTAs find theirs among the
// valid tiles).
// Cfg gives BM, BN, BK, Stages, stage_bytes (a stage's size, a multiple of 1024 from the
// 1024-aligned base; A at its start, B a_bytes in), tx_bytes (what load delivers to every
// stage), a_bytes and tmem_cols (the accumulator at column 0; more columns are the variant's);
// the kernel's dynamic shared memory is Cfg::smem_bytes. Callers guard their kernels with
// KPORT_TCGEN05_ENABLED.
//
// For 16-bit A and B (tcgen05.mma kind::f16: gemm.tcgen05, grouped_gemm.tcgen05) the header
// also holds their configuration (F16Config), a K block's MMAs (mma_f16_kblock) and the store
// of a row's 32 columns of C (store_row32); the variants keep only their loads.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "common/convert.cuh"
#include "common/masked_tiles.cuh"
#include "common/mbarrier_sm90.cuh"
#include "common/smem.cuh"
#include "common/tcgen05_sm100.cuh"
#include "common/tma_sm90.cuh"

namespace kport::kernels::sm100 {

constexpr int k_gemm_threads = 128;  // the four warps above
constexpr int k_gemm_group_m = 8;    // tile rows of one group of the grouped order

// The CTA's tile among tiles_m x tiles_n, when CTA `first` + t takes tile t of the grouped
// order: k_gemm_group_m tile rows at a time, down each group's rows first, so neighbouring CTAs
// share tiles of A and B.
struct TileCoord {
  int tm, tn;
};
__device__ __forceinline__ TileCoord grouped_tile_order(int tiles_m, int tiles_n, unsigned first = 0) {
  const int per_group = k_gemm_group_m * tiles_n;
  const unsigned t = blockIdx.x - first;
  const int group = t / per_group, first_m = group * k_gemm_group_m;
  const int rows = min(tiles_m - first_m, k_gemm_group_m);
  return {static_cast<int>(first_m + (t - group * per_group) % rows), static_cast<int>((t - group * per_group) / rows)};
}

// The dynamic shared memory gemm_tile_at lays out for a Cfg of `stages` stages of stage_bytes:
// the stages from the 1024-aligned base (up to 1024 bytes lost to the alignment), the full and
// empty barriers, the accumulator barrier and the tensor-memory address slot.
constexpr int gemm_smem_bytes(int stages, int stage_bytes) {
  return stages * stage_bytes + (2 * stages + 1) * 8 + 16 + 1024;
}

// The output tile where() (a TileCoord) of a gemm of m rows, n columns and depth k; m bounds
// the rows the epilogue hands to store (a masked group's valid rows, tm counted in the group).
template <class Cfg, class Where, class Load, class Mma, class Store>
__device__ __forceinline__ void gemm_tile_at(const CUtensorMap* tmap_a, const CUtensorMap* tmap_b, Where where, int m,
                                             int n, int k, Load load, Mma mma, Store store) {
  using namespace kport::kernels::sm90;  // mbarriers and TMA: the same PTX on sm_100
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, S = Cfg::Stages;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t smem_base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t bar_base = smem_base + S * Cfg::stage_bytes;
  auto full_bar = [&](int s) { return bar_base + 8u * s; };
  auto empty_bar = [&](int s) { return bar_base + 8u * (S + s); };
  const uint32_t acc_bar = bar_base + 16u * S;
  const uint32_t tmem_slot = acc_bar + 8u;
  auto stage_a = [&](int s) { return smem_base + s * Cfg::stage_bytes; };
  auto stage_b = [&](int s) { return smem_base + s * Cfg::stage_bytes + Cfg::a_bytes; };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  const TileCoord at = where();
  const int tm = at.tm, tn = at.tn;
  const int k_blocks = (k + BK - 1) / BK;  // TMA fills the K past the end with zeros

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full_bar(s), 1);
      mbar_init(empty_bar(s), 1);
    }
    mbar_init(acc_bar, 1);
    mbar_fence_init();
    tma_prefetch_desc(tmap_a);
    tma_prefetch_desc(tmap_b);
  }
  if (warp == 2) {
    tmem_alloc(tmem_slot, Cfg::tmem_cols);
    tmem_relinquish();
  }
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  uint32_t tmem_d;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(tmem_d) : "r"(tmem_slot) : "memory");

  if (warp == 0 && lane == 0) {
    // TMA producer
    int s = 0;
    uint32_t phase = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
      mbar_wait(empty_bar(s), phase ^ 1);
      mbar_arrive_expect_tx(full_bar(s), Cfg::tx_bytes);
      load(stage_a(s), stage_b(s), kb, tm, tn, full_bar(s));
      if (++s == S) {
        s = 0;
        phase ^= 1;
      }
    }
  } else if (warp == 1 && lane == 0) {
    // MMA issuer
    int s = 0;
    uint32_t phase = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
      mbar_wait(full_bar(s), phase);
      tc_fence_after();
      mma(tmem_d, stage_a(s), stage_b(s), kb);
      mma_commit(empty_bar(s));  // stage s is free once these MMAs are done
      if (++s == S) {
        s = 0;
        phase ^= 1;
      }
    }
    mma_commit(acc_bar);  // accumulator complete
  }
  __syncwarp();

  // Epilogue: warp w owns tensor-memory lanes (rows) 32w..32w+31; 32 columns per load.
  mbar_wait(acc_bar, 0);
  tc_fence_after();
  const int row = tm * BM + warp * 32 + lane;
  const uint32_t lane_addr = tmem_d + (static_cast<uint32_t>(warp * 32) << 16);
#pragma unroll 1
  for (int chunk = 0; chunk < BN / 32; ++chunk) {
    uint32_t r[32];
    tmem_ld_32x32b_x32(lane_addr + chunk * 32, r);
    tmem_wait_ld();
    const int col = tn * BN + chunk * 32;
    if (row >= m || col >= n) continue;
    store(row, col, r);
  }
  tc_fence_before();
  __syncthreads();
  if (warp == 2) {
    tc_fence_after();
    tmem_dealloc(tmem_d, Cfg::tmem_cols);
  }
}

// The tile of a CTA of a one-tile-a-CTA grid over an m x n gemm, in the grouped order.
template <class Cfg, class Load, class Mma, class Store>
__device__ __forceinline__ void gemm_tile(const CUtensorMap* tmap_a, const CUtensorMap* tmap_b, int m, int n, int k,
                                          Load load, Mma mma, Store store) {
  auto where = [&] { return grouped_tile_order((m + Cfg::BM - 1) / Cfg::BM, (n + Cfg::BN - 1) / Cfg::BN); };
  gemm_tile_at<Cfg>(tmap_a, tmap_b, where, m, n, k, load, mma, store);
}

// The tile of CTA blockIdx.x of a grouped gemm's masked layout, whose grid is one CTA a tile
// of the most tiles the counts could ask for: the blockIdx.x-th tile of the valid rows
// (MaskedTiles::seek_warp), found alike by every warp. `found` is false past the last valid
// tile, and the kernel returns before it touches a barrier or tensor memory (the CTA leaves
// whole). Otherwise tiles.group is the tile's group and tiles.rows its valid rows, the m that
// gemm_tile_at is given (rows counted in the group), and the object is gemm_tile_at's where:
// the tile in the group's grouped order.
template <class Cfg>
struct MaskedGemmTile {
  MaskedTiles<Cfg::BM> tiles;
  bool found;

  __device__ __forceinline__ MaskedGemmTile(const int* masked_m, int groups, int m, int n)
      : tiles{masked_m, groups, m, (n + Cfg::BN - 1) / Cfg::BN}, found(tiles.seek_warp(static_cast<int>(blockIdx.x))) {}

  __device__ __forceinline__ TileCoord operator()() const {
    return grouped_tile_order(tiles.tiles_m, tiles.tiles_n, tiles.first);
  }
};

// A tcgen05 gemm of 16-bit A and B: A as BM x 64 K-major tiles, B as 64 x BN MN-major tiles
// in 64-column slabs, both 128-byte swizzled; the fp32 accumulator takes BN tensor-memory
// columns.
template <int BM_, int BN_, int BK_, int Stages_>
struct F16Config {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, Stages = Stages_;
  static_assert(BM == 128, "cta_group::1 MMA with all 128 tensor-memory lanes");
  static_assert(BN % 32 == 0 && BN >= 32 && BN <= 256, "N of one MMA; 32-column loads");
  static_assert((BN & (BN - 1)) == 0, "tensor memory is allocated in powers of two columns");
  static_assert(BK == 64, "one 128-byte swizzle row of 16-bit elements per K block");
  static_assert(BN % 64 == 0, "B arrives in 64-column slabs");
  static constexpr int a_bytes = BM * BK * 2;
  static constexpr int b_chunk_bytes = BK * 64 * 2;
  static constexpr int stage_bytes = a_bytes + BK * BN * 2;
  static constexpr int tx_bytes = stage_bytes;  // A and B, all a stage holds
  static constexpr int tmem_cols = BN;
  static constexpr int smem_bytes = gemm_smem_bytes(Stages, stage_bytes);
  static_assert(smem_bytes <= 227 * 1024, "fits the sm_100 per-block shared memory");
};

// The MMAs of K block kb of an F16Config stage: K steps of 16, A (K-major) advancing 32 bytes
// in its swizzle row, B (MN-major) 2048 bytes; kb == 0 overwrites the accumulator.
template <class Cfg, bool BF16>
__device__ __forceinline__ void mma_f16_kblock(uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
  constexpr uint32_t idesc = make_idesc_f16<Cfg::BM, Cfg::BN, BF16>();
#pragma unroll
  for (int kk = 0; kk < Cfg::BK / 16; ++kk) {
    const uint64_t da = make_sdesc_sw128(a + kk * 32, 16, 1024);
    const uint64_t db = make_sdesc_sw128(b + kk * 2048, Cfg::b_chunk_bytes, 1024);
    mma_f16(tmem_d, da, db, idesc, (kb > 0 || kk > 0) ? 1u : 0u);
  }
}

// Row `row` of C (n columns, row-major), its 32 accumulator columns from col converted to T
// and stored with 16-byte stores, guarded at the N edge (n % 8 == 0 and col % 32 == 0 keep
// them aligned).
template <class T>
__device__ __forceinline__ void store_row32(T* __restrict__ c, int n, int row, int col, const uint32_t (&r)[32]) {
  uint32_t packed[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) packed[i] = pack2<T>(__uint_as_float(r[2 * i]), __uint_as_float(r[2 * i + 1]));
  T* dst = c + static_cast<size_t>(row) * n + col;
  if (col + 32 <= n) {
#pragma unroll
    for (int q = 0; q < 4; ++q)
      reinterpret_cast<uint4*>(dst)[q] =
          make_uint4(packed[4 * q], packed[4 * q + 1], packed[4 * q + 2], packed[4 * q + 3]);
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i)
      if (col + 2 * i < n) reinterpret_cast<uint32_t*>(dst)[i] = packed[i];
  }
}

}  // namespace kport::kernels::sm100
