// attention.mma_sync: forward attention in the FlashAttention-2 style for sm_80 and later.
//
// Algorithm: one CTA computes Br = 16 * Warps query rows of one (batch, head); each warp
// owns 16 rows. The Q tile is loaded once with cp.async and kept in registers as
// m16n8k16 A fragments (ldmatrix). K and V tiles of Bc keys are double-buffered in
// shared memory with cp.async (block j+1 loads while block j computes). Per block:
// S = Q.K^T with mma.sync (fp32 accumulators), mask, online softmax with exp2 and the
// scale folded into log2(e), P re-packed in registers as the A operand, O += P.V with
// V read through ldmatrix.trans. Shared-memory rows are XOR-swizzled in 16-byte chunks
// so ldmatrix and cp.async are free of bank conflicts. Causal CTAs run heaviest first
// and stop at the diagonal; only the diagonal and tail blocks are masked.
//
// Target: sm_80 through sm_12x (mma.sync.m16n8k16, ldmatrix, cp.async). Constraints:
// head_dim in {64, 128}, bf16 or fp16, any seq_len >= 1 (rows past the end are
// zero-filled on load, masked as keys and not stored), positive softmax scale.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/attention_grid.cuh"
#include "common/convert.cuh"
#include "common/cp_async_sm80.cuh"
#include "common/fast_math.cuh"
#include "common/mma_sync_sm80.cuh"
#include "common/smem.cuh"
#include "common/warp_reduce.cuh"

namespace kport::kernels::attention_mma_sync {

using namespace kport::kernels::sm80;

template <int D, int Warps, int Bc, int MinBlocks>
struct TileConfig {
  static constexpr int k_min_blocks = MinBlocks;  // __launch_bounds__ occupancy hint
  static constexpr int k_d = D;
  static constexpr int k_warps = Warps;
  static constexpr int k_br = 16 * Warps;
  static constexpr int k_bc = Bc;
  static constexpr int k_threads = 32 * Warps;
  static constexpr int k_chunks = D / 8;  // 16-byte chunks per row
  static constexpr int k_q_bytes = k_br * D * 2;
  static constexpr int k_kv_bytes = Bc * D * 2;
  static constexpr int k_smem_bytes = k_q_bytes + 4 * k_kv_bytes;  // Q, K[2], V[2]

  static_assert(D == 64 || D == 128, "head_dim must be 64 or 128");
  static_assert(Warps >= 2 && Warps <= 8, "2 to 8 warps of 16 rows");
  static_assert(Bc % 16 == 0 && Bc >= 32 && Bc <= 128, "Bc: multiple of 16 in [32, 128]");
  static_assert(k_chunks >= 8, "the XOR swizzle needs at least 8 chunks per row");
  static_assert((k_br * k_chunks) % k_threads == 0 && (Bc * k_chunks) % k_threads == 0,
                "tile loads split evenly over the threads");
};

namespace detail {

// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled [rows][D] tile.
template <int D>
__device__ __forceinline__ uint32_t swz(int row, int chunk) {
  return static_cast<uint32_t>(row * D * 2 + ((chunk ^ (row & 7)) << 4));
}

// Copies `rows` rows of a [L, D] head starting at `row_begin` into a swizzled tile;
// rows at or past seq_len are zero-filled.
template <class Cfg, int Rows, class T>
__device__ __forceinline__ void load_tile(uint32_t tile, const T* head, int row_begin, int seq_len) {
  constexpr int k_per_thread = Rows * Cfg::k_chunks / Cfg::k_threads;
#pragma unroll
  for (int it = 0; it < k_per_thread; ++it) {
    const int idx = threadIdx.x + it * Cfg::k_threads;
    const int r = idx / Cfg::k_chunks;
    const int ch = idx % Cfg::k_chunks;
    const int g = row_begin + r;
    const bool valid = g < seq_len;
    const T* src = head + static_cast<size_t>(valid ? g : 0) * Cfg::k_d + ch * 8;
    cp_async_16_sm80(tile + swz<Cfg::k_d>(r, ch), src, valid);
  }
}

}  // namespace detail

template <class Cfg, class T, bool Causal>
__global__ void __launch_bounds__(Cfg::k_threads, Cfg::k_min_blocks)
    attention_fwd_mma_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                             T* __restrict__ out, float* __restrict__ lse, int seq_len, float scale_log2) {
  using namespace detail;
  constexpr int D = Cfg::k_d, Br = Cfg::k_br, Bc = Cfg::k_bc;
  constexpr bool k_bf16 = __is_same(T, __nv_bfloat16);
  extern __shared__ __align__(128) uint8_t smem_raw[];
  const uint32_t q_tile = smem_u32(smem_raw);
  const uint32_t k_tiles = q_tile + Cfg::k_q_bytes;
  const uint32_t v_tiles = k_tiles + 2 * Cfg::k_kv_bytes;

  const int bh = attention_grid::head_index();
  const int m_block = Causal ? (gridDim.x - 1 - blockIdx.x) : blockIdx.x;
  const int kv_len = Causal ? min(seq_len, (m_block + 1) * Br) : seq_len;
  const int n_blocks = (kv_len + Bc - 1) / Bc;
  const size_t head_off = static_cast<size_t>(bh) * seq_len * D;
  const T* q_head = q + head_off;
  const T* k_head = k + head_off;
  const T* v_head = v + head_off;

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int row0 = m_block * Br + warp * 16 + lane / 4;  // this thread's rows: row0, row0 + 8
  const int col_in_quad = 2 * (lane % 4);

  load_tile<Cfg, Br>(q_tile, q_head, m_block * Br, seq_len);
  load_tile<Cfg, Bc>(k_tiles, k_head, 0, seq_len);
  load_tile<Cfg, Bc>(v_tiles, v_head, 0, seq_len);
  cp_async_commit_sm80();

  uint32_t q_frag[D / 16][4];
  float o_acc[D / 8][4];
#pragma unroll
  for (int t = 0; t < D / 8; ++t)
#pragma unroll
    for (int e = 0; e < 4; ++e) o_acc[t][e] = 0.f;
  float m_run[2] = {-INFINITY, -INFINITY};
  float l_run[2] = {0.f, 0.f};

  // ldmatrix lane roles: matrix index lane/8, row inside it lane%8.
  const int lm_mat = lane / 8;
  const int lm_row = lane % 8;

  for (int j = 0; j < n_blocks; ++j) {
    const int s = j & 1;
    if (j + 1 < n_blocks) {
      load_tile<Cfg, Bc>(k_tiles + (s ^ 1) * Cfg::k_kv_bytes, k_head, (j + 1) * Bc, seq_len);
      load_tile<Cfg, Bc>(v_tiles + (s ^ 1) * Cfg::k_kv_bytes, v_head, (j + 1) * Bc, seq_len);
    }
    cp_async_commit_sm80();
    cp_async_wait_sm80<1>();
    __syncthreads();

    if (j == 0) {
      // A fragments of this warp's 16 query rows: matrices (rows 0-7|8-15) x (k 0-7|8-15).
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        const int r = warp * 16 + (lm_mat % 2) * 8 + lm_row;
        ldmatrix_x4(q_frag[kk], q_tile + swz<D>(r, kk * 2 + lm_mat / 2));
      }
    }

    const uint32_t k_tile = k_tiles + s * Cfg::k_kv_bytes;
    const uint32_t v_tile = v_tiles + s * Cfg::k_kv_bytes;

    // S = Q.K^T: K rows are the n index with k contiguous, i.e. the "col" B operand.
    float s_acc[Bc / 8][4];
#pragma unroll
    for (int t = 0; t < Bc / 8; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) s_acc[t][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
      for (int t = 0; t < Bc / 8; t += 2) {
        uint32_t b[4];  // (n-tile t: k lo, k hi), (n-tile t+1: k lo, k hi)
        const int n = t * 8 + (lm_mat / 2) * 8 + lm_row;
        ldmatrix_x4(b, k_tile + swz<D>(n, kk * 2 + lm_mat % 2));
        mma_m16n8k16<k_bf16>(s_acc[t], q_frag[kk], {b[0], b[1]});
        mma_m16n8k16<k_bf16>(s_acc[t + 1], q_frag[kk], {b[2], b[3]});
      }
    }

    const int key0 = j * Bc;
    const bool need_mask = (key0 + Bc > seq_len) || (Causal && key0 + Bc - 1 > m_block * Br);
    if (need_mask) {
#pragma unroll
      for (int t = 0; t < Bc / 8; ++t)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = key0 + t * 8 + col_in_quad + (e & 1);
          const int row = row0 + 8 * (e >> 1);
          if (key >= seq_len || (Causal && key > row)) s_acc[t][e] = -INFINITY;
        }
    }

    // Online softmax (log2 domain, fp32 statistics).
    float alpha[2], m_use[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int t = 0; t < Bc / 8; ++t) mx = fmaxf(mx, fmaxf(s_acc[t][2 * h], s_acc[t][2 * h + 1]));
      mx = quad_max(mx);
      const float m_new = fmaxf(m_run[h], mx * scale_log2);
      m_use[h] = (m_new == -INFINITY) ? 0.f : m_new;
      alpha[h] = fast_exp2(m_run[h] - m_use[h]);
      m_run[h] = m_new;
    }
    float row_sum[2] = {0.f, 0.f};
#pragma unroll
    for (int t = 0; t < Bc / 8; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float p = fast_exp2(fmaf(s_acc[t][e], scale_log2, -m_use[e >> 1]));
        s_acc[t][e] = p;
        row_sum[e >> 1] += p;
      }
#pragma unroll
    for (int h = 0; h < 2; ++h) l_run[h] = l_run[h] * alpha[h] + row_sum[h];
#pragma unroll
    for (int t = 0; t < D / 8; ++t) {
      o_acc[t][0] *= alpha[0];
      o_acc[t][1] *= alpha[0];
      o_acc[t][2] *= alpha[1];
      o_acc[t][3] *= alpha[1];
    }

    // O += P.V: P's accumulator tiles 2kk, 2kk+1 are the A fragment for keys [16kk, 16kk+16);
    // V is [key][d] row-major, so ldmatrix.trans yields the "col" B fragments.
#pragma unroll
    for (int kk = 0; kk < Bc / 16; ++kk) {
      const uint32_t a[4] = {pack2<T>(s_acc[2 * kk][0], s_acc[2 * kk][1]), pack2<T>(s_acc[2 * kk][2], s_acc[2 * kk][3]),
                             pack2<T>(s_acc[2 * kk + 1][0], s_acc[2 * kk + 1][1]),
                             pack2<T>(s_acc[2 * kk + 1][2], s_acc[2 * kk + 1][3])};
#pragma unroll
      for (int t = 0; t < D / 8; t += 2) {
        uint32_t b[4];  // (d-tile t: keys lo, hi), (d-tile t+1: keys lo, hi)
        const int key = kk * 16 + (lm_mat % 2) * 8 + lm_row;
        ldmatrix_x4_trans(b, v_tile + swz<D>(key, t + lm_mat / 2));
        mma_m16n8k16<k_bf16>(o_acc[t], a, {b[0], b[1]});
        mma_m16n8k16<k_bf16>(o_acc[t + 1], a, {b[2], b[3]});
      }
    }
    __syncthreads();  // stage s is overwritten by the next iteration's prefetch
  }

  // Epilogue: normalise, store O in the input type and the natural-log LSE.
  const size_t row_base = static_cast<size_t>(bh) * seq_len;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float l = quad_sum(l_run[h]);
    const float inv = l > 0.f ? 1.f / l : 0.f;
    const int row = row0 + 8 * h;
    if (row < seq_len) {
      T* dst = out + (row_base + row) * D + col_in_quad;
#pragma unroll
      for (int t = 0; t < D / 8; ++t)
        *reinterpret_cast<uint32_t*>(dst + t * 8) = pack2<T>(o_acc[t][2 * h] * inv, o_acc[t][2 * h + 1] * inv);
      if (lane % 4 == 0) lse[row_base + row] = l > 0.f ? m_run[h] * 0.6931471805599453f + logf(l) : -INFINITY;
    }
  }
}

}  // namespace kport::kernels::attention_mma_sync
