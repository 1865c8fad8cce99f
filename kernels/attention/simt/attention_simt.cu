// attention forward, portable SIMT variant: O = softmax(scale * Q K^T) V per (batch, head),
// Q, K, V, O as [B,H,L,d] in bf16 or fp16, d in {64, 128}, optional causal mask, fp32
// softmax statistics (lse) out.
//
// Algorithm (online softmax, FlashAttention-style, on CUDA cores): a block of 8 warps owns
// 32 consecutive queries, 4 per warp. K and V tiles of 32 keys are staged in shared memory
// as fp32. Scores: lane j computes the dot products of key j with the warp's 4 queries
// (queries read as float4 broadcasts, keys from a row padded to d+1 floats, conflict-free).
// The running max and rescaling follow the online softmax in the log2 domain; P goes through
// shared memory and each lane accumulates d/32 output columns of its 4 rows. Causal blocks
// stop at their last query and warps skip tiles wholly above their diagonal.
// Constraints: q, k, v, o 16-byte aligned; B and H each <= 65535 (attention_grid.cuh). Builds
// for every target; dynamic shared memory is 53 KB at d=128 (opt-in, within every target's
// limit).
#include <cmath>
#include <string>

#include "common/attention_grid.cuh"
#include "common/convert.cuh"
#include "common/cuda_check.h"
#include "common/vector_io.cuh"
#include "kport/kernels/registry.h"

namespace {

using namespace kport::kernels;

constexpr int k_warps = 8;
constexpr int k_rows_per_warp = 4;
constexpr int k_block_queries = k_warps * k_rows_per_warp;  // 32
constexpr int k_tile_keys = 32;
constexpr int k_threads = k_warps * 32;

template <int k_d>
constexpr size_t smem_bytes() {
  return sizeof(float) * (k_tile_keys * (k_d + 1) + k_tile_keys * k_d + k_block_queries * k_d +
                          k_warps * k_tile_keys * k_rows_per_warp);
}

// Copies `rows` rows of d elements starting at `src` into fp32 shared memory with row pitch
// `pitch`; rows at or beyond `valid` are zero. 16-byte global loads.
template <typename T, int k_d>
__device__ __forceinline__ void stage_rows(float* dst, int pitch, const T* src, int rows, int valid, float factor) {
  constexpr int k_e = Vec16<T>::k_count;
  constexpr int k_vecs_per_row = k_d / k_e;
  for (int idx = threadIdx.x; idx < rows * k_vecs_per_row; idx += k_threads) {
    const int r = idx / k_vecs_per_row, c = (idx % k_vecs_per_row) * k_e;
    float* out = dst + r * pitch + c;
    if (r < valid) {
      const Vec16<T> v = load_vec16(src + static_cast<long>(r) * k_d + c);
#pragma unroll
      for (int e = 0; e < k_e; ++e) out[e] = to_float(v.v[e]) * factor;
    } else {
#pragma unroll
      for (int e = 0; e < k_e; ++e) out[e] = 0.0f;
    }
  }
}

template <typename T, int k_d>
__global__ void __launch_bounds__(k_threads)
    attention_simt_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ o,
                          float* __restrict__ lse, int seq_len, bool causal, float scale_log2) {
  constexpr int k_cols = k_d / 32;  // output columns per lane
  extern __shared__ __align__(16) float smem[];
  float* ks = smem;                          // [32][d+1]
  float* vs = ks + k_tile_keys * (k_d + 1);  // [32][d]
  float* qs = vs + k_tile_keys * k_d;        // [32][d], pre-scaled by scale*log2(e)
  float* ps = qs + k_block_queries * k_d;    // [warps][32 keys][4 rows]

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long head = attention_grid::head_index();
  const long head_off = head * seq_len * k_d;
  const int q0 = blockIdx.x * k_block_queries;
  const int row0 = q0 + warp * k_rows_per_warp;  // first query of this warp

  stage_rows<T, k_d>(qs, k_d, q + head_off + static_cast<long>(q0) * k_d, k_block_queries, seq_len - q0, scale_log2);

  float m[k_rows_per_warp], l[k_rows_per_warp], acc[k_rows_per_warp][k_cols];
#pragma unroll
  for (int r = 0; r < k_rows_per_warp; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;  // this lane's share of the row sum
#pragma unroll
    for (int c = 0; c < k_cols; ++c) acc[r][c] = 0.0f;
  }

  const int kv_end = causal ? min(seq_len, q0 + k_block_queries) : seq_len;
  const int warp_last = row0 + k_rows_per_warp - 1;
  float4* pw = reinterpret_cast<float4*>(ps) + warp * k_tile_keys;
  for (int kt = 0; kt < kv_end; kt += k_tile_keys) {
    __syncthreads();  // previous tile fully consumed (and qs staged on the first pass)
    const int valid = seq_len - kt;
    stage_rows<T, k_d>(ks, k_d + 1, k + head_off + static_cast<long>(kt) * k_d, k_tile_keys, valid, 1.0f);
    stage_rows<T, k_d>(vs, k_d, v + head_off + static_cast<long>(kt) * k_d, k_tile_keys, valid, 1.0f);
    __syncthreads();
    if (causal && kt > warp_last) continue;  // whole tile above this warp's diagonal

    // Scores of key kt+lane against the warp's 4 queries.
    float s[k_rows_per_warp] = {};
    const float* krow = ks + lane * (k_d + 1);
    const float* qw = qs + warp * k_rows_per_warp * k_d;
#pragma unroll 4
    for (int t = 0; t < k_d; t += 4) {
      const float k0 = krow[t], k1 = krow[t + 1], k2 = krow[t + 2], k3 = krow[t + 3];
#pragma unroll
      for (int r = 0; r < k_rows_per_warp; ++r) {
        const float4 qv = *reinterpret_cast<const float4*>(qw + r * k_d + t);
        s[r] = fmaf(qv.x, k0, fmaf(qv.y, k1, fmaf(qv.z, k2, fmaf(qv.w, k3, s[r]))));
      }
    }
    const int key = kt + lane;
    float p[k_rows_per_warp];
#pragma unroll
    for (int r = 0; r < k_rows_per_warp; ++r) {
      const bool masked = key >= seq_len || (causal && key > row0 + r);
      const float sr = masked ? -INFINITY : s[r];
      float tile_max = sr;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, off));
      const float m_new = fmaxf(m[r], tile_max);  // finite: key 0 is visible to every row
      const float alpha = exp2f(m[r] - m_new);
      p[r] = masked ? 0.0f : exp2f(sr - m_new);
      l[r] = l[r] * alpha + p[r];
#pragma unroll
      for (int c = 0; c < k_cols; ++c) acc[r][c] *= alpha;
      m[r] = m_new;
    }
    pw[lane] = make_float4(p[0], p[1], p[2], p[3]);
    __syncwarp();
#pragma unroll 8
    for (int j = 0; j < k_tile_keys; ++j) {
      const float4 pj = pw[j];
      const float* vrow = vs + j * k_d + lane;
#pragma unroll
      for (int c = 0; c < k_cols; ++c) {
        const float vv = vrow[c * 32];
        acc[0][c] = fmaf(pj.x, vv, acc[0][c]);
        acc[1][c] = fmaf(pj.y, vv, acc[1][c]);
        acc[2][c] = fmaf(pj.z, vv, acc[2][c]);
        acc[3][c] = fmaf(pj.w, vv, acc[3][c]);
      }
    }
    __syncwarp();  // pw is rewritten by the next tile
  }

#pragma unroll
  for (int r = 0; r < k_rows_per_warp; ++r) {
    float total = l[r];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) total += __shfl_xor_sync(0xffffffffu, total, off);
    const int row = row0 + r;
    if (row >= seq_len) continue;
    const float inv = 1.0f / total;
    T* orow = o + head_off + static_cast<long>(row) * k_d + lane;
#pragma unroll
    for (int c = 0; c < k_cols; ++c) orow[c * 32] = from_float<T>(acc[r][c] * inv);
    if (lane == 0) lse[head * seq_len + row] = (m[r] + log2f(total)) * 0.69314718055994531f;
  }
}

std::string supports(const Problem& p) {
  if (p.family != Family::attention) return "not an attention problem";
  const AttentionArgs& a = p.attention;
  if (a.dtype == DType::f32) return "attention takes bf16 or fp16 inputs";
  if (a.head_dim != 64 && a.head_dim != 128)
    return "head_dim " + std::to_string(a.head_dim) + " not supported (64 or 128)";
  if (a.batch <= 0 || a.heads <= 0 || a.seq_len <= 0) return "b, h, l must be positive";
  if (auto why = attention_grid::refusal(a); !why.empty()) return why;
  if (a.q != nullptr && (!is_aligned16(a.q) || !is_aligned16(a.k) || !is_aligned16(a.v)))
    return "q, k, v must be 16-byte aligned";
  return "";
}

template <typename T, int k_d>
cudaError_t launch_typed(const AttentionArgs& a, cudaStream_t s) {
  constexpr size_t k_smem = smem_bytes<k_d>();
  KPORT_CUDA_CHECK(cudaFuncSetAttribute(attention_simt_kernel<T, k_d>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(k_smem)));
  const dim3 grid = attention_grid::grid(static_cast<unsigned>((a.seq_len + k_block_queries - 1) / k_block_queries), a);
  attention_simt_kernel<T, k_d><<<grid, k_threads, k_smem, s>>>(static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                                                static_cast<const T*>(a.v), static_cast<T*>(a.o), a.lse,
                                                                a.seq_len, a.causal, a.scale * 1.44269504088896341f);
  return cudaGetLastError();
}

cudaError_t launch(const Problem& p, cudaStream_t stream) {
  const AttentionArgs& a = p.attention;
  if (a.dtype == DType::bf16)
    return a.head_dim == 64 ? launch_typed<__nv_bfloat16, 64>(a, stream) : launch_typed<__nv_bfloat16, 128>(a, stream);
  if (a.dtype == DType::f16)
    return a.head_dim == 64 ? launch_typed<__half, 64>(a, stream) : launch_typed<__half, 128>(a, stream);
  return cudaErrorInvalidValue;
}

const Instance k_attention_simt{
    Family::attention,
    "simt",
    "attention.simt.q32_k32",
    {"simt"},
    {DType::bf16, DType::f16},
    std::string(R"({"queries_per_block":32,"keys_per_tile":32,"warps":8,"head_dims":[64,128],)") +
        attention_grid::k_limits_config + "}",
    &supports,
    &launch};
KPORT_REGISTER_KERNEL(k_attention_simt);

}  // namespace
