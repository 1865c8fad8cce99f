// Warp- and block-level reductions over fp32 with register shuffles.
// block_reduce_* need every thread of the block to call them, blockDim.x a multiple of 32
// and at most 1024, and `scratch` of 32 floats in shared memory; they return the result to
// every thread and leave `scratch` reusable after the call.
#pragma once

#include <cmath>

namespace kport::kernels {

__device__ __forceinline__ float warp_reduce_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float warp_reduce_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reduction over `width` consecutive lanes (width a power of two <= 32).
template <int k_width>
__device__ __forceinline__ float group_reduce_sum(float v) {
#pragma unroll
  for (int offset = k_width / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Over the four lanes of a quad (lanes 4q..4q+3: the threads sharing an MMA accumulator
// row), xor 1 then 2. Not group_reduce_sum<4>, which adds in the other order: the attention
// kernels' figures were validated with this one.
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

__device__ __forceinline__ float block_reduce_sum(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = warp_reduce_sum(v);
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.0f;
  return warp_reduce_sum(v);
}

__device__ __forceinline__ float block_reduce_max(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = warp_reduce_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : -INFINITY;
  return warp_reduce_max(v);
}

// (max, sum of exp(x - max)) of two parts of a row as one: softmax's reduction step.
__device__ __forceinline__ void softmax_merge(float& m, float& s, float m2, float s2) {
  const float mx = fmaxf(m, m2);
  if (mx == -INFINITY) return;  // both empty
  s = (m == -INFINITY ? 0.0f : s * __expf(m - mx)) + (m2 == -INFINITY ? 0.0f : s2 * __expf(m2 - mx));
  m = mx;
}

// A row's reduction of (a, b) pairs over a warp, every lane left with the result: rmsnorm
// adds a (b unused), softmax merges (max, sum of exp(x - max)).
template <bool k_softmax>
__device__ __forceinline__ void warp_combine(float& a, float& b) {
  if constexpr (k_softmax) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      softmax_merge(a, b, __shfl_xor_sync(0xffffffffu, a, o), __shfl_xor_sync(0xffffffffu, b, o));
  } else {
    a = warp_reduce_sum(a);
  }
}

}  // namespace kport::kernels
