// Portable row-wise kernels (rmsnorm, softmax) for any row length, dtype and alignment.
// One block of 256 threads per row; every pass strides the row with scalar loads, and the
// row is re-read from global memory between passes (it stays in L1/L2 for rows up to a few
// hundred KB). fp32 math. Used by the simt variants and as the fallback of vec16 for rows
// it cannot keep in registers or whose length is not a multiple of 16 bytes.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "common/convert.cuh"
#include "common/cuda_check.h"
#include "common/warp_reduce.cuh"

namespace kport::kernels {

inline constexpr int k_rowwise_simt_threads = 256;

template <typename T>
__global__ void __launch_bounds__(k_rowwise_simt_threads)
    rmsnorm_simt_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int cols, float eps) {
  __shared__ float scratch[32];
  const size_t off = static_cast<size_t>(blockIdx.x) * cols;
  float ss = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = to_float(x[off + j]);
    ss += v * v;
  }
  ss = block_reduce_sum(ss, scratch);
  const float inv = rsqrtf(ss / static_cast<float>(cols) + eps);
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    y[off + j] = from_float<T>(to_float(x[off + j]) * inv * to_float(w[j]));
}

template <typename T>
__global__ void __launch_bounds__(k_rowwise_simt_threads)
    softmax_simt_kernel(const T* __restrict__ x, T* __restrict__ y, int cols) {
  __shared__ float scratch[32];
  const size_t off = static_cast<size_t>(blockIdx.x) * cols;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) mx = fmaxf(mx, to_float(x[off + j]));
  mx = block_reduce_max(mx, scratch);
  float sum = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) sum += __expf(to_float(x[off + j]) - mx);
  sum = block_reduce_sum(sum, scratch);
  const float inv = 1.0f / sum;
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    y[off + j] = from_float<T>(__expf(to_float(x[off + j]) - mx) * inv);
}

// Launches the simt kernel for `args` (family rmsnorm or softmax); rows map to grid.x.
template <typename T>
cudaError_t launch_rowwise_simt(const RowwiseArgs& a, bool softmax, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(a.rows));
  if (softmax)
    softmax_simt_kernel<T>
        <<<grid, k_rowwise_simt_threads, 0, stream>>>(static_cast<const T*>(a.x), static_cast<T*>(a.y), a.cols);
  else
    rmsnorm_simt_kernel<T><<<grid, k_rowwise_simt_threads, 0, stream>>>(
        static_cast<const T*>(a.x), static_cast<const T*>(a.w), static_cast<T*>(a.y), a.cols, a.eps);
  return cudaGetLastError();
}

inline cudaError_t launch_rowwise_simt_any(const RowwiseArgs& a, bool softmax, cudaStream_t stream) {
  switch (a.dtype) {
    case DType::f32: return launch_rowwise_simt<float>(a, softmax, stream);
    case DType::f16: return launch_rowwise_simt<__half>(a, softmax, stream);
    case DType::bf16: return launch_rowwise_simt<__nv_bfloat16>(a, softmax, stream);
    case DType::e4m3:
    case DType::e5m2: break;  // 8-bit inputs are gemm_fp8's only
  }
  return cudaErrorInvalidValue;
}

// "" when the simt kernels can run `a`, otherwise why not.
inline std::string rowwise_simt_supports(const RowwiseArgs& a) {
  if (a.rows <= 0 || a.cols <= 0) return "rows and cols must be positive";
  return "";
}

}  // namespace kport::kernels
