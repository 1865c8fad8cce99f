// grouped_gemm through cuBLAS: with equal groups the contiguous layout is exactly a strided
// batch (A's groups g*m*k elements apart, B's k*n, D's m*n), so one
// cublasGemmStridedBatchedEx call computes the whole problem. `check` calls it with an fp32 D
// in pedantic math as the reference, `bench` with D in the input dtype as the baseline.
#pragma once

#include <cublas_v2.h>

#include "kport/kernels/registry.h"

namespace kport::harness {

// Row-major D_g[m,n] = A_g[m,k] * B_g[k,n] for every group g, written to `d` as `d_type`,
// accumulated in `compute`. Column-major cuBLAS sees D_g^T = B_g^T * A_g^T.
inline cublasStatus_t cublas_grouped_gemm(cublasHandle_t h, const kport::kernels::GroupedGemmArgs& g, void* d,
                                          cudaDataType_t d_type, cublasComputeType_t compute) {
  using kport::kernels::DType;
  const cudaDataType_t t = g.dtype == DType::f32 ? CUDA_R_32F : g.dtype == DType::f16 ? CUDA_R_16F : CUDA_R_16BF;
  const float alpha = 1.0f, beta = 0.0f;
  const long long stride_a = static_cast<long long>(g.m) * g.k, stride_b = static_cast<long long>(g.k) * g.n,
                  stride_d = static_cast<long long>(g.m) * g.n;
  return cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k, &alpha, g.b, t, g.n, stride_b, g.a, t,
                                    g.k, stride_a, &beta, d, d_type, g.n, stride_d, g.groups, compute,
                                    CUBLAS_GEMM_DEFAULT);
}

}  // namespace kport::harness
