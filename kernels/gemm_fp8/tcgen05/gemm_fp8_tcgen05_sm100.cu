// Blackwell fp8 gemm: D[M,N] = scale(A[M,K] * B[N,K]^T), e4m3 or e5m2 in, fp32 accumulation in
// tensor memory, bf16 out, with per-tensor or row-wise scales applied in the epilogue, or
// 1x128 / 128x128 block scales as UE8M0 applied by the block-scaled MMA.
// Target: sm_100a (and the other tcgen05 targets). No GPU of that family is available to
// this project: the variant compiles and its instruction audit passes, but it has never run,
// so its numerics are unverified (config "verified": false; NOTES.md says what to check
// first).
//
// Algorithm: the tcgen05 gemm tile of common/tcgen05_gemm_sm100.cuh, for 8-bit operands:
// 128x128 tiles of A and BNx128 tiles of B (both K-major: one 128-byte swizzle row holds 128
// fp8 values), four MMAs (M=128, N=BN, K=32) per K block.
// - Per-tensor and row-wise scales: tcgen05.mma kind::f8f6f4; the epilogue multiplies by the
//   scales and stores bf16 rows of D.
// - Block scales (block128_ue8m0): tcgen05.mma kind::mxf8f6f4.block_scale.scale_vec::1X, one
//   UE8M0 scale per row of A and of B for each MMA, read from tensor memory. The harness's
//   packed layout (fp8_scales.h) holds four 128-K blocks per 32-bit word, so every fourth K
//   block the stage also carries the group's scale tiles (A's 128 rows, B's BN rows: B's
//   128x128 block scales come repeated per row), tcgen05.cp moves them into tensor memory,
//   and each MMA of K block kb picks byte kb % 4 through the descriptor's scale-factor ids.
//   The scales are applied inside the MMA, so the epilogue only converts.
// fp32 block scales (block128) are refused: sm_100a's block-scaled MMA takes UE8M0.
//
// Constraints: K a multiple of 16 (TMA 16-byte row strides), of 128 with block scales; A, B
// and the packed scales 16-byte aligned.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "common/convert.cuh"
#include "common/mbarrier_sm90.cuh"
#include "common/smem.cuh"
#include "common/tcgen05_gemm_sm100.cuh"
#include "common/tcgen05_sm100.cuh"
#include "common/tma_host_sm90.h"
#include "common/tma_sm90.cuh"
#include "kport/kernels/fp8_scales.h"
#include "kport/kernels/registry.h"

namespace kport::kernels::gemm_fp8_tcgen05 {
namespace {

using namespace kport::kernels::sm90;  // mbarriers and TMA: the same PTX on sm_100
using namespace kport::kernels::sm100;

constexpr int k_threads = k_gemm_threads;

template <int BM_, int BN_, int Stages_>
struct Config {
  static constexpr int BM = BM_, BN = BN_, BK = 128, Stages = Stages_;
  static_assert(BM == 128, "cta_group::1 MMA with all 128 tensor-memory lanes");
  static_assert(BN % 32 == 0 && BN >= 32 && BN <= 256, "N of one MMA; 32-column loads; one TMA box of B rows");
  static_assert((BN & (BN - 1)) == 0, "tensor memory is allocated in powers of two columns");
  static constexpr int a_bytes = BM * BK;  // one byte a value
  static constexpr int stage_bytes = a_bytes + BN * BK;
  static constexpr int tx_bytes = stage_bytes;  // A and B, all a stage holds
  static constexpr int tmem_cols = BN;
  // stages, full/empty barriers, the accumulator barrier and the tensor-memory address slot
  static constexpr int smem_bytes = Stages * stage_bytes + (2 * Stages + 1) * 8 + 16 + 1024;
  static_assert(smem_bytes <= 227 * 1024, "fits the sm_100 per-block shared memory");
};

// Block-scaled: a stage also has room for a K-block group's scale tiles after B (A's 128 rows,
// then B's BN rows, 512 bytes a 128 rows), loaded with every fourth K block. Tensor memory:
// the accumulator in columns [0, BN), then two sets of scale columns (A's 4, B's BN / 32)
// that alternate by K-block group, so the copy of group g + 1 never overwrites columns that
// MMAs of group g may still read (see mma below).
template <int BM_, int BN_, int Stages_>
struct BlockConfig {
  static constexpr int BM = BM_, BN = BN_, BK = 128, Stages = Stages_;
  static_assert(BM == 128, "cta_group::1 MMA with all 128 tensor-memory lanes: one scale tile of A");
  static_assert(BN % 128 == 0 && BN <= 256, "N of one MMA in whole 128-row scale tiles of B");
  static_assert(BK == k_fp8_block && k_ue8m0_tile_rows == 128, "one K block is one scale block");
  static_assert(Stages <= 5, "group g + 2's scale copy waits for the MMAs of group g (see mma)");
  static constexpr int a_bytes = BM * BK;  // one byte a value
  static constexpr int tx_bytes = a_bytes + BN * BK;
  static constexpr int sf_a_bytes = k_ue8m0_tile_bytes;
  static constexpr int sf_bytes = sf_a_bytes + BN / k_ue8m0_tile_rows * k_ue8m0_tile_bytes;
  static constexpr int stage_bytes = (tx_bytes + sf_bytes + 1023) / 1024 * 1024;
  static constexpr int sf_col = BN, sf_set_cols = 16;  // a set: A's 4 columns, then B's
  static_assert(4 + BN / 32 <= sf_set_cols, "A's and B's scale columns fit a set");
  static constexpr int tmem_cols = BN + 2 * sf_set_cols <= 256 ? 256 : 512;
  static_assert(BN + 2 * sf_set_cols <= tmem_cols, "accumulator and scales fit the allocation");
  // stages, full/empty barriers, the accumulator barrier and the tensor-memory address slot
  static constexpr int smem_bytes = Stages * stage_bytes + (2 * Stages + 1) * 8 + 16 + 1024;
  static_assert(smem_bytes <= 227 * 1024, "fits the sm_100 per-block shared memory");
};

// Stores one row's 32 values from column `col` of D as bf16 (16-byte stores when the whole
// segment is inside N and aligned, else element by element up to N).
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

template <class Cfg, class T, Fp8Scale Mode>
__global__ void __launch_bounds__(k_threads, 1)
    gemm_fp8_tcgen05_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                            __nv_bfloat16* __restrict__ d, const float* __restrict__ scale_a,
                            const float* __restrict__ scale_b, int m, int n, int k) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    tma_load_2d(a, &tmap_a, kb * BK, tm * BM, bar);
    tma_load_2d(b, &tmap_b, kb * BK, tn * BN, bar);
  };
  // K steps of 32 values advance both K-major descriptors by 32 bytes inside the 128-byte
  // swizzle row; 8-row groups are 1024 bytes apart.
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
    constexpr uint32_t idesc = make_idesc_f8<BM, BN, std::is_same_v<T, __nv_fp8_e5m2>>();
#pragma unroll
    for (int kk = 0; kk < BK / 32; ++kk) {
      const uint64_t da = make_sdesc_sw128(a + kk * 32, 16, 1024);
      const uint64_t db = make_sdesc_sw128(b + kk * 32, 16, 1024);
      mma_f8(tmem_d, da, db, idesc, (kb > 0 || kk > 0) ? 1u : 0u);
    }
  };
  auto store = [&](int row, int col, const uint32_t(&r)[32]) {
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
  };
  gemm_tile<Cfg>(&tmap_a, &tmap_b, m, n, k, load, mma, store);
#endif
}

// Block scales as UE8M0 (Fp8Scale::block128_ue8m0), Cfg a BlockConfig. tmap_sfa and tmap_sfb
// view the packed scales as [row tiles][K-block groups][128 words] of 32 bits.
template <class Cfg, class T>
__global__ void __launch_bounds__(k_threads, 1)
    gemm_fp8_tcgen05_ue8m0_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                  const __grid_constant__ CUtensorMap tmap_b,
                                  const __grid_constant__ CUtensorMap tmap_sfa,
                                  const __grid_constant__ CUtensorMap tmap_sfb, __nv_bfloat16* __restrict__ d, int m,
                                  int n, int k) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, G = k_ue8m0_tile_kblocks;
  // The first K block of a group also brings the group's scale tiles: A's row tile tm and B's
  // BN / 128 row tiles from tn * BN / 128 (past N, TMA fills zeros: scales of rows whose
  // columns of D are never stored). Their bytes are expected here, before they are loaded,
  // after gemm_tile's arrive has left A's and B's bytes pending, so the phase cannot complete
  // in between.
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    if (kb % G == 0) {
      const uint32_t sf = b + BN * BK;
      mbar_expect_tx(bar, Cfg::sf_bytes);
      tma_load_3d(sf, &tmap_sfa, 0, kb / G, tm, bar);
      tma_load_3d(sf + Cfg::sf_a_bytes, &tmap_sfb, 0, kb / G, tn * (BN / k_ue8m0_tile_rows), bar);
    }
    tma_load_2d(a, &tmap_a, kb * BK, tm * BM, bar);
    tma_load_2d(b, &tmap_b, kb * BK, tn * BN, bar);
  };
  // K block kb uses byte kb % 4 of the scale words of its group, in set (kb / 4) % 2. The
  // group's first K block copies the tiles from its stage into that set: a 512-byte tile is 32
  // lines of 16 bytes (line l: the words of rows l, l+32, l+64, l+96), which 32x128b.warpx4
  // puts in lanes l (+32, 64, 96) of four columns, row r in column r / 32. The copy is issued
  // by this thread before the MMAs that read it (tcgen05.cp then tcgen05.mma: in order). It
  // overwrites the set group g - 2 used, whose last MMAs are K block 4g - 5's: this stage was
  // loaded only after the commit of K block 4g - Stages (>= 4g - 5) landed, and a commit
  // tracks every MMA issued before it, so those have completed.
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
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
    const uint32_t idesc = idesc_with_sf_ids(make_idesc_mxf8<BM, BN, std::is_same_v<T, __nv_fp8_e5m2>>(), id, id);
#pragma unroll
    for (int kk = 0; kk < BK / 32; ++kk) {
      const uint64_t da = make_sdesc_sw128(a + kk * 32, 16, 1024);
      const uint64_t db = make_sdesc_sw128(b + kk * 32, 16, 1024);
      mma_mxf8_block_scale(tmem_d, da, db, idesc, sfa, sfb, (kb > 0 || kk > 0) ? 1u : 0u);
    }
  };
  auto store = [&](int row, int col, const uint32_t(&r)[32]) {
    float v[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) v[i] = __uint_as_float(r[i]);
    store_row_bf16(d, n, row, col, v);
  };
  gemm_tile<Cfg>(&tmap_a, &tmap_b, m, n, k, load, mma, store);
#endif
}

// ---- host side --------------------------------------------------------------------------------

std::string supports(const Problem& p) {
  if (p.family != Family::gemm_fp8) return "not a gemm_fp8 problem";
  const GemmFp8Args& g = p.gemm_fp8;
  if (g.dtype != DType::e4m3 && g.dtype != DType::e5m2)
    return std::string("dtype ") + dtype_name(g.dtype) + " not supported: gemm_fp8.tcgen05 takes e4m3 or e5m2";
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return "M, N and K must be positive";
  if (g.scale == Fp8Scale::block128)
    return "fp32 block scales (scale=2) are not taken by gemm_fp8.tcgen05: sm_100a's block-scaled MMA takes UE8M0 "
           "scales (powers of two); ask scale=3 (block128_ue8m0: the same 1x128 and 128x128 blocks, its scales as "
           "UE8M0 bytes)";
  if (g.k % 16 != 0)
    return "K=" + std::to_string(g.k) +
           " is not a multiple of 16: TMA needs 16-byte row strides of A and B; pad K with zeros to a multiple of 16";
  const bool ue8m0 = g.scale == Fp8Scale::block128_ue8m0;
  if (ue8m0 && g.k % k_fp8_block != 0)
    return "K=" + std::to_string(g.k) +
           " is not a multiple of 128: block scales cover whole 128-wide K blocks; pad K with zeros (scale 1) to a "
           "multiple of 128";
  auto misaligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 != 0; };
  if (misaligned(g.a) || misaligned(g.b)) return "A and B must be 16-byte aligned for TMA";
  if (ue8m0 && (g.ue8m0_a == nullptr || g.ue8m0_b == nullptr))
    return "block128_ue8m0 needs the scales as UE8M0 bytes (GemmFp8Args ue8m0_a and ue8m0_b), not only as fp32";
  if (ue8m0 && (misaligned(g.ue8m0_a) || misaligned(g.ue8m0_b)))
    return "the UE8M0 scales (ue8m0_a, ue8m0_b) must be 16-byte aligned for TMA";
  return "";
}

template <class Cfg, class T, Fp8Scale Mode>
cudaError_t launch_typed(const GemmFp8Args& g, cudaStream_t stream) {
  CUtensorMap ta, tb;
  if (!tma_host::make_tmap_8bit_sw128(&ta, g.a, g.m, g.k, Cfg::BM) ||
      !tma_host::make_tmap_8bit_sw128(&tb, g.b, g.n, g.k, Cfg::BN))
    return cudaErrorInvalidValue;
  auto kernel = gemm_fp8_tcgen05_kernel<Cfg, T, Mode>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  const int tiles = ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN);
  kernel<<<tiles, k_threads, Cfg::smem_bytes, stream>>>(ta, tb, static_cast<__nv_bfloat16*>(g.d), g.scale_a, g.scale_b,
                                                        g.m, g.n, g.k);
  return cudaGetLastError();
}

// The packed UE8M0 scales of an operand of `rows` rows as [row tiles][K-block groups][128
// words] of 32 bits (fp8_scales.h), boxes of one group of `box_tiles` row tiles.
inline bool make_tmap_ue8m0(CUtensorMap* map, const std::uint8_t* packed, int rows, int k, int box_tiles) {
  const auto groups = static_cast<cuuint64_t>(fp8_ue8m0_kgroups(k));
  const auto tiles = static_cast<cuuint64_t>((rows + k_ue8m0_tile_rows - 1) / k_ue8m0_tile_rows);
  constexpr cuuint64_t words = k_ue8m0_tile_bytes / 4;
  const cuuint64_t dims[3] = {words, groups, tiles};
  const cuuint64_t strides[2] = {k_ue8m0_tile_bytes, groups * k_ue8m0_tile_bytes};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(words), 1, static_cast<cuuint32_t>(box_tiles)};
  return tma_host::make_tmap_3d(map, packed, CU_TENSOR_MAP_DATA_TYPE_UINT32, dims, strides, box,
                                CU_TENSOR_MAP_SWIZZLE_NONE);
}

template <class Cfg, class T>
cudaError_t launch_ue8m0(const GemmFp8Args& g, cudaStream_t stream) {
  CUtensorMap ta, tb, tsa, tsb;
  if (!tma_host::make_tmap_8bit_sw128(&ta, g.a, g.m, g.k, Cfg::BM) ||
      !tma_host::make_tmap_8bit_sw128(&tb, g.b, g.n, g.k, Cfg::BN) ||
      !make_tmap_ue8m0(&tsa, g.ue8m0_a, g.m, g.k, Cfg::BM / k_ue8m0_tile_rows) ||
      !make_tmap_ue8m0(&tsb, g.ue8m0_b, g.n, g.k, Cfg::BN / k_ue8m0_tile_rows))
    return cudaErrorInvalidValue;
  auto kernel = gemm_fp8_tcgen05_ue8m0_kernel<Cfg, T>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  const int tiles = ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN);
  kernel<<<tiles, k_threads, Cfg::smem_bytes, stream>>>(ta, tb, tsa, tsb, static_cast<__nv_bfloat16*>(g.d), g.m, g.n,
                                                        g.k);
  return cudaGetLastError();
}

template <class Cfg, class BlockCfg, class T>
cudaError_t launch_mode(const GemmFp8Args& g, cudaStream_t stream) {
  switch (g.scale) {
    case Fp8Scale::tensor: return launch_typed<Cfg, T, Fp8Scale::tensor>(g, stream);
    case Fp8Scale::row: return launch_typed<Cfg, T, Fp8Scale::row>(g, stream);
    case Fp8Scale::block128: return cudaErrorInvalidValue;  // supports() refuses it
    case Fp8Scale::block128_ue8m0: return launch_ue8m0<BlockCfg, T>(g, stream);
  }
  return cudaErrorInvalidValue;
}

template <class Cfg, class BlockCfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  if (p.gemm_fp8.dtype == DType::e5m2) return launch_mode<Cfg, BlockCfg, __nv_fp8_e5m2>(p.gemm_fp8, stream);
  return launch_mode<Cfg, BlockCfg, __nv_fp8_e4m3>(p.gemm_fp8, stream);
}

using Cfg128x256 = Config<128, 256, 4>;
using BlockCfg128x256 = BlockConfig<128, 256, 4>;  // 205,912 bytes of shared memory

const Instance k_inst_128x256{Family::gemm_fp8,
                              "tcgen05",
                              "gemm_fp8.tcgen05.128x256x128_s4",
                              {"tcgen05", "tmem", "tma", "mbarrier"},
                              {DType::e4m3, DType::e5m2},
                              "{\"bm\":128,\"bn\":256,\"bk\":128,\"stages\":4,\"threads\":128,\"cta_group\":1,"
                              "\"scales\":[\"tensor\",\"row\",\"block128_ue8m0\"],\"block_scale_mma\":"
                              "\"mxf8f6f4.scale_vec::1X\",\"verified\":false}",
                              &supports,
                              &launch<Cfg128x256, BlockCfg128x256>};

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x256);

}  // namespace kport::kernels::gemm_fp8_tcgen05
