// Blackwell fp8 gemm: D[M,N] = scale(A[M,K] * B[N,K]^T), e4m3 or e5m2 in, fp32 accumulation in
// tensor memory, bf16 out, with per-tensor or row-wise scales applied in the epilogue.
// Target: sm_100a (and the other tcgen05 targets). No GPU of that family is available to
// this project: the variant compiles and its instruction audit passes, but it has never run,
// so its numerics are unverified (config "verified": false; NOTES.md says what to check
// first).
//
// Algorithm: the tcgen05 gemm tile of common/tcgen05_gemm_sm100.cuh, for 8-bit operands:
// 128x128 tiles of A and BNx128 tiles of B (both K-major: one 128-byte swizzle row holds 128
// fp8 values), tcgen05.mma kind::f8f6f4 (M=128, N=BN, K=32); the epilogue multiplies by the
// scales and stores bf16 rows of D.
//
// Block scales (1x128 / 128x128) are not taken: on sm_100a they belong to the block-scaled
// MMA (kind::mxf8f6f4.block_scale, UE8M0 scales in tensor memory), which is a later variant.
//
// Constraints: K a multiple of 16 (TMA 16-byte row strides), A and B 16-byte aligned.
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
  static constexpr int tmem_cols = BN;
  // stages, full/empty barriers, the accumulator barrier and the tensor-memory address slot
  static constexpr int smem_bytes = Stages * stage_bytes + (2 * Stages + 1) * 8 + 16 + 1024;
  static_assert(smem_bytes <= 227 * 1024, "fits the sm_100 per-block shared memory");
};

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
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, bool accumulate) {
    constexpr uint32_t idesc = make_idesc_f8<BM, BN, std::is_same_v<T, __nv_fp8_e5m2>>();
#pragma unroll
    for (int kk = 0; kk < BK / 32; ++kk) {
      const uint64_t da = make_sdesc_sw128(a + kk * 32, 16, 1024);
      const uint64_t db = make_sdesc_sw128(b + kk * 32, 16, 1024);
      mma_f8(tmem_d, da, db, idesc, (accumulate || kk > 0) ? 1u : 0u);
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
    return "block128 scales are not taken by gemm_fp8.tcgen05: on sm_100a they belong to the block-scaled MMA with "
           "UE8M0 scales, a later variant; this one takes per-tensor and row-wise scales";
  if (g.k % 16 != 0)
    return "K=" + std::to_string(g.k) +
           " is not a multiple of 16: TMA needs 16-byte row strides of A and B; pad K with zeros to a multiple of 16";
  auto misaligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 != 0; };
  if (misaligned(g.a) || misaligned(g.b)) return "A and B must be 16-byte aligned for TMA";
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

template <class Cfg, class T>
cudaError_t launch_mode(const GemmFp8Args& g, cudaStream_t stream) {
  switch (g.scale) {
    case Fp8Scale::tensor: return launch_typed<Cfg, T, Fp8Scale::tensor>(g, stream);
    case Fp8Scale::row: return launch_typed<Cfg, T, Fp8Scale::row>(g, stream);
    case Fp8Scale::block128: return cudaErrorInvalidValue;  // supports() refuses it
  }
  return cudaErrorInvalidValue;
}

template <class Cfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  if (p.gemm_fp8.dtype == DType::e5m2) return launch_mode<Cfg, __nv_fp8_e5m2>(p.gemm_fp8, stream);
  return launch_mode<Cfg, __nv_fp8_e4m3>(p.gemm_fp8, stream);
}

using Cfg128x256 = Config<128, 256, 4>;

const Instance k_inst_128x256{Family::gemm_fp8,
                              "tcgen05",
                              "gemm_fp8.tcgen05.128x256x128_s4",
                              {"tcgen05", "tmem", "tma", "mbarrier"},
                              {DType::e4m3, DType::e5m2},
                              "{\"bm\":128,\"bn\":256,\"bk\":128,\"stages\":4,\"threads\":128,\"cta_group\":1,"
                              "\"scales\":[\"tensor\",\"row\"],\"verified\":false}",
                              &supports,
                              &launch<Cfg128x256>};

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x256);

}  // namespace kport::kernels::gemm_fp8_tcgen05
