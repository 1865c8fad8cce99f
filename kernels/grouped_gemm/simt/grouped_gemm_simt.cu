// grouped_gemm, portable SIMT variant: gemm.simt's kernel (kernels/gemm/simt/gemm_simt.cuh)
// over a grid whose z dimension is the group. With equal groups the contiguous layout is a
// strided batch: group g's A rows start at g*M*K, its B at g*K*N, its D rows at g*M*N. Loads
// are bounds-checked, so any N and K and any alignment work; M (per group) is a multiple of
// 128 by the family's contract, which this variant does not need. The masked layout
// (masked_m set) runs grouped_gemm_simt_masked.cu's kernel, any M. Builds for every target:
// the reference-grade instance, not a fast one, and the one that runs every shape.
#include <string>

#include "common/cuda_check.h"
#include "gemm/simt/gemm_simt.cuh"
#include "grouped_gemm/simt/grouped_gemm_simt_masked.h"
#include "kport/kernels/registry.h"

namespace {

template <int k_bm, int k_bn>
std::string supports(const Problem& p) {
  if (p.family != Family::grouped_gemm) return "not a grouped_gemm problem";
  const GroupedGemmArgs& g = p.grouped_gemm;
  if (g.groups <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0) return "g, m, n and k must be positive";
  if (g.groups > 65535) return "g = " + std::to_string(g.groups) + " groups: the grid's z holds at most 65535";
  if ((static_cast<long>(g.m) + k_bm - 1) / k_bm > 65535)
    return "m = " + std::to_string(g.m) + " needs more than 65535 row tiles per group";
  return "";
}

template <typename T, int k_bm, int k_bn, int k_bk, int k_tm, int k_tn>
cudaError_t launch_typed(const GroupedGemmArgs& g, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((g.n + k_bn - 1) / k_bn), static_cast<unsigned>((g.m + k_bm - 1) / k_bm),
                  static_cast<unsigned>(g.groups));
  gemm_simt_kernel<T, k_bm, k_bn, k_bk, k_tm, k_tn, true><<<grid, k_threads, 0, stream>>>(
      static_cast<const T*>(g.a), static_cast<const T*>(g.b), static_cast<T*>(g.d), g.m, g.n, g.k,
      static_cast<long long>(g.m) * g.k, static_cast<long long>(g.k) * g.n, static_cast<long long>(g.m) * g.n);
  return cudaGetLastError();
}

template <int k_bm, int k_bn, int k_bk, int k_tm, int k_tn>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  if (p.grouped_gemm.masked_m != nullptr)
    return kport::kernels::grouped_gemm_simt::launch_masked<k_bm, k_bn, k_bk, k_tm, k_tn>(p.grouped_gemm, stream);
  switch (p.grouped_gemm.dtype) {
    case DType::f32: return launch_typed<float, k_bm, k_bn, k_bk, k_tm, k_tn>(p.grouped_gemm, stream);
    case DType::f16: return launch_typed<__half, k_bm, k_bn, k_bk, k_tm, k_tn>(p.grouped_gemm, stream);
    case DType::bf16: return launch_typed<__nv_bfloat16, k_bm, k_bn, k_bk, k_tm, k_tn>(p.grouped_gemm, stream);
    case DType::e4m3:
    case DType::e5m2: break;  // not a grouped_gemm dtype
  }
  return cudaErrorInvalidValue;
}

// supports()'s grid bounds as the config's max_m and max_g (the most rows of a group and
// groups it runs at all): 65535 row tiles of 128, 65535 groups.
static_assert(65535 * 128 == 8388480);

const Instance k_grouped_simt_128{Family::grouped_gemm,
                                  "simt",
                                  "grouped_gemm.simt.128x128x16_t8x8",
                                  {"simt"},
                                  {DType::bf16},
                                  R"({"block_m":128,"block_n":128,"block_k":16,"thread_m":8,)"
                                  R"("thread_n":8,"threads":256,"smem_buffers":2,"max_m":8388480,"max_g":65535})",
                                  &supports<128, 128>,
                                  &launch<128, 128, 16, 8, 8>};
KPORT_REGISTER_KERNEL(k_grouped_simt_128);

}  // namespace
