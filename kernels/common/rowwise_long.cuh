// Row-wise kernels (rmsnorm, softmax) for rows longer than a block holds in registers
// (vocabulary-sized rows of 128k columns and more): one block of k_long_threads threads per
// row reads the row twice with 16-byte loads. The first pass reduces (softmax: the running
// max and the sum of exp(x - max), rescaled as the max grows; rmsnorm: the sum of squares)
// and asks L2 to keep what it read (evict_last); the second reads the row again, mostly
// from L2, and writes the output once with streaming stores. Applies when the row is a
// whole number of 16-byte vectors and x/y/w are 16-byte aligned; otherwise the caller falls
// back to the simt kernels. Needs sm_80 (L2 cache hints).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/convert.cuh"
#include "common/cuda_check.h"
#include "common/rowwise_simt.cuh"
#include "common/vector_io.cuh"
#include "common/warp_reduce.cuh"

namespace kport::kernels {

inline constexpr int k_long_threads = 1024;
inline constexpr int k_long_unroll = 4;  // 16-byte loads a thread has in flight per step
inline constexpr long k_long_row_align_bytes = 16;

inline bool rowwise_long_applies(const RowwiseArgs& a) {
  const long row_bytes = static_cast<long>(a.cols) * dtype_size(a.dtype);
  return a.cols > 0 && row_bytes % k_long_row_align_bytes == 0 && is_aligned16(a.x) && is_aligned16(a.y) &&
         (a.w == nullptr || is_aligned16(a.w));
}

__device__ __forceinline__ std::uint64_t l2_policy_evict_last_sm80() {
  std::uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ std::uint64_t l2_policy_evict_first_sm80() {
  std::uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

template <typename T>
__device__ __forceinline__ Vec16<T> load_vec16_policy_sm80(const T* p, std::uint64_t policy) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p), "l"(policy));
  Vec16<T> out;
  *reinterpret_cast<uint4*>(out.v) = r;
  return out;
}

// One step of a pass: a thread's k_long_unroll vectors of the row, base, base + k_long_threads, ...
template <typename T>
__device__ __forceinline__ void load_long_step(Vec16<T> (&v)[k_long_unroll], const T* xr, int base, int vecs,
                                               std::uint64_t policy) {
#pragma unroll
  for (int u = 0; u < k_long_unroll; ++u)
    if (base + u * k_long_threads < vecs)
      v[u] = load_vec16_policy_sm80(xr + static_cast<long>(base + u * k_long_threads) * Vec16<T>::k_count, policy);
}

template <typename T, bool k_softmax>
__global__ void __launch_bounds__(k_long_threads)
    rowwise_long_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int cols, float eps) {
  constexpr int k_e = Vec16<T>::k_count;
  constexpr int k_step = k_long_threads * k_long_unroll;
  __shared__ float part_a[k_long_threads / 32], part_b[k_long_threads / 32];
  const long row = blockIdx.x;
  const int vecs = cols / k_e;
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  const std::uint64_t keep = l2_policy_evict_last_sm80();
  float a = k_softmax ? -INFINITY : 0.0f;  // softmax: the running max; rmsnorm: the sum of squares
  float b = 0.0f;                          // softmax: the sum of exp(x - a)
  for (int base = threadIdx.x; base < vecs; base += k_step) {
    Vec16<T> v[k_long_unroll];
    load_long_step(v, xr, base, vecs, keep);
#pragma unroll
    for (int u = 0; u < k_long_unroll; ++u) {
      if (base + u * k_long_threads >= vecs) continue;
      if constexpr (k_softmax) {
        float mx = a;
#pragma unroll
        for (int e = 0; e < k_e; ++e) mx = fmaxf(mx, to_float(v[u].v[e]));
        float s = a == -INFINITY ? 0.0f : b * __expf(a - mx);
#pragma unroll
        for (int e = 0; e < k_e; ++e) s += __expf(to_float(v[u].v[e]) - mx);
        a = mx;
        b = s;
      } else {
#pragma unroll
        for (int e = 0; e < k_e; ++e) {
          const float f = to_float(v[u].v[e]);
          a += f * f;
        }
      }
    }
  }
  // The row's reduction: within each warp, then across the block's warps.
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  warp_combine<k_softmax>(a, b);
  if (lane == 0) part_a[warp] = a, part_b[warp] = b;
  __syncthreads();
  a = k_softmax ? -INFINITY : 0.0f;
  b = 0.0f;
  for (int i = 0; i < k_long_threads / 32; ++i) {
    if constexpr (k_softmax)
      softmax_merge(a, b, part_a[i], part_b[i]);
    else
      a += part_a[i];
  }
  const float scale = k_softmax ? 1.0f / b : rsqrtf(a / static_cast<float>(cols) + eps);
  const std::uint64_t drop = l2_policy_evict_first_sm80();
  for (int base = threadIdx.x; base < vecs; base += k_step) {
    Vec16<T> v[k_long_unroll];
    load_long_step(v, xr, base, vecs, drop);
#pragma unroll
    for (int u = 0; u < k_long_unroll; ++u) {
      const int vi = base + u * k_long_threads;
      if (vi >= vecs) continue;
      Vec16<T> out;
      if constexpr (k_softmax) {
#pragma unroll
        for (int e = 0; e < k_e; ++e) out.v[e] = from_float<T>(__expf(to_float(v[u].v[e]) - a) * scale);
      } else {
        const Vec16<T> wv = load_vec16(w + static_cast<long>(vi) * k_e);
#pragma unroll
        for (int e = 0; e < k_e; ++e) out.v[e] = from_float<T>(to_float(v[u].v[e]) * scale * to_float(wv.v[e]));
      }
      store_vec16_stream_sm70(yr + static_cast<long>(vi) * k_e, out);
    }
  }
}

template <bool k_softmax>
cudaError_t launch_rowwise_long(const RowwiseArgs& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(a.rows));
  switch (a.dtype) {
    case DType::f32:
      rowwise_long_kernel<float, k_softmax><<<grid, k_long_threads, 0, stream>>>(
          static_cast<const float*>(a.x), static_cast<const float*>(a.w), static_cast<float*>(a.y), a.cols, a.eps);
      return cudaGetLastError();
    case DType::f16:
      rowwise_long_kernel<__half, k_softmax><<<grid, k_long_threads, 0, stream>>>(
          static_cast<const __half*>(a.x), static_cast<const __half*>(a.w), static_cast<__half*>(a.y), a.cols, a.eps);
      return cudaGetLastError();
    case DType::bf16:
      rowwise_long_kernel<__nv_bfloat16, k_softmax><<<grid, k_long_threads, 0, stream>>>(
          static_cast<const __nv_bfloat16*>(a.x), static_cast<const __nv_bfloat16*>(a.w),
          static_cast<__nv_bfloat16*>(a.y), a.cols, a.eps);
      return cudaGetLastError();
    case DType::e4m3:
    case DType::e5m2: break;  // 8-bit inputs are gemm_fp8's only
  }
  return cudaErrorInvalidValue;
}

// The long-row instance's launch: rows it does not take (not whole 16-byte vectors, or
// unaligned buffers) run the simt kernels.
template <bool k_softmax>
cudaError_t launch_rowwise_long_or_simt(const RowwiseArgs& a, cudaStream_t stream) {
  if (!rowwise_long_applies(a)) return launch_rowwise_simt_any(a, k_softmax, stream);
  return launch_rowwise_long<k_softmax>(a, stream);
}

// The long-row instance's published config: no row-length bound, 16-byte rows.
inline constexpr const char* k_rowwise_long_config =
    R"({"load_bytes":16,"threads_per_row":1024,"passes":2,"row_align_bytes":16)"
    R"(,"fallback":"simt when row bytes % 16 != 0 or unaligned"})";
static_assert(k_long_threads == 1024 && k_long_row_align_bytes == 16, "k_rowwise_long_config says so");

}  // namespace kport::kernels
