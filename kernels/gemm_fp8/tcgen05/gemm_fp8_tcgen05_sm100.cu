// Blackwell fp8 gemm: D[M,N] = scale(A[M,K] * B[N,K]^T), e4m3 or e5m2 in, fp32 accumulation in
// tensor memory, bf16 out, with per-tensor or row-wise scales applied in the epilogue, or
// 1x128 / 128x128 block scales as UE8M0 applied by the block-scaled MMA.
// Target: sm_100a (and the other tcgen05 targets). No GPU of that family is available to
// this project: the variant compiles and its instruction audit passes, but it has never run,
// so its numerics are unverified (config "verified": false; NOTES.md says what to check
// first).
//
// Algorithm: the tcgen05 gemm tile of common/tcgen05_gemm_sm100.cuh with the fp8 pieces of
// common/tcgen05_fp8_gemm_sm100.cuh (shared with grouped_gemm_fp8.tcgen05): 128x128 tiles of A
// and BNx128 tiles of B (both K-major: one 128-byte swizzle row holds 128 fp8 values), four
// MMAs (M=128, N=BN, K=32) per K block.
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

#include "common/mbarrier_sm90.cuh"
#include "common/smem.cuh"
#include "common/tcgen05_fp8_gemm_sm100.cuh"
#include "common/tcgen05_fp8_supports_sm100.h"
#include "common/tcgen05_gemm_sm100.cuh"
#include "common/tcgen05_launch_sm100.cuh"
#include "common/tcgen05_sm100.cuh"
#include "common/tma_host_sm90.h"
#include "common/tma_sm90.cuh"
#include "kport/kernels/fp8_scales.h"
#include "kport/kernels/registry.h"

namespace kport::kernels::gemm_fp8_tcgen05 {
namespace {

using namespace kport::kernels::sm90;  // mbarriers and TMA: the same PTX on sm_100
using namespace kport::kernels::sm100;

template <class Cfg, class T, Fp8Scale Mode>
__global__ void __launch_bounds__(k_gemm_threads, 1)
    gemm_fp8_tcgen05_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                            __nv_bfloat16* __restrict__ d, const float* __restrict__ scale_a,
                            const float* __restrict__ scale_b, int m, int n, int k) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    tma_load_2d(a, &tmap_a, kb * BK, tm * BM, bar);
    tma_load_2d(b, &tmap_b, kb * BK, tn * BN, bar);
  };
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
    mma_f8_kblock<Cfg, std::is_same_v<T, __nv_fp8_e5m2>>(tmem_d, a, b, kb);
  };
  auto store = [&](int row, int col, const uint32_t(&r)[32]) {
    store_row_fp8_scaled<Mode>(d, n, row, col, r, scale_a, scale_b);
  };
  gemm_tile<Cfg>(&tmap_a, &tmap_b, m, n, k, load, mma, store);
#endif
}

// Block scales as UE8M0 (Fp8Scale::block128_ue8m0), Cfg an F8BlockConfig. tmap_sfa and
// tmap_sfb view the packed scales as [row tiles][K-block groups][128 words] of 32 bits.
template <class Cfg, class T>
__global__ void __launch_bounds__(k_gemm_threads, 1)
    gemm_fp8_tcgen05_ue8m0_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                  const __grid_constant__ CUtensorMap tmap_b,
                                  const __grid_constant__ CUtensorMap tmap_sfa,
                                  const __grid_constant__ CUtensorMap tmap_sfb, __nv_bfloat16* __restrict__ d, int m,
                                  int n, int k) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  // The first K block of a group also brings the group's scale tiles: A's row tile tm and B's
  // BN / 128 row tiles from tn * BN / 128.
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    load_ue8m0_tiles<Cfg>(b, bar, &tmap_sfa, &tmap_sfb, kb, tm, tn, 0);
    tma_load_2d(a, &tmap_a, kb * BK, tm * BM, bar);
    tma_load_2d(b, &tmap_b, kb * BK, tn * BN, bar);
  };
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
    mma_mxf8_kblock<Cfg, std::is_same_v<T, __nv_fp8_e5m2>>(tmem_d, a, b, kb);
  };
  auto store = [&](int row, int col, const uint32_t(&r)[32]) { store_row_fp8_unscaled(d, n, row, col, r); };
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
    return tcgen05_fp32_block_scales_refused("gemm_fp8.tcgen05", "1x128 and 128x128 blocks");
  return tcgen05_fp8_operands_supported(g, "GemmFp8Args");
}

template <class Cfg, class T, Fp8Scale Mode>
cudaError_t launch_typed(const GemmFp8Args& g, cudaStream_t stream) {
  CUtensorMap ta, tb;
  if (!tma_host::make_tmap_8bit_sw128(&ta, g.a, g.m, g.k, Cfg::BM) ||
      !tma_host::make_tmap_8bit_sw128(&tb, g.b, g.n, g.k, Cfg::BN))
    return cudaErrorInvalidValue;
  return launch_gemm_kernel<Cfg>(gemm_fp8_tcgen05_kernel<Cfg, T, Mode>, gemm_tiles<Cfg>(g.m, g.n), stream, ta, tb,
                                 static_cast<__nv_bfloat16*>(g.d), g.scale_a, g.scale_b, g.m, g.n, g.k);
}

template <class Cfg, class T>
cudaError_t launch_ue8m0(const GemmFp8Args& g, cudaStream_t stream) {
  CUtensorMap ta, tb, tsa, tsb;
  if (!tma_host::make_tmap_8bit_sw128(&ta, g.a, g.m, g.k, Cfg::BM) ||
      !tma_host::make_tmap_8bit_sw128(&tb, g.b, g.n, g.k, Cfg::BN) || !make_ue8m0_maps<Cfg>(g, &tsa, &tsb))
    return cudaErrorInvalidValue;
  return launch_gemm_kernel<Cfg>(gemm_fp8_tcgen05_ue8m0_kernel<Cfg, T>, gemm_tiles<Cfg>(g.m, g.n), stream, ta, tb, tsa,
                                 tsb, static_cast<__nv_bfloat16*>(g.d), g.m, g.n, g.k);
}

template <class Cfg, class BlockCfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  const GemmFp8Args& g = p.gemm_fp8;
  return launch_fp8_kernel(
      g.dtype, g.scale, [&]<class T, Fp8Scale Mode>() { return launch_typed<Cfg, T, Mode>(g, stream); },
      [&]<class T>() { return launch_ue8m0<BlockCfg, T>(g, stream); });
}

using Cfg128x256 = F8Config<128, 256, 4>;
using BlockCfg128x256 = F8BlockConfig<128, 256, 4>;  // 205,912 bytes of shared memory

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
