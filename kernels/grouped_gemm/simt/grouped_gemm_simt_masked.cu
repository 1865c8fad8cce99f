// grouped_gemm.simt in the masked layout of MoE decode: gemm.simt's tile (gemm_simt.cuh) with
// the group as grid z, as the contiguous layout's, each block reading its group's count of
// valid rows from device memory: a tile row past it leaves at once, and the tile computes and
// writes only the rows before it. The grid covers every row of every group, so it does not
// depend on the counts. Any M, N and K. Builds for every target.
#include "grouped_gemm/simt/grouped_gemm_simt_masked.h"

#include "gemm/simt/gemm_simt.cuh"

namespace kport::kernels::grouped_gemm_simt {
namespace {

template <typename T, int k_bm, int k_bn, int k_bk, int k_tm, int k_tn>
__global__ void __launch_bounds__(k_threads)
    grouped_gemm_simt_masked_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                    const int* __restrict__ masked_m, int m, int n, int k) {
  const int rows = min(max(masked_m[blockIdx.z], 0), m);
  if (static_cast<long>(blockIdx.y) * k_bm >= rows) return;
  const long long group = blockIdx.z;
  using Tile = GemmTile<k_bm, k_bn, k_bk, k_tm, k_tn>;
  __shared__ __align__(16) float as[2][k_bk][k_bm + Tile::k_pad];
  __shared__ __align__(16) float bs[2][k_bk][k_bn + Tile::k_pad];
  gemm_simt_tile<T, k_bm, k_bn, k_bk, k_tm, k_tn>(a + group * m * k, b + group * k * n, c + group * m * n, rows, n, k,
                                                  as, bs);
}

template <typename T, int k_bm, int k_bn, int k_bk, int k_tm, int k_tn>
cudaError_t launch_typed(const GroupedGemmArgs& g, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((g.n + k_bn - 1) / k_bn), static_cast<unsigned>((g.m + k_bm - 1) / k_bm),
                  static_cast<unsigned>(g.groups));
  grouped_gemm_simt_masked_kernel<T, k_bm, k_bn, k_bk, k_tm, k_tn><<<grid, k_threads, 0, stream>>>(
      static_cast<const T*>(g.a), static_cast<const T*>(g.b), static_cast<T*>(g.d), g.masked_m, g.m, g.n, g.k);
  return cudaGetLastError();
}

}  // namespace

template <int BM, int BN, int BK, int TM, int TN>
cudaError_t launch_masked(const GroupedGemmArgs& g, cudaStream_t stream) {
  switch (g.dtype) {
    case DType::f32: return launch_typed<float, BM, BN, BK, TM, TN>(g, stream);
    case DType::f16: return launch_typed<__half, BM, BN, BK, TM, TN>(g, stream);
    case DType::bf16: return launch_typed<__nv_bfloat16, BM, BN, BK, TM, TN>(g, stream);
    case DType::e4m3:
    case DType::e5m2: break;  // not a grouped_gemm dtype
  }
  return cudaErrorInvalidValue;
}

template cudaError_t launch_masked<128, 128, 16, 8, 8>(const GroupedGemmArgs&, cudaStream_t);

}  // namespace kport::kernels::grouped_gemm_simt
