// Row-wise kernels (rmsnorm, softmax) that keep the whole row in registers: each row is read
// from HBM once with 16-byte loads and written once with 16-byte stores, fp32 math.
//
// A row of `cols` elements is `vecs = cols * sizeof(T) / 16` vectors, spread over `tpr`
// threads (a power of two, 32..512, or 1024 of at most 4 vectors for rows the plan's 512
// threads would give more than the vectors it aims at) holding k_v vectors each (k_v in 1,
// 2, 4, 8); a block holds max(tpr, min_block) threads, i.e. one or more rows (min_block: 512
// for rmsnorm, 256 for softmax, the faster of the two for each on an H200, bench/rowwise
// 2026-12-03). Row reductions use warp shuffles and, for rows wider than a warp, one
// shared-memory exchange between the row's warps. Applies when the row is a whole number of
// 16-byte vectors, x/y/w are 16-byte aligned and vecs <= 512 * 8 (64 KB per row); otherwise
// plan_rowwise_vec16 says so and the caller falls back to the simt kernels. Needs nothing
// beyond sm_70 (the streaming store).
#pragma once

#include <cuda_runtime.h>

#include "common/convert.cuh"
#include "common/cuda_check.h"
#include "common/vector_io.cuh"
#include "common/warp_reduce.cuh"

namespace kport::kernels {

inline constexpr int k_vec16_max_tpr = 512;
// Rows over 512 x target_vecs vectors (32 KB at 4): 1024 threads of at most 4 vectors each
// rather than 512 of 8. A block of 512 threads at 8 vectors (80 registers and more) is alone
// on its SM; one of 1024 at 4 (at most 64) doubles the loads in flight.
inline constexpr int k_vec16_wide_tpr = 1024;
inline constexpr int k_vec16_block_rmsnorm = 512;
inline constexpr int k_vec16_block_softmax = 256;
inline constexpr int k_vec16_max_vecs = 8;  // 16-byte vectors one thread holds at most
// The rows the plan takes, published in the instances' configs as their path bounds.
inline constexpr long k_vec16_max_row_bytes = 16L * k_vec16_max_tpr * k_vec16_max_vecs;
inline constexpr long k_vec16_row_align_bytes = 16;

struct Vec16Plan {
  bool ok = false;
  int vecs_per_thread = 0;  // k_v
  int tpr_log2 = 0;         // threads per row = 1 << tpr_log2
  int threads = 0;          // block size
  int rows_per_block = 0;
};

// target_vecs: vectors each thread should hold (1, 2, 4, 8); rows get fewer threads and more
// loads in flight per thread as it grows. min_block: the fewest threads a block holds.
inline Vec16Plan plan_rowwise_vec16(const RowwiseArgs& a, int target_vecs, int min_block) {
  Vec16Plan plan;
  const long row_bytes = static_cast<long>(a.cols) * dtype_size(a.dtype);
  if (row_bytes % k_vec16_row_align_bytes != 0) return plan;
  if (!is_aligned16(a.x) || !is_aligned16(a.y) || (a.w != nullptr && !is_aligned16(a.w))) return plan;
  const long vecs = row_bytes / 16;
  // target_vecs * 16 bytes in flight per thread: enough loads outstanding to cover HBM
  // latency while rows stay spread over many blocks.
  int tpr_log2 = 5;
  while ((1L << tpr_log2) * target_vecs < vecs && (1 << tpr_log2) < k_vec16_max_tpr) ++tpr_log2;
  if ((1L << tpr_log2) * target_vecs < vecs && target_vecs <= 4) tpr_log2 = 10;  // k_vec16_wide_tpr
  const long tpr = 1L << tpr_log2;
  long v = (vecs + tpr - 1) / tpr;
  int k_v = 1;
  while (k_v < v) k_v *= 2;
  if (k_v > k_vec16_max_vecs || (tpr > k_vec16_max_tpr && k_v > 4)) return plan;
  plan.ok = true;
  plan.vecs_per_thread = k_v;
  plan.tpr_log2 = tpr_log2;
  plan.threads = static_cast<int>(tpr > min_block ? tpr : min_block);
  plan.rows_per_block = plan.threads >> tpr_log2;
  return plan;
}

// Reduction over the `1 << tpr_log2` threads of one row (all threads of the block call it).
// scratch: a float per warp of the block; a row's warps are consecutive there.
template <bool k_max>
__device__ __forceinline__ float row_reduce(float v, float* scratch, int tpr_log2) {
  v = k_max ? warp_reduce_max(v) : warp_reduce_sum(v);
  if (tpr_log2 <= 5) return v;  // the row is one warp
  const int lane = threadIdx.x & 31;
  const int warps_per_row = 1 << (tpr_log2 - 5);
  const int first_warp = (threadIdx.x >> tpr_log2) * warps_per_row;
  if (lane == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  const float identity = k_max ? -INFINITY : 0.0f;
  v = lane < warps_per_row ? scratch[first_warp + lane] : identity;
  return k_max ? warp_reduce_max(v) : warp_reduce_sum(v);
}

// Registers a thread may use: up to 4 vectors a thread, what a block of 1024 threads allows.
// At 8 vectors (blocks of at most 512) on sm_90, bf16 took 85, two blocks of 256 threads per
// SM; 80 fit three (H200, bench/rowwise 2026-12-03). sm_100a and sm_120 spill at 80, so
// they keep what a block of 512 threads allows.
constexpr int vec16_max_registers(int k_v) {
  if (k_v <= 4) return 65536 / k_vec16_wide_tpr;
#if defined(KPORT_SM) && KPORT_SM == 90
  return 80;
#else
  return 65536 / k_vec16_max_tpr;
#endif
}

template <typename T, int k_v, bool k_softmax>
__global__ void __maxnreg__(vec16_max_registers(k_v))
    rowwise_vec16_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int rows, int cols,
                         float eps, int tpr_log2) {
  constexpr int k_e = Vec16<T>::k_count;  // elements per vector
  // At most 16 warps per row (512 threads); separate scratch per reduction so that no
  // barrier is needed between them.
  __shared__ float scratch_a[k_vec16_wide_tpr / 32];
  __shared__ float scratch_b[k_vec16_wide_tpr / 32];
  const int tpr = 1 << tpr_log2;
  const int lt = threadIdx.x & (tpr - 1);
  const long row = static_cast<long>(blockIdx.x) * (blockDim.x >> tpr_log2) + (threadIdx.x >> tpr_log2);
  const bool active = row < rows;
  const int vecs = cols / k_e;
  const T* xr = x + row * cols;
  T* yr = y + row * cols;

  // rmsnorm reads the weight (a cache hit after the first rows) after the reduction: issuing
  // it with the row took bf16 at 4 vectors a thread from 60 to 80 registers, a block fewer
  // per SM, and 0.92 of the copy's bandwidth against 0.96 (H200, bench/rowwise 2026-12-03).
  Vec16<T> xv[k_v];
#pragma unroll
  for (int i = 0; i < k_v; ++i) {
    const int vi = lt + i * tpr;
    if (!(active && vi < vecs)) continue;
    xv[i] = load_vec16_nc(xr + static_cast<long>(vi) * k_e);
  }

  if constexpr (!k_softmax) {
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < k_v; ++i) {
      if (!(active && lt + i * tpr < vecs)) continue;
#pragma unroll
      for (int e = 0; e < k_e; ++e) {
        const float f = to_float(xv[i].v[e]);
        ss += f * f;
      }
    }
    ss = row_reduce<false>(ss, scratch_a, tpr_log2);
    const float inv = rsqrtf(ss / static_cast<float>(cols) + eps);
#pragma unroll
    for (int i = 0; i < k_v; ++i) {
      const int vi = lt + i * tpr;
      if (!(active && vi < vecs)) continue;
      const Vec16<T> wi = load_vec16(w + static_cast<long>(vi) * k_e);
      Vec16<T> out;
#pragma unroll
      for (int e = 0; e < k_e; ++e) out.v[e] = from_float<T>(to_float(xv[i].v[e]) * inv * to_float(wi.v[e]));
      store_vec16_stream_sm70(yr + static_cast<long>(vi) * k_e, out);
    }
  } else {
    float mx = -INFINITY;
#pragma unroll
    for (int i = 0; i < k_v; ++i) {
      if (!(active && lt + i * tpr < vecs)) continue;
#pragma unroll
      for (int e = 0; e < k_e; ++e) mx = fmaxf(mx, to_float(xv[i].v[e]));
    }
    mx = row_reduce<true>(mx, scratch_a, tpr_log2);
    // exp(x - max) stays in registers for the store: recomputing it there instead made the
    // 8-vector softmax special-function bound (0.58 of the copy on an H200, 2026-11-29).
    float ex[k_v][k_e];
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < k_v; ++i) {
      if (!(active && lt + i * tpr < vecs)) continue;
#pragma unroll
      for (int e = 0; e < k_e; ++e) {
        ex[i][e] = __expf(to_float(xv[i].v[e]) - mx);
        sum += ex[i][e];
      }
    }
    sum = row_reduce<false>(sum, scratch_b, tpr_log2);
    const float inv = 1.0f / sum;
#pragma unroll
    for (int i = 0; i < k_v; ++i) {
      const int vi = lt + i * tpr;
      if (!(active && vi < vecs)) continue;
      Vec16<T> out;
#pragma unroll
      for (int e = 0; e < k_e; ++e) out.v[e] = from_float<T>(ex[i][e] * inv);
      store_vec16_stream_sm70(yr + static_cast<long>(vi) * k_e, out);
    }
  }
}

template <typename T, bool k_softmax>
cudaError_t launch_rowwise_vec16_typed(const RowwiseArgs& a, const Vec16Plan& plan, cudaStream_t stream) {
  const long blocks = (static_cast<long>(a.rows) + plan.rows_per_block - 1) / plan.rows_per_block;
  const dim3 grid(static_cast<unsigned>(blocks));
  const auto* x = static_cast<const T*>(a.x);
  const auto* w = static_cast<const T*>(a.w);
  auto* y = static_cast<T*>(a.y);
  switch (plan.vecs_per_thread) {
    case 1:
      rowwise_vec16_kernel<T, 1, k_softmax>
          <<<grid, plan.threads, 0, stream>>>(x, w, y, a.rows, a.cols, a.eps, plan.tpr_log2);
      break;
    case 2:
      rowwise_vec16_kernel<T, 2, k_softmax>
          <<<grid, plan.threads, 0, stream>>>(x, w, y, a.rows, a.cols, a.eps, plan.tpr_log2);
      break;
    case 4:
      rowwise_vec16_kernel<T, 4, k_softmax>
          <<<grid, plan.threads, 0, stream>>>(x, w, y, a.rows, a.cols, a.eps, plan.tpr_log2);
      break;
    case 8:
      rowwise_vec16_kernel<T, 8, k_softmax>
          <<<grid, plan.threads, 0, stream>>>(x, w, y, a.rows, a.cols, a.eps, plan.tpr_log2);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <bool k_softmax>
cudaError_t launch_rowwise_vec16(const RowwiseArgs& a, const Vec16Plan& plan, cudaStream_t stream) {
  switch (a.dtype) {
    case DType::f32: return launch_rowwise_vec16_typed<float, k_softmax>(a, plan, stream);
    case DType::f16: return launch_rowwise_vec16_typed<__half, k_softmax>(a, plan, stream);
    case DType::bf16: return launch_rowwise_vec16_typed<__nv_bfloat16, k_softmax>(a, plan, stream);
    case DType::e4m3:
    case DType::e5m2: break;  // 8-bit inputs are gemm_fp8's only
  }
  return cudaErrorInvalidValue;
}

}  // namespace kport::kernels
