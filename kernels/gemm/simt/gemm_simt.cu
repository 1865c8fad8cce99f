// gemm, portable SIMT variant: C[M,N] = A[M,K] * B[K,N], row-major, fp32 accumulation on
// CUDA cores, output in the input dtype (bf16, fp16, fp32). The kernel is gemm_simt.cuh's.
#include <string>

#include "common/cuda_check.h"
#include "gemm/simt/gemm_simt.cuh"
#include "kport/kernels/registry.h"

namespace {

template <int k_bm, int k_bn, int k_bk, int k_tm, int k_tn>
std::string supports(const Problem& p) {
  if (p.family != Family::gemm) return "not a gemm problem";
  const GemmArgs& g = p.gemm;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return "m, n, k must be positive";
  if ((static_cast<long>(g.m) + k_bm - 1) / k_bm > 65535)
    return "m = " + std::to_string(g.m) + " needs more than 65535 row tiles";
  return "";
}

template <typename T, int k_bm, int k_bn, int k_bk, int k_tm, int k_tn>
cudaError_t launch_typed(const GemmArgs& g, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((g.n + k_bn - 1) / k_bn), static_cast<unsigned>((g.m + k_bm - 1) / k_bm));
  gemm_simt_kernel<T, k_bm, k_bn, k_bk, k_tm, k_tn><<<grid, k_threads, 0, stream>>>(
      static_cast<const T*>(g.a), static_cast<const T*>(g.b), static_cast<T*>(g.c), g.m, g.n, g.k, 0, 0, 0);
  return cudaGetLastError();
}

template <int k_bm, int k_bn, int k_bk, int k_tm, int k_tn>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  switch (p.gemm.dtype) {
    case DType::f32: return launch_typed<float, k_bm, k_bn, k_bk, k_tm, k_tn>(p.gemm, stream);
    case DType::f16: return launch_typed<__half, k_bm, k_bn, k_bk, k_tm, k_tn>(p.gemm, stream);
    case DType::bf16: return launch_typed<__nv_bfloat16, k_bm, k_bn, k_bk, k_tm, k_tn>(p.gemm, stream);
    case DType::e4m3:
    case DType::e5m2: break;  // 8-bit inputs are gemm_fp8's only
  }
  return cudaErrorInvalidValue;
}

// supports()'s grid bound as the config's max_m (the most rows it runs at all): 65535 row tiles.
static_assert(65535 * 128 == 8388480 && 65535 * 64 == 4194240);

const Instance k_gemm_simt_128{Family::gemm,
                               "simt",
                               "gemm.simt.128x128x16_t8x8",
                               {"simt"},
                               {DType::bf16, DType::f16, DType::f32},
                               R"({"block_m":128,"block_n":128,"block_k":16,"thread_m":8,)"
                               R"("thread_n":8,"threads":256,"smem_buffers":2,"max_m":8388480})",
                               &supports<128, 128, 16, 8, 8>,
                               &launch<128, 128, 16, 8, 8>};
KPORT_REGISTER_KERNEL(k_gemm_simt_128);

const Instance k_gemm_simt_64{Family::gemm,
                              "simt",
                              "gemm.simt.64x64x16_t4x4",
                              {"simt"},
                              {DType::bf16, DType::f16, DType::f32},
                              R"({"block_m":64,"block_n":64,"block_k":16,"thread_m":4,)"
                              R"("thread_n":4,"threads":256,"smem_buffers":2,"max_m":4194240})",
                              &supports<64, 64, 16, 4, 4>,
                              &launch<64, 64, 16, 4, 4>};
KPORT_REGISTER_KERNEL(k_gemm_simt_64);

}  // namespace
