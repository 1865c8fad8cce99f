// Row-wise kernels (rmsnorm, softmax) for rows longer than one block keeps in registers: a
// thread-block cluster per row (sm_90 and later). Each CTA copies its slice of the row (at
// most k_slice_bytes) into shared memory with bulk copies (cp.async.bulk, one thread issues
// them, an mbarrier counts the bytes), so the whole slice is in flight at once whatever the
// registers; it reduces the slice (rmsnorm: the sum of squares; softmax: each thread's max,
// then its sum of exp(x - max), merged as (max, sum) pairs), hands the CTA's partial to every
// CTA of the cluster through distributed shared memory, and after one cluster barrier combines
// the partials, scales its slice from shared memory and writes it once with streaming stores.
// HBM sees the row read once and written once, as the copy does.
//
// Why shared memory and not registers: the first version held the slice in registers (2-3
// CTAs a SM, 64-96 KB of loads in flight) and ran at 0.70-0.75 of the copy on an H200, below
// the one-block register kernel: a CTA waiting at the cluster barrier for its slowest peer
// holds its registers with no load in flight. Here 6 CTAs of 32 KB slices (3 of 64 KB) fit a SM,
// each with its whole slice in flight.
//
// Cluster barriers: every thread arrives (relaxed) as it starts and waits before its CTA
// stores into a peer (a peer's shared memory may only be touched once it runs); the second
// barrier publishes the partials. No CTA touches another's shared memory after it, so none
// waits for its peers before exiting. softmax computes exp twice an element (the sum, the
// store), both ex2.approx of one FFMA. The split is plan_rowwise_cluster's
// (common/rowwise_cluster_plan.h): rows of whole 16-byte vectors, 16-byte aligned buffers.
// fp32 math.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/convert.cuh"
#include "common/dsmem_sm90.cuh"
#include "common/fast_math.cuh"
#include "common/mbarrier_sm90.cuh"
#include "common/rowwise_cluster_plan.h"
#include "common/smem.cuh"
#include "common/sync_sm90.cuh"
#include "common/tma_sm90.cuh"
#include "common/vector_io.cuh"
#include "common/warp_reduce.cuh"
#include "kport/kernels/registry.h"

namespace kport::kernels::rowwise_cluster {

// k_threads threads a CTA, a slice of at most k_slice_vecs 16-byte vectors a CTA.
template <typename T, int k_threads, int k_slice_vecs, bool k_softmax>
__global__ void __launch_bounds__(k_threads)
    rowwise_cluster_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int cols, int cta_vecs,
                           float eps) {
  constexpr int k_e = Vec16<T>::k_count;  // elements per vector
  constexpr int k_warps = k_threads / 32;
  constexpr uint32_t k_copy_bytes = 8192;  // a bulk copy's bytes
  constexpr float k_log2e = 1.4426950408889634f;
  static_assert(k_threads % 32 == 0 && k_warps <= 32, "a warp combines the CTA's warps");
  constexpr float k_identity = k_softmax ? -INFINITY : 0.0f;
  // 16-bit softmax keeps exp(x - thread max) from the sum for the store (fp32 inputs compute it
  // twice: half the elements a byte, and fp16 would not hold fp32's precision).
  constexpr bool k_keep_exp = k_softmax && sizeof(T) == 2;
  extern __shared__ __align__(128) uint4 slice[];  // cta_vecs vectors
  __shared__ float warp_a[k_warps], warp_b[k_warps];
  __shared__ float2 parts[k_cluster_max_ctas];  // CTA p's (a, b) at p, stored there by CTA p
  __shared__ __align__(8) uint64_t landed;
  const uint32_t rank = sm90::cluster_rank();
  const uint32_t ctas = sm90::cluster_size();
  const long row = sm90::cluster_id_x();
  const int first = static_cast<int>(rank) * cta_vecs;
  const int mine = min(cta_vecs, cols / k_e - first);  // vectors of this CTA's slice
  const T* xs = x + row * cols + static_cast<long>(first) * k_e;
  T* ys = y + row * cols + static_cast<long>(first) * k_e;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t bar = smem_u32(&landed);
  if (threadIdx.x == 0) {
    const uint32_t bytes = static_cast<uint32_t>(max(mine, 0)) * 16u;
    sm90::mbar_init(bar, 1);
    sm90::mbar_fence_init();
    sm90::mbar_arrive_expect_tx(bar, bytes);
    for (uint32_t off = 0; off < bytes; off += k_copy_bytes)
      sm90::bulk_load(smem_u32(slice) + off, reinterpret_cast<const char*>(xs) + off, min(k_copy_bytes, bytes - off),
                      bar);
  }
  // This CTA has started: peers may store into its shared memory once every CTA says so.
  sm90::cluster_arrive_relaxed();
  __syncthreads();  // the barrier is initialised before anyone waits on it
  sm90::mbar_wait(bar, 0);

  // This thread's partial: rmsnorm a = sum of squares; softmax a = max, b = sum of exp(x - a).
  float a = k_identity, b = 0.0f;
  if constexpr (k_softmax) {
#pragma unroll 4
    for (int vi = threadIdx.x; vi < mine; vi += k_threads) {
      const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(&slice[vi]);
#pragma unroll
      for (int e = 0; e < k_e; ++e) a = fmaxf(a, to_float(v.v[e]));
    }
    const float shift = a * k_log2e;
#pragma unroll 4
    for (int vi = threadIdx.x; vi < mine; vi += k_threads) {
      Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(&slice[vi]);
      if constexpr (k_keep_exp) {
        // exp(x - thread max), in (0, 1], goes back in place as fp16 (11 bits, more than a
        // 16-bit output keeps) for the store: one exp an element.
        Vec16<__half> ex;
#pragma unroll
        for (int e = 0; e < k_e; ++e) {
          const float f = fast_exp2(fmaf(to_float(v.v[e]), k_log2e, -shift));
          b += f;
          ex.v[e] = __float2half_rn(f);
        }
        *reinterpret_cast<Vec16<__half>*>(&slice[vi]) = ex;
      } else {
#pragma unroll
        for (int e = 0; e < k_e; ++e) b += fast_exp2(fmaf(to_float(v.v[e]), k_log2e, -shift));
      }
    }
  } else {
#pragma unroll 4
    for (int vi = threadIdx.x; vi < mine; vi += k_threads) {
      const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(&slice[vi]);
#pragma unroll
      for (int e = 0; e < k_e; ++e) {
        const float f = to_float(v.v[e]);
        a += f * f;
      }
    }
  }

  [[maybe_unused]] const float thread_max = a;

  // The CTA's partial: each warp's, then every warp combines the warps' (no second barrier).
  warp_combine<k_softmax>(a, b);
  if (lane == 0) warp_a[warp] = a, warp_b[warp] = b;
  __syncthreads();
  a = lane < k_warps ? warp_a[lane] : k_identity;
  b = lane < k_warps ? warp_b[lane] : 0.0f;
  warp_combine<k_softmax>(a, b);
  // Lane p of warp 0 hands the CTA's partial to CTA p.
  sm90::cluster_wait();
  if (warp == 0 && lane < static_cast<int>(ctas))
    sm90::st_cluster_f32x2(sm90::cluster_map(smem_u32(&parts[rank]), lane), a, b);
  sm90::cluster_arrive();
  sm90::cluster_wait();

  // The row's reduction: lane p reads CTA p's partial.
  a = lane < static_cast<int>(ctas) ? parts[lane].x : k_identity;
  b = lane < static_cast<int>(ctas) ? parts[lane].y : 0.0f;
  warp_combine<k_softmax>(a, b);

  if constexpr (k_keep_exp) {
    // exp(x - row max) / row sum = exp(x - thread max) * exp(thread max - row max) / row sum.
    const float scale = thread_max == -INFINITY ? 0.0f : __fdividef(fast_exp2((thread_max - a) * k_log2e), b);
#pragma unroll 4
    for (int vi = threadIdx.x; vi < mine; vi += k_threads) {
      const Vec16<__half> ex = *reinterpret_cast<const Vec16<__half>*>(&slice[vi]);
      Vec16<T> out;
#pragma unroll
      for (int e = 0; e < k_e; ++e) out.v[e] = from_float<T>(__half2float(ex.v[e]) * scale);
      store_vec16_stream_sm70(ys + static_cast<long>(vi) * k_e, out);
    }
  } else if constexpr (k_softmax) {
    const float shift = a * k_log2e, inv = __fdividef(1.0f, b);
#pragma unroll 4
    for (int vi = threadIdx.x; vi < mine; vi += k_threads) {
      const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(&slice[vi]);
      Vec16<T> out;
#pragma unroll
      for (int e = 0; e < k_e; ++e) out.v[e] = from_float<T>(fast_exp2(fmaf(to_float(v.v[e]), k_log2e, -shift)) * inv);
      store_vec16_stream_sm70(ys + static_cast<long>(vi) * k_e, out);
    }
  } else {
    const float inv = rsqrtf(__fdividef(a, static_cast<float>(cols)) + eps);
#pragma unroll 4
    for (int vi = threadIdx.x; vi < mine; vi += k_threads) {
      const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(&slice[vi]);
      const Vec16<T> wv = load_vec16(w + static_cast<long>(first + vi) * k_e);
      Vec16<T> out;
#pragma unroll
      for (int e = 0; e < k_e; ++e) out.v[e] = from_float<T>(to_float(v.v[e]) * inv * to_float(wv.v[e]));
      store_vec16_stream_sm70(ys + static_cast<long>(vi) * k_e, out);
    }
  }
}

// The launch configuration of `plan` for `kernel`: a cluster of plan.ctas CTAs per row.
struct ClusterLaunch {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr{};
};

inline void cluster_launch_config(ClusterLaunch& l, const RowwiseArgs& a, const ClusterPlan& plan, int threads,
                                  cudaStream_t stream) {
  l.attr.id = cudaLaunchAttributeClusterDimension;
  l.attr.val.clusterDim.x = static_cast<unsigned>(plan.ctas);
  l.attr.val.clusterDim.y = 1;
  l.attr.val.clusterDim.z = 1;
  l.cfg.gridDim = dim3(static_cast<unsigned>(static_cast<long>(a.rows) * plan.ctas));
  l.cfg.blockDim = dim3(static_cast<unsigned>(threads));
  l.cfg.dynamicSmemBytes = static_cast<std::size_t>(plan.cta_vecs) * 16;
  l.cfg.stream = stream;
  l.cfg.attrs = &l.attr;
  l.cfg.numAttrs = 1;
}

template <typename T, int k_threads, int k_slice_vecs, bool k_softmax>
cudaError_t launch_rowwise_cluster_typed(const RowwiseArgs& a, const ClusterPlan& plan, cudaStream_t stream,
                                         int* fitting_clusters) {
  auto* kernel = rowwise_cluster_kernel<T, k_threads, k_slice_vecs, k_softmax>;
  if (plan.ctas > k_cluster_max_portable_ctas) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (e != cudaSuccess) return e;
  }
  if constexpr (k_slice_vecs * 16 > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, k_slice_vecs * 16);
    if (e != cudaSuccess) return e;
  }
  ClusterLaunch l;
  cluster_launch_config(l, a, plan, k_threads, stream);
  if (fitting_clusters != nullptr) return cudaOccupancyMaxActiveClusters(fitting_clusters, kernel, &l.cfg);
  const cudaError_t e = cudaLaunchKernelEx(&l.cfg, kernel, static_cast<const T*>(a.x), static_cast<const T*>(a.w),
                                           static_cast<T*>(a.y), a.cols, plan.cta_vecs, a.eps);
  return e != cudaSuccess ? e : cudaGetLastError();
}

// Launches plan's kernel for a's dtype, or with `fitting_clusters` set only asks how many of its
// clusters the device holds at once (0: the cluster does not fit).
template <int k_threads, int k_slice_vecs, bool k_softmax>
cudaError_t launch_rowwise_cluster(const RowwiseArgs& a, const ClusterPlan& plan, cudaStream_t stream,
                                   int* fitting_clusters = nullptr) {
  switch (a.dtype) {
    case DType::f32:
      return launch_rowwise_cluster_typed<float, k_threads, k_slice_vecs, k_softmax>(a, plan, stream, fitting_clusters);
    case DType::f16:
      return launch_rowwise_cluster_typed<__half, k_threads, k_slice_vecs, k_softmax>(a, plan, stream,
                                                                                      fitting_clusters);
    case DType::bf16:
      return launch_rowwise_cluster_typed<__nv_bfloat16, k_threads, k_slice_vecs, k_softmax>(a, plan, stream,
                                                                                             fitting_clusters);
    case DType::e4m3:
    case DType::e5m2: break;  // 8-bit inputs are gemm_fp8's only
  }
  return cudaErrorInvalidValue;
}

// "" when the plan's cluster fits the current device, otherwise why not. Answers are kept per
// device, dtype and cluster size (the query costs a few microseconds of host time).
template <int k_threads, int k_slice_vecs, bool k_softmax>
std::string rowwise_cluster_fit_refusal(const RowwiseArgs& a, const ClusterPlan& plan) {
  static int known[16][3][k_cluster_max_ctas + 1] = {};  // 0 unknown, 1 fits, 2 does not
  int dev = 0;
  if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess)
    return std::string("no CUDA device to run a cluster on: ") + cudaGetErrorString(e);
  const int t = a.dtype == DType::f32 ? 0 : a.dtype == DType::f16 ? 1 : 2;
  int* slot = dev < 16 ? &known[dev][t][plan.ctas] : nullptr;
  if (slot == nullptr || *slot == 0) {
    int clusters = 0;
    const cudaError_t e = launch_rowwise_cluster<k_threads, k_slice_vecs, k_softmax>(a, plan, nullptr, &clusters);
    if (e != cudaSuccess) {
      cudaGetLastError();  // the query's error is this answer, not the next launch's
      return "cannot ask the device about a cluster of " + std::to_string(plan.ctas) +
             " CTAs: " + cudaGetErrorString(e);
    }
    if (slot != nullptr) *slot = clusters > 0 ? 1 : 2;
    if (clusters <= 0) slot = nullptr;
  }
  if (slot != nullptr && *slot == 1) return "";
  return "a cluster of " + std::to_string(plan.ctas) + " CTAs of " + std::to_string(k_threads) +
         " threads does not fit this device; rows of this length need fewer CTAs (the vec16 long_b1024 instance)";
}

// An instance's supports() and launch: k_threads threads a CTA, slices of at most
// k_slice_bytes; the family (rmsnorm with its weight, or softmax) by k_softmax.
template <bool k_softmax, int k_threads, int k_slice_bytes>
std::string cluster_supports(const Problem& p) {
  if constexpr (k_softmax) {
    if (p.family != Family::softmax) return "not a softmax problem";
  } else {
    if (p.family != Family::rmsnorm) return "not an rmsnorm problem";
    if (p.rowwise.w == nullptr && p.rowwise.x != nullptr) return "rmsnorm needs a weight";
  }
  const ClusterPlan plan = plan_rowwise_cluster(p.rowwise, k_slice_bytes / 16);
  if (!plan.refusal.empty()) return plan.refusal;
  if (p.rowwise.x == nullptr) return "";  // no buffers yet: the device is asked at the launch's problem
  return rowwise_cluster_fit_refusal<k_threads, k_slice_bytes / 16, k_softmax>(p.rowwise, plan);
}

template <bool k_softmax, int k_threads, int k_slice_bytes>
cudaError_t cluster_launch(const Problem& p, cudaStream_t stream) {
  const ClusterPlan plan = plan_rowwise_cluster(p.rowwise, k_slice_bytes / 16);
  if (!plan.refusal.empty()) return cudaErrorInvalidValue;  // supports() says why
  return launch_rowwise_cluster<k_threads, k_slice_bytes / 16, k_softmax>(p.rowwise, plan, stream);
}

// The config's bounds are plan_rowwise_cluster's: outside them the instance takes no row at all
// (run_*, which the selection reads as where it runs), where the vec16 instances' max_row_bytes
// and row_align_bytes say where they hand a row to another kernel.
static_assert(k_cluster_shortest_row_bytes == 32784 && k_cluster_row_align_bytes == 16 && k_cluster_max_ctas == 16);

// One instance of `family` (rmsnorm or softmax): threads a CTA, slices of slice_kb KB, rows up
// to max_row_bytes (checked against the plan's bound).
#define KPORT_ROWWISE_CLUSTER(family, softmax, threads, slice_kb, max_row_bytes)                           \
  static_assert(kport::kernels::cluster_max_row_bytes(slice_kb * 1024 / 16) == max_row_bytes);             \
  const kport::kernels::Instance k_##family##_cluster_b##threads##_s##slice_kb{                            \
      kport::kernels::Family::family,                                                                      \
      "cluster",                                                                                           \
      #family ".cluster.b" #threads "_s" #slice_kb "k",                                                    \
      {"cluster", "dsmem", "tma", "mbarrier"},                                                             \
      {kport::kernels::DType::bf16, kport::kernels::DType::f16, kport::kernels::DType::f32},               \
      R"({"load_bytes":16,"threads_per_cta":)" #threads R"(,"max_slice_kb":)" #slice_kb                    \
      R"(,"staging":"shared memory, cp.async.bulk","max_cluster_ctas":16,"passes":1)"                      \
      R"(,"run_min_row_bytes":32784,"run_max_row_bytes":)" #max_row_bytes R"(,"run_row_align_bytes":16})", \
      &kport::kernels::rowwise_cluster::cluster_supports<softmax, threads, slice_kb * 1024>,               \
      &kport::kernels::rowwise_cluster::cluster_launch<softmax, threads, slice_kb * 1024>};                \
  KPORT_REGISTER_KERNEL(k_##family##_cluster_b##threads##_s##slice_kb)

}  // namespace kport::kernels::rowwise_cluster
