// Plain fp32 attention for checking large shapes on the GPU: one 128-thread block per
// (query row, head); all scores of the row are kept in shared memory, softmax with expf in
// fp32, then P*V with threads over the head dimension. Slow and simple on purpose: it
// shares no code or tiling with the kernels it checks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/convert.cuh"
#include "common/cuda_check.h"
#include "common/warp_reduce.cuh"
#include "device/harness_kernels.h"

namespace kport::harness {

namespace {

using kport::kernels::to_float;

constexpr int k_threads = 128;

template <typename T>
__global__ void __launch_bounds__(k_threads)
attention_reference_kernel(const T* q, const T* k, const T* v, float* o, float* lse,
                           int seq_len, int d, bool causal, float scale) {
  extern __shared__ float sm[];
  float* qrow = sm;       // [d]
  float* sc = sm + d;     // [seq_len]
  __shared__ float scratch[32];
  const int i = blockIdx.x;
  const long head_off = static_cast<long>(blockIdx.y) * seq_len * d;
  for (int t = threadIdx.x; t < d; t += k_threads)
    qrow[t] = to_float(q[head_off + static_cast<long>(i) * d + t]);
  __syncthreads();
  const int keys = causal ? i + 1 : seq_len;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < keys; j += k_threads) {
    const T* kj = k + head_off + static_cast<long>(j) * d;
    float dot = 0.0f;
    for (int t = 0; t < d; ++t) dot = fmaf(qrow[t], to_float(kj[t]), dot);
    sc[j] = dot * scale;
    mx = fmaxf(mx, sc[j]);
  }
  mx = kport::kernels::block_reduce_max(mx, scratch);
  float sum = 0.0f;
  for (int j = threadIdx.x; j < keys; j += k_threads) {
    sc[j] = expf(sc[j] - mx);
    sum += sc[j];
  }
  sum = kport::kernels::block_reduce_sum(sum, scratch);  // its barriers also publish sc[]
  for (int t = threadIdx.x; t < d; t += k_threads) {
    float acc = 0.0f;
    for (int j = 0; j < keys; ++j) acc = fmaf(sc[j], to_float(v[head_off + static_cast<long>(j) * d + t]), acc);
    o[head_off + static_cast<long>(i) * d + t] = acc / sum;
  }
  if (threadIdx.x == 0) lse[static_cast<long>(blockIdx.y) * seq_len + i] = mx + logf(sum);
}

template <typename T>
cudaError_t launch(const kport::kernels::AttentionArgs& a, float* o, float* lse,
                   cudaStream_t stream) {
  const size_t smem = sizeof(float) * (static_cast<size_t>(a.head_dim) + a.seq_len);
  KPORT_CUDA_CHECK(cudaFuncSetAttribute(attention_reference_kernel<T>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  const dim3 grid(static_cast<unsigned>(a.seq_len), static_cast<unsigned>(a.batch * a.heads));
  attention_reference_kernel<T><<<grid, k_threads, smem, stream>>>(
      static_cast<const T*>(a.q), static_cast<const T*>(a.k), static_cast<const T*>(a.v), o, lse,
      a.seq_len, a.head_dim, a.causal, a.scale);
  return cudaGetLastError();
}

}  // namespace

cudaError_t attention_reference_fp32(const kport::kernels::AttentionArgs& a, float* o_ref,
                                     float* lse_ref, cudaStream_t stream) {
  if (a.seq_len > k_attention_reference_max_len || a.batch * a.heads > 65535)
    return cudaErrorInvalidValue;
  switch (a.dtype) {
    case DType::bf16: return launch<__nv_bfloat16>(a, o_ref, lse_ref, stream);
    case DType::f16: return launch<__half>(a, o_ref, lse_ref, stream);
    case DType::f32: return launch<float>(a, o_ref, lse_ref, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace kport::harness
