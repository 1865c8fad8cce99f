// Split K over the grid for the decode gemms (gemm.gemv, gemm.decode_mma): C[rows, N] for a
// few rows, each block a segment of columns over one slice of K. Each split writes its fp32
// partial sums to a workspace laid out [split][plane], a plane holding the rows' sums row
// after row (row r's column c at r * n + c); the last split of a segment to finish (a counter
// per segment) adds the splits in split order, so the result does not depend on which split
// ran first.
//
// Contract: the workspace is this process's, per device, grown on the first launch that needs
// more (cudaMalloc, outside any timed launch once warmed up) and shared by every kernel that
// includes this file; launches that use it must not run concurrently on one device, as with a
// cuBLAS handle's workspace. The counters are zero between launches: the last split of each
// segment resets its own.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <type_traits>
#include <vector>

#include "common/convert.cuh"

namespace kport::kernels {

// How K is cut: `splits` slices of `chunk` rows (the last one shorter), one per grid row.
struct SplitK {
  int chunk, splits;
};

// Split K until about `blocks_per_sm` blocks per SM are busy, each split at least two groups
// of `group` rows deep and at most `chunk_most` rows (what the block's shared copy of A
// holds); chunk is a multiple of `group` and chunk_most must be one too.
inline SplitK plan_split_k(int k, int segments, int sms, int blocks_per_sm, int group, int chunk_most) {
  const int want = std::max(1, blocks_per_sm * sms / segments);
  const int most = std::max(1, k / (2 * group));
  const int splits_wanted = std::max(std::min(want, most), (k + chunk_most - 1) / chunk_most);
  const int k_chunk = (k + splits_wanted - 1) / splits_wanted;
  const int chunk = std::min(chunk_most, (k_chunk + group - 1) / group * group);
  return {chunk, (k + chunk - 1) / chunk};
}

// The current device's SM count (a driver attribute read, no synchronisation).
inline cudaError_t sm_count(int& sms) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
}

// The workspace of the current device, at least `floats` partial sums and `counters` counters.
inline cudaError_t split_k_workspace(std::size_t floats, std::size_t counters, float*& partial, unsigned*& done) {
  struct Workspace {
    float* partial = nullptr;
    std::size_t partial_floats = 0;
    unsigned* done = nullptr;
    std::size_t done_count = 0;
  };
  static std::mutex mutex;
  static std::vector<Workspace> per_device;
  std::lock_guard<std::mutex> lock(mutex);
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (per_device.size() <= static_cast<std::size_t>(device)) per_device.resize(device + 1);
  Workspace& w = per_device[device];
  if (w.partial_floats < floats) {
    if (w.partial) cudaFree(w.partial);
    w.partial = nullptr, w.partial_floats = 0;
    if (cudaError_t e = cudaMalloc(&w.partial, floats * sizeof(float)); e != cudaSuccess) return e;
    w.partial_floats = floats;
  }
  if (w.done_count < counters) {
    if (w.done) cudaFree(w.done);
    w.done = nullptr, w.done_count = 0;
    if (cudaError_t e = cudaMalloc(&w.done, counters * sizeof(unsigned)); e != cudaSuccess) return e;
    if (cudaError_t e = cudaMemset(w.done, 0, counters * sizeof(unsigned)); e != cudaSuccess) return e;
    w.done_count = counters;
  }
  partial = w.partial, done = w.done;
  return cudaSuccess;
}

// Called by every thread of the block once its partial sums are stored, each storing thread
// having fenced them (__threadfence): true in every thread of the last split of segment
// blockIdx.x to get here, which may then read every split's sums.
__device__ inline bool last_split_to_finish(unsigned* done) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&done[blockIdx.x], 1u) == gridDim.y - 1;
  __syncthreads();
  if (!last) return false;
  __threadfence();
  return true;
}

// The last split's work: C's rows [0, rows) of columns [col0, col0 + seg) (those below n) are
// the splits' sums added in split order, the whole block at once, a thread four consecutive
// columns (16-byte partial loads), eight splits' loads in flight; then the segment's counter
// is reset. n, col0 and seg are multiples of 4; Threads is the block's size.
template <typename T, int Threads>
__device__ inline void add_splits_in_order(const float* __restrict__ partial, T* __restrict__ c, unsigned* done,
                                           int rows, int n, long long plane, int col0, int seg) {
  const int splits = static_cast<int>(gridDim.y);
  const int quads = seg / 4;
  for (int i = threadIdx.x; i < rows * quads; i += Threads) {
    const int m = i / quads, cc = col0 + i % quads * 4;
    if (cc < n) {
      const float* p = partial + static_cast<long long>(m) * n + cc;
      float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      const auto add = [&sum](float4 v) { sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w; };
      int s = 0;
#pragma unroll 1
      for (; s + 8 <= splits; s += 8) {
        float4 part[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) part[j] = __ldcg(reinterpret_cast<const float4*>(p + (s + j) * plane));
#pragma unroll
        for (int j = 0; j < 8; ++j) add(part[j]);
      }
#pragma unroll 1
      for (; s < splits; ++s) add(__ldcg(reinterpret_cast<const float4*>(p + s * plane)));
      T* out = c + static_cast<long long>(m) * n + cc;
      if constexpr (std::is_same_v<T, float>) {
        *reinterpret_cast<float4*>(out) = sum;
      } else {
        *reinterpret_cast<uint2*>(out) = make_uint2(pack2<T>(sum.x, sum.y), pack2<T>(sum.z, sum.w));
      }
    }
  }
  if (threadIdx.x == 0) done[blockIdx.x] = 0;  // ready for the next launch
}

}  // namespace kport::kernels
