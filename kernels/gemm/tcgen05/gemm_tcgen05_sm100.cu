// Blackwell gemm: C[M,N] = A[M,K] * B[K,N], row-major, bf16/fp16 in, fp32 accumulate, C in the
// input type. Target: sm_100a (and the other tcgen05 targets, sm_103a/sm_110a and their f
// variants). No GPU of that family is available to this project yet: the variant compiles and
// its instruction audit passes, but it has never run, so its numerics are unverified.
//
// Algorithm: the tcgen05 gemm tile of common/tcgen05_gemm_sm100.cuh (one CTA of four warps
// per 128x256 output tile, a 4-stage TMA ring, one thread issuing the MMAs into tensor
// memory), with 128x64 tiles of A and 64x256 tiles of B (128-byte swizzle), tcgen05.mma
// kind::f16 (M=128, N=256, K=16), and an epilogue that converts and stores rows of C with
// 16-byte stores, guarded at the M and N edges.
//
// Constraints: K and N multiples of 8 (TMA 16-byte row strides), 16-byte aligned pointers.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "common/mbarrier_sm90.cuh"
#include "common/smem.cuh"
#include "common/tcgen05_gemm_sm100.cuh"
#include "common/tcgen05_launch_sm100.cuh"
#include "common/tcgen05_sm100.cuh"
#include "common/tma_host_sm90.h"
#include "common/tma_sm90.cuh"
#include "kport/kernels/registry.h"

namespace kport::kernels::gemm_tcgen05 {
namespace {

using namespace kport::kernels::sm90;  // mbarriers and TMA: the same PTX on sm_100
using namespace kport::kernels::sm100;

template <class Cfg, class T>
__global__ void __launch_bounds__(k_gemm_threads, 1)
    gemm_tcgen05_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                        T* __restrict__ c, int m, int n, int k) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  // A as 128x64 tiles, B as 64x256 tiles in 64-column slabs.
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    tma_load_2d(a, &tmap_a, kb * BK, tm * BM, bar);
#pragma unroll
    for (int j = 0; j < BN / 64; ++j) tma_load_2d(b + j * Cfg::b_chunk_bytes, &tmap_b, tn * BN + j * 64, kb * BK, bar);
  };
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) {
    mma_f16_kblock<Cfg, std::is_same_v<T, __nv_bfloat16>>(tmem_d, a, b, kb);
  };
  auto store = [&](int row, int col, const uint32_t(&r)[32]) { store_row32(c, n, row, col, r); };
  gemm_tile<Cfg>(&tmap_a, &tmap_b, m, n, k, load, mma, store);
#endif
}

// ---- host side --------------------------------------------------------------------------------

using tma_host::make_tmap;

std::string supports(const Problem& p) { return tma_host::gemm_supports(p, "tcgen05"); }

template <class Cfg, class T>
cudaError_t launch_typed(const GemmArgs& g, cudaStream_t stream) {
  if (g.m == 0 || g.n == 0) return cudaSuccess;
  if (g.k == 0)  // empty sum: C is zero
    return cudaMemsetAsync(g.c, 0, static_cast<size_t>(g.m) * g.n * sizeof(T), stream);
  CUtensorMap ta, tb;
  if (!make_tmap(&ta, g.a, g.m, g.k, Cfg::BM, g.dtype) || !make_tmap(&tb, g.b, g.k, g.n, Cfg::BK, g.dtype))
    return cudaErrorInvalidValue;
  return launch_gemm_kernel<Cfg>(gemm_tcgen05_kernel<Cfg, T>, gemm_tiles<Cfg>(g.m, g.n), stream, ta, tb,
                                 static_cast<T*>(g.c), g.m, g.n, g.k);
}

template <class Cfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  if (p.gemm.dtype == DType::bf16) return launch_typed<Cfg, __nv_bfloat16>(p.gemm, stream);
  return launch_typed<Cfg, __half>(p.gemm, stream);
}

using Cfg128x256 = F16Config<128, 256, 64, 4>;

const Instance k_inst_128x256{Family::gemm,
                              "tcgen05",
                              "gemm.tcgen05.128x256x64_s4",
                              {"tcgen05", "tmem", "tma", "mbarrier"},
                              {DType::bf16, DType::f16},
                              std::string(R"({"bm":128,"bn":256,"bk":64,"stages":4,"threads":128,"cta_group":1,)") +
                                  tma_host::k_gemm_run_align_config + R"(,"verified":false})",
                              &supports,
                              &launch<Cfg128x256>};

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x256);

}  // namespace kport::kernels::gemm_tcgen05
