// grouped_gemm_fp8, Blackwell: the contiguous layout of prefill MoE in fp8 on the tcgen05 gemm
// tile (common/tcgen05_gemm_sm100.cuh) with gemm_fp8.tcgen05's fp8 pieces
// (common/tcgen05_fp8_gemm_sm100.cuh). Target: sm_100a (and the other tcgen05 targets). No GPU
// of that family is available to this project: the variant compiles and its instruction audit
// passes, but it has never run, so its numerics are unverified (config "verified": false;
// NOTES.md says what to check first).
//
// The contiguous layout is one tall gemm over G*M rows of A and D whose B changes every M rows:
// each group's M is a multiple of the 128-row tile, so a tile row lies in one group, and its
// group is its first row divided by M. B is read through a 3-D tensor map [G][N][K] (as the
// Hopper variant reads it): N and K edges are zero-filled at the end of the group's slice,
// never read from the next group.
// - Per-tensor and row-wise scales: tcgen05.mma kind::f8f6f4; the epilogue multiplies by A's
//   scale (the tall A's) and the row's group's scales of B (gemm_fp8's layout once per group).
// - Block scales as UE8M0 (block128_ue8m0): tcgen05.mma kind::mxf8f6f4.block_scale.scale_vec::1X
//   with the scales in tensor memory, as gemm_fp8.tcgen05 runs them. A's packed scales are the
//   tall A's (a tile's row tile is its scale tile); B's are each group's packed one after the
//   other, so a tile's scale tiles of B start at its group's first (group * ceil(N/128)).
// fp32 block scales (block128) are refused: sm_100a's block-scaled MMA takes UE8M0. The masked
// layout (masked_m set, counts on the device) runs the masked kernels of
// grouped_gemm_fp8_tcgen05_masked_sm100.cu at the same tile, M free (a multiple of 128 with
// UE8M0 block scales).
//
// Constraints: e4m3 or e5m2; M (per group) a multiple of 128; K a multiple of 16 (TMA's
// 16-byte row strides), of 128 with block scales; A, B and the packed scales 16-byte aligned.
// N is free: TMA zero-fills B's rows past N and the epilogue masks D.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "grouped_gemm_fp8/tcgen05/grouped_gemm_fp8_tcgen05_masked_sm100.h"

#include "common/tcgen05_fp8_gemm_sm100.cuh"
#include "common/tcgen05_fp8_supports_sm100.h"
#include "common/tcgen05_gemm_sm100.cuh"
#include "common/tcgen05_launch_sm100.cuh"
#include "common/tcgen05_sm100.cuh"
#include "common/tma_host_sm90.h"
#include "common/tma_sm90.cuh"
#include "kport/kernels/fp8_scales.h"
#include "kport/kernels/registry.h"

namespace kport::kernels::grouped_gemm_fp8_tcgen05 {
namespace {

using namespace kport::kernels::sm90;  // mbarriers and TMA: the same PTX on sm_100
using namespace kport::kernels::sm100;

// Per-tensor and row-wise scales, Cfg an F8Config. rows = G*M (A's and D's rows), m = M (a
// group's rows, a multiple of BM).
template <class Cfg, class T, Fp8Scale Mode>
__global__ void __launch_bounds__(k_gemm_threads, 1)
    grouped_gemm_fp8_tcgen05_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                    const __grid_constant__ CUtensorMap tmap_b, __nv_bfloat16* __restrict__ d,
                                    const float* __restrict__ scale_a, const float* __restrict__ scale_b, int rows,
                                    int m, int n, int k) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  // A as 128x128 tiles of the tall A; B as BNx128 tiles of the tile's group.
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    const int group = tm * BM / m;
    tma_load_2d(a, &tmap_a, kb * BK, tm * BM, bar);
    tma_load_3d(b, &tmap_b, kb * BK, tn * BN, group, bar);
  };
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
    mma_f8_kblock<Cfg, std::is_same_v<T, __nv_fp8_e5m2>>(tmem_d, a, b, kb);
  };
  // The row's group's scales of B; A's are the tall A's.
  auto store = [&](int row, int col, const uint32_t(&r)[32]) {
    store_row_fp8_scaled<Mode>(d, n, row, col, r, scale_a, scale_b + fp8_group_scale_b_offset(Mode, row / m, n, k));
  };
  gemm_tile<Cfg>(&tmap_a, &tmap_b, rows, n, k, load, mma, store);
#endif
}

// Block scales as UE8M0 (Fp8Scale::block128_ue8m0), Cfg an F8BlockConfig. tmap_sfa views the
// tall A's packed scales and tmap_sfb every group's B's, one after the other, as [row
// tiles][K-block groups][128 words] of 32 bits; b_tiles is ceil(N / 128), the row tiles of one
// group's B.
template <class Cfg, class T>
__global__ void __launch_bounds__(k_gemm_threads, 1)
    grouped_gemm_fp8_tcgen05_ue8m0_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                          const __grid_constant__ CUtensorMap tmap_b,
                                          const __grid_constant__ CUtensorMap tmap_sfa,
                                          const __grid_constant__ CUtensorMap tmap_sfb, __nv_bfloat16* __restrict__ d,
                                          int rows, int m, int n, int k, int b_tiles) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  // The first K block of a K-block group also brings its scale tiles: A's row tile tm and the
  // group's B's from tn * BN / 128. A B scale tile past the group's N (N not a multiple of BN)
  // is the next group's first, or TMA's zeros after the last group: it scales only columns of
  // D past N, whose B rows are zeros and which are never stored.
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    const int group = tm * BM / m;
    load_ue8m0_tiles<Cfg>(b, bar, &tmap_sfa, &tmap_sfb, kb, tm, tn, group * b_tiles);
    tma_load_2d(a, &tmap_a, kb * BK, tm * BM, bar);
    tma_load_3d(b, &tmap_b, kb * BK, tn * BN, group, bar);
  };
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
    mma_mxf8_kblock<Cfg, std::is_same_v<T, __nv_fp8_e5m2>>(tmem_d, a, b, kb);
  };
  auto store = [&](int row, int col, const uint32_t(&r)[32]) { store_row_fp8_unscaled(d, n, row, col, r); };
  gemm_tile<Cfg>(&tmap_a, &tmap_b, rows, n, k, load, mma, store);
#endif
}

// ---- host side --------------------------------------------------------------------------------

template <class Cfg>
std::string supports(const Problem& p) {
  if (p.family != Family::grouped_gemm_fp8) return "not a grouped_gemm_fp8 problem";
  const GroupedGemmFp8Args& g = p.grouped_gemm_fp8;
  if (g.dtype != DType::e4m3 && g.dtype != DType::e5m2)
    return std::string("dtype ") + dtype_name(g.dtype) + " not supported: grouped_gemm_fp8.tcgen05 takes e4m3 or e5m2";
  if (g.groups <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0) return "g, m, n and k must be positive";
  if (g.scale == Fp8Scale::block128)
    return tcgen05_fp32_block_scales_refused("grouped_gemm_fp8.tcgen05", "1x128 and 128x128 blocks per group");
  const bool masked = g.masked_m != nullptr;
  if (g.m % Cfg::BM != 0 && !masked)
    return "m (the rows of each group) must be a multiple of " + std::to_string(Cfg::BM) +
           ", the tile's rows, so that no tile holds two groups (m=" + std::to_string(g.m) +
           "); pad each group's rows to it";
  if (static_cast<long long>(g.groups) * g.m > INT_MAX) return "g*m (the rows of A and D) must fit an int";
  // One CTA a tile (the masked layout's grid: every row valid); the scale tiles of every
  // group's B are numbered as one.
  if (static_cast<long long>(g.groups) * ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN) > INT_MAX ||
      static_cast<long long>(g.groups) * fp8_ue8m0_row_tiles(g.n) > INT_MAX)
    return "the tiles (g*ceil(m/128) * ceil(n/" + std::to_string(Cfg::BN) + ")) and g*ceil(n/128) must fit an int";
  if (std::string why = tcgen05_fp8_operands_supported(g, "GroupedGemmFp8Args"); !why.empty()) return why;
  // A's scales are packed for the G*M rows in tiles of 128; a tile of a group's rows is one
  // scale tile only when every group starts one.
  if (masked && g.scale == Fp8Scale::block128_ue8m0 && g.m % k_ue8m0_tile_rows != 0)
    return "the masked layout with UE8M0 block scales (scale=3) needs m (each group's rows) a multiple of 128, so "
           "that every group's rows start a 128-row tile of A's packed scales (m=" +
           std::to_string(g.m) + "); pad m to a multiple of 128, or use scale=0 or 1 (any m)";
  if (masked && reinterpret_cast<uintptr_t>(g.masked_m) % alignof(int) != 0) return "masked_m must be int-aligned";
  return "";
}

// A as the tall [G*M, K] A, B as [G][N][K]: boxes of one tile's rows and 128 K.
template <int BM, int BN>
bool make_operand_maps(const GroupedGemmFp8Args& g, CUtensorMap* ta, CUtensorMap* tb) {
  return tma_host::make_tmap_8bit_sw128(ta, g.a, g.groups * g.m, g.k, BM) &&
         tma_host::make_tmap_8bit_sw128_3d(tb, g.b, g.groups, g.n, g.k, BN);
}

// Every group's rows are whole tiles: the tall gemm's tiles.
template <class Cfg, class T, Fp8Scale Mode>
cudaError_t launch_typed(const GroupedGemmFp8Args& g, cudaStream_t stream) {
  CUtensorMap ta, tb;
  if (!make_operand_maps<Cfg::BM, Cfg::BN>(g, &ta, &tb)) return cudaErrorInvalidValue;
  return launch_gemm_kernel<Cfg>(grouped_gemm_fp8_tcgen05_kernel<Cfg, T, Mode>, gemm_tiles<Cfg>(g.groups * g.m, g.n),
                                 stream, ta, tb, static_cast<__nv_bfloat16*>(g.d), g.scale_a, g.scale_b, g.groups * g.m,
                                 g.m, g.n, g.k);
}

template <class Cfg, class T>
cudaError_t launch_ue8m0(const GroupedGemmFp8Args& g, cudaStream_t stream) {
  CUtensorMap ta, tb, tsa, tsb;
  if (!make_operand_maps<Cfg::BM, Cfg::BN>(g, &ta, &tb) || !make_ue8m0_maps<Cfg>(g, &tsa, &tsb))
    return cudaErrorInvalidValue;
  return launch_gemm_kernel<Cfg>(grouped_gemm_fp8_tcgen05_ue8m0_kernel<Cfg, T>, gemm_tiles<Cfg>(g.groups * g.m, g.n),
                                 stream, ta, tb, tsa, tsb, static_cast<__nv_bfloat16*>(g.d), g.groups * g.m, g.m, g.n,
                                 g.k, fp8_ue8m0_row_tiles(g.n));
}

template <class Cfg, class BlockCfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  const GroupedGemmFp8Args& g = p.grouped_gemm_fp8;
  if (g.masked_m != nullptr) return launch_masked<Cfg::BN, Cfg::Stages>(g, stream);
  return launch_fp8_kernel(
      g.dtype, g.scale, [&]<class T, Fp8Scale Mode>() { return launch_typed<Cfg, T, Mode>(g, stream); },
      [&]<class T>() { return launch_ue8m0<BlockCfg, T>(g, stream); });
}

// gemm_fp8.tcgen05's configurations: 128x256 tiles, 4 stages.
using Cfg128x256 = F8Config<128, 256, 4>;
using BlockCfg128x256 = F8BlockConfig<128, 256, 4>;

const Instance k_inst_128x256{Family::grouped_gemm_fp8,
                              "tcgen05",
                              "grouped_gemm_fp8.tcgen05.128x256x128_s4",
                              {"tcgen05", "tmem", "tma", "mbarrier"},
                              {DType::e4m3, DType::e5m2},
                              "{\"bm\":128,\"bn\":256,\"bk\":128,\"stages\":4,\"threads\":128,\"cta_group\":1,"
                              "\"scales\":[\"tensor\",\"row\",\"block128_ue8m0\"],\"block_scale_mma\":"
                              "\"mxf8f6f4.scale_vec::1X\",\"group_m_align\":128,\"verified\":false}",
                              &supports<Cfg128x256>,
                              &launch<Cfg128x256, BlockCfg128x256>};

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x256);

}  // namespace kport::kernels::grouped_gemm_fp8_tcgen05
