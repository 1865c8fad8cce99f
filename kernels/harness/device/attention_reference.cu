// fp32 attention for checking large shapes on the GPU, computed by its definition: per head
// the scores S = Q K^T and the output O = softmax(scale * S) V as cuBLAS fp32 gemms in
// pedantic math (no reduced precision, as the gemm reference), and between them a plain
// row kernel: causal mask, row max, sum of exp, P = exp(scale * S - max) / sum, and the
// log-sum-exp. The scores are materialized, so heads (and, for long sequences, query rows)
// go in chunks whose scores fit a fixed scratch. It shares no code or tiling with the
// kernels it checks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "common/cuda_check.h"
#include "common/warp_reduce.cuh"
#include "device/harness_kernels.h"

namespace kport::harness {

namespace {

constexpr int k_threads = 256;
constexpr std::size_t k_score_budget = std::size_t{1} << 30;  // bytes of scores per chunk

struct Chunking {
  long heads = 1;  // heads per chunk
  long rows = 1;   // query rows per chunk
};

Chunking chunking(const kport::kernels::AttentionArgs& a) {
  const long bh = static_cast<long>(a.batch) * a.heads, l = a.seq_len;
  const long row_bytes = l * static_cast<long>(sizeof(float));
  Chunking c;
  c.rows = std::clamp(static_cast<long>(k_score_budget) / row_bytes, 1L, l);
  if (c.rows == l) c.heads = std::clamp(static_cast<long>(k_score_budget) / (l * row_bytes), 1L, std::min(bh, 65535L));
  return c;
}

// One block per score row of the chunk: `s` holds the raw dot products of query row
// `row0 + r` of head `h0 + blockIdx.y` with every key; it becomes that row of P.
__global__ void __launch_bounds__(k_threads)
    softmax_rows(float* s, float* lse, int seq_len, long rows, long row0, long h0, bool causal, float scale) {
  __shared__ float scratch[32];
  const long r = blockIdx.x;
  const long i = row0 + r;  // the query row
  float* row = s + (static_cast<long>(blockIdx.y) * rows + r) * seq_len;
  const long keys = causal ? i + 1 : seq_len;
  float mx = -INFINITY;
  for (long j = threadIdx.x; j < keys; j += k_threads) mx = fmaxf(mx, row[j] * scale);
  mx = kport::kernels::block_reduce_max(mx, scratch);
  float sum = 0.0f;
  for (long j = threadIdx.x; j < keys; j += k_threads) sum += expf(row[j] * scale - mx);
  sum = kport::kernels::block_reduce_sum(sum, scratch);
  for (long j = threadIdx.x; j < seq_len; j += k_threads) row[j] = j < keys ? expf(row[j] * scale - mx) / sum : 0.0f;
  if (threadIdx.x == 0) lse[(h0 + blockIdx.y) * seq_len + i] = mx + logf(sum);
}

}  // namespace

std::size_t attention_reference_scratch_bytes(const kport::kernels::AttentionArgs& a) {
  const Chunking c = chunking(a);
  const std::size_t head = std::size_t(a.seq_len) * a.head_dim * sizeof(float);
  // Scores of a chunk, and Q, K, V of its heads widened to fp32.
  return std::size_t(c.heads) * c.rows * a.seq_len * sizeof(float) + 3 * std::size_t(c.heads) * head;
}

cudaError_t attention_reference_fp32(const kport::kernels::AttentionArgs& a, cublasHandle_t cublas, void* scratch,
                                     float* o_ref, float* lse_ref, cudaStream_t stream) {
  if (a.seq_len <= 0 || a.head_dim <= 0 || a.batch * a.heads <= 0) return cudaErrorInvalidValue;
  const Chunking c = chunking(a);
  const long bh = static_cast<long>(a.batch) * a.heads, l = a.seq_len, d = a.head_dim;
  const std::size_t elem = kport::kernels::dtype_size(a.dtype);
  float* s = static_cast<float*>(scratch);
  float* q = s + c.heads * c.rows * l;
  float* k = q + c.heads * l * d;
  float* v = k + c.heads * l * d;
  if (cublasSetStream(cublas, stream) != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
  cublasSetMathMode(cublas, CUBLAS_PEDANTIC_MATH);
  cudaError_t err = cudaSuccess;
  const float one = 1.0f, zero = 0.0f;
  for (long h0 = 0; h0 < bh && err == cudaSuccess; h0 += c.heads) {
    const long heads = std::min(c.heads, bh - h0);
    const std::size_t at = std::size_t(h0) * l * d, n = std::size_t(heads) * l * d;
    err = widen_to_fp32(static_cast<const char*>(a.q) + at * elem, n, a.dtype, q, stream);
    if (err == cudaSuccess) err = widen_to_fp32(static_cast<const char*>(a.k) + at * elem, n, a.dtype, k, stream);
    if (err == cudaSuccess) err = widen_to_fp32(static_cast<const char*>(a.v) + at * elem, n, a.dtype, v, stream);
    for (long r0 = 0; r0 < l && err == cudaSuccess; r0 += c.rows) {
      const long rows = std::min(c.rows, l - r0);
      // Row-major S[rows x l] = Q[r0.., :] K^T is column-major S^T = K Q^T: m = l keys,
      // n = rows, k = d.
      cublasStatus_t st = cublasSgemmStridedBatched(cublas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(l),
                                                    static_cast<int>(rows), static_cast<int>(d), &one, k,
                                                    static_cast<int>(d), l * d, q + r0 * d, static_cast<int>(d), l * d,
                                                    &zero, s, static_cast<int>(l), rows * l, static_cast<int>(heads));
      if (st != CUBLAS_STATUS_SUCCESS) {
        err = cudaErrorUnknown;
        break;
      }
      softmax_rows<<<dim3(static_cast<unsigned>(rows), static_cast<unsigned>(heads)), k_threads, 0, stream>>>(
          s, lse_ref, a.seq_len, rows, r0, h0, a.causal, a.scale);
      err = cudaGetLastError();
      if (err != cudaSuccess) break;
      // Row-major O[rows x d] = P V is column-major O^T = V^T P^T: m = d, n = rows, k = l.
      st = cublasSgemmStridedBatched(cublas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(d), static_cast<int>(rows),
                                     static_cast<int>(l), &one, v, static_cast<int>(d), l * d, s, static_cast<int>(l),
                                     rows * l, &zero, o_ref + at + r0 * d, static_cast<int>(d), l * d,
                                     static_cast<int>(heads));
      if (st != CUBLAS_STATUS_SUCCESS) err = cudaErrorUnknown;
    }
  }
  cublasSetMathMode(cublas, CUBLAS_DEFAULT_MATH);
  return err;
}

}  // namespace kport::harness
