// attention.wgmma_tma: forward attention for Hopper (sm_90a), FlashAttention-3 style.
//
// Algorithm: one CTA computes Br query rows of one (batch, head). Warpgroup 0 is the
// producer: one thread loads the Q tile once and streams K and V tiles through a
// k_stages-deep ring with TMA (128-byte swizzled, 64-column panels); K and V land on
// separate mbarriers and are released separately (K after S, V after P.V). Each
// consumer warpgroup owns 64 query rows: S = Q.K^T with wgmma (both operands in shared
// memory, K-major), online softmax on the fp32 accumulators with exp2 and the scale
// folded into log2(e), then O += P.V with wgmma taking P from registers (re-packed to
// 16 bits) and V from shared memory as an MN-major (transposed) operand. S(j+1) is
// issued together with P(j).V(j) so the softmax of one block overlaps the tensor cores,
// and named barriers take the consumer warpgroups' GEMM issue in turns (ping-pong).
// The producer gives its registers to the consumers with setmaxnreg. O is staged in
// shared memory and written with TMA stores. Causal CTAs are launched heaviest first
// and stop at the diagonal; only the diagonal and tail blocks are masked.
//
// Target: sm_90a only (wgmma, setmaxnreg, TMA). Constraints: head_dim in {64, 128},
// bf16 or fp16, any seq_len >= 1 (TMA zero-fills loads past the end and clips the O
// store; the key tail is masked), positive softmax scale, [B,H,L,d] contiguous tensors
// with 16-byte aligned bases.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/attention_grid.cuh"
#include "common/convert.cuh"
#include "common/fast_math.cuh"
#include "common/mbarrier_sm90.cuh"
#include "common/smem.cuh"
#include "common/sync_sm90.cuh"
#include "common/tma_sm90.cuh"
#include "common/warp_reduce.cuh"
#include "common/wgmma_sm90.cuh"

namespace kport::kernels::attention_wgmma_tma {

using namespace kport::kernels::sm90;

template <int D, int Br, int Bc, int Stages, bool PingPong>
struct TileConfig {
  static constexpr int k_d = D;
  static constexpr int k_br = Br;
  static constexpr int k_bc = Bc;
  static constexpr int k_stages = Stages;
  static constexpr int k_consumers = Br / 64;  // consumer warpgroups, 64 rows each
  static constexpr bool k_pingpong = PingPong;
  static constexpr int k_threads = 128 * (k_consumers + 1);
  // setmaxnreg budgets: the launch gives each thread 65536 / k_threads registers (a
  // multiple of 8); the producer drops to 24 and the consumers share what it frees.
  static constexpr int k_launch_regs = 65536 / k_threads / 8 * 8;
  static constexpr int k_producer_regs = 24;
  static constexpr int k_consumer_regs_raw =
      (k_launch_regs * (k_consumers + 1) - k_producer_regs) / k_consumers / 8 * 8;
  static constexpr int k_consumer_regs = k_consumer_regs_raw > 240 ? 240 : k_consumer_regs_raw;
  static constexpr int k_panels = D / 64;  // 64 columns of 16-bit values = one 128-byte swizzle row
  static constexpr int k_q_bytes = Br * D * 2;
  static constexpr int k_kv_bytes = Bc * D * 2;
  static constexpr int k_q_off = 0;
  static constexpr int k_k_off = k_q_off + k_q_bytes;
  static constexpr int k_v_off = k_k_off + Stages * k_kv_bytes;
  static constexpr int k_bar_off = k_v_off + Stages * k_kv_bytes;
  static constexpr int k_num_bars = 1 + 4 * Stages;  // q_full, k_full[], v_full[], k_empty[], v_empty[]
  static constexpr int k_smem_bytes = k_bar_off + 8 * k_num_bars + 1024;  // + alignment slack

  static_assert(D == 64 || D == 128, "head_dim must be 64 or 128");
  static_assert(Br % 64 == 0 && Br >= 64 && Br <= 192, "Br: 1 to 3 consumer warpgroups");
  static_assert(Bc == 64 || Bc == 128 || Bc == 176 || Bc == 192, "Bc is the N of the S GEMM: 64, 128, 176 or 192");
  static_assert(Stages >= 2 && Stages <= 4, "2 to 4 K/V stages");
  static_assert(1 + 2 * k_consumers <= 16, "named barriers: ping-pong + epilogue");
  static_assert(k_consumer_regs >= 152, "too many consumer warpgroups for the register file");
  static_assert(k_q_bytes % 1024 == 0 && k_kv_bytes % 1024 == 0, "swizzle atoms are 1 KiB");
  static_assert(k_smem_bytes <= 227 * 1024, "exceeds Hopper shared memory per block");
};

// Consumer-side pieces of one KV block, shared by the pipelined main loop.
template <class Cfg, class T>
__device__ __forceinline__ void issue_qk(float (&s_acc)[Cfg::k_bc / 2], uint32_t q_rows, uint32_t k_tile) {
  constexpr int D = Cfg::k_d, Br = Cfg::k_br, Bc = Cfg::k_bc;
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const uint32_t off = (kk % 4) * 32u;  // 16 columns inside a 128-byte row
    const uint64_t da = make_desc_sw128(q_rows + (kk / 4) * Br * 128 + off, 16, 1024);
    const uint64_t db = make_desc_sw128(k_tile + (kk / 4) * Bc * 128 + off, 16, 1024);
    wgmma_ss<Bc, T, 0>(s_acc, da, db, kk > 0 ? 1 : 0);
  }
  wgmma_commit();
}

template <class Cfg, class T>
__device__ __forceinline__ void issue_pv(float (&o_acc)[Cfg::k_d / 2], const uint32_t (&p_frag)[Cfg::k_bc / 16][4],
                                         uint32_t v_tile) {
  constexpr int Bc = Cfg::k_bc;
  fence_regs(o_acc);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < Bc / 16; ++kk) {
    // 16 keys = two 8-row groups (sbo); the d columns span d/64 panels (lbo).
    const uint64_t db = make_desc_sw128(v_tile + kk * 16 * 128, Bc * 128, 1024);
    wgmma_rs<Cfg::k_d, T, 1>(o_acc, p_frag[kk], db, 1);
  }
  wgmma_commit();
}

// Masks, then turns the scores into unnormalised probabilities in place (log2 domain,
// fp32 statistics); alpha is the factor that rescales the previous O and row sums.
template <class Cfg, bool Causal>
__device__ __forceinline__ void online_softmax(float (&s_acc)[Cfg::k_bc / 2], float (&m_run)[2], float (&l_run)[2],
                                               float (&alpha)[2], int key0, int row0, int col_in_quad, int first_row,
                                               int seq_len, float scale_log2) {
  constexpr int Bc = Cfg::k_bc;
  const bool need_mask = (key0 + Bc > seq_len) || (Causal && key0 + Bc - 1 > first_row);
  if (need_mask) {
#pragma unroll
    for (int i = 0; i < Bc / 8; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = key0 + i * 8 + col_in_quad + (e & 1);
        const int row = row0 + 8 * (e >> 1);
        if (key >= seq_len || (Causal && key > row)) s_acc[i * 4 + e] = -INFINITY;
      }
  }
  float m_use[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float mx = -INFINITY;
#pragma unroll
    for (int i = 0; i < Bc / 8; ++i) mx = fmaxf(mx, fmaxf(s_acc[i * 4 + 2 * h], s_acc[i * 4 + 2 * h + 1]));
    mx = quad_max(mx);
    const float m_new = fmaxf(m_run[h], mx * scale_log2);
    m_use[h] = (m_new == -INFINITY) ? 0.f : m_new;  // a fully masked row stays at zero
    alpha[h] = fast_exp2(m_run[h] - m_use[h]);
    m_run[h] = m_new;
  }
  float row_sum[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < Bc / 8; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float p = fast_exp2(fmaf(s_acc[i * 4 + e], scale_log2, -m_use[e >> 1]));
      s_acc[i * 4 + e] = p;
      row_sum[e >> 1] += p;
    }
#pragma unroll
  for (int h = 0; h < 2; ++h) l_run[h] = l_run[h] * alpha[h] + row_sum[h];
}

// P as the register A operand: keys [16kk, 16kk+16) are accumulator slabs 2kk and 2kk+1.
template <class Cfg, class T>
__device__ __forceinline__ void pack_p(const float (&s_acc)[Cfg::k_bc / 2], uint32_t (&p_frag)[Cfg::k_bc / 16][4]) {
#pragma unroll
  for (int kk = 0; kk < Cfg::k_bc / 16; ++kk) {
    p_frag[kk][0] = pack2<T>(s_acc[(2 * kk) * 4 + 0], s_acc[(2 * kk) * 4 + 1]);
    p_frag[kk][1] = pack2<T>(s_acc[(2 * kk) * 4 + 2], s_acc[(2 * kk) * 4 + 3]);
    p_frag[kk][2] = pack2<T>(s_acc[(2 * kk + 1) * 4 + 0], s_acc[(2 * kk + 1) * 4 + 1]);
    p_frag[kk][3] = pack2<T>(s_acc[(2 * kk + 1) * 4 + 2], s_acc[(2 * kk + 1) * 4 + 3]);
  }
}

template <class Cfg, class T, bool Causal>
__global__ void __launch_bounds__(Cfg::k_threads, 1)
    attention_fwd_wgmma_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                               const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_o,
                               float* __restrict__ lse, int seq_len, float scale_log2) {
  constexpr int D = Cfg::k_d, Br = Cfg::k_br, Bc = Cfg::k_bc, S = Cfg::k_stages;
  constexpr int NC = Cfg::k_consumers;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t q_smem = base + Cfg::k_q_off;
  const uint32_t k_smem = base + Cfg::k_k_off;
  const uint32_t v_smem = base + Cfg::k_v_off;
  const uint32_t bars = base + Cfg::k_bar_off;
  const uint32_t q_full = bars;
  auto k_full = [&](int s) { return bars + 8u * (1 + s); };
  auto v_full = [&](int s) { return bars + 8u * (1 + S + s); };
  auto k_empty = [&](int s) { return bars + 8u * (1 + 2 * S + s); };
  auto v_empty = [&](int s) { return bars + 8u * (1 + 3 * S + s); };

  const int bh = attention_grid::head_index();
  const int m_block = Causal ? (gridDim.x - 1 - blockIdx.x) : blockIdx.x;
  const int kv_len = Causal ? min(seq_len, (m_block + 1) * Br) : seq_len;
  const int n_blocks = (kv_len + Bc - 1) / Bc;

  if (threadIdx.x == 0) {
    mbar_init(q_full, 1);
    for (int s = 0; s < S; ++s) {
      mbar_init(k_full(s), 1);
      mbar_init(v_full(s), 1);
      mbar_init(k_empty(s), 4 * NC);  // one arrival per consumer warp
      mbar_init(v_empty(s), 4 * NC);
    }
    mbar_fence_init();
  }
  __syncthreads();

  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    // Producer warpgroup: a single thread issues every TMA load. K and V have their own
    // release barriers: K is free once S is computed, V only after P.V.
    regs_dealloc<Cfg::k_producer_regs>();
    if (threadIdx.x == 0) {
      mbar_arrive_expect_tx(q_full, Cfg::k_q_bytes);
      for (int p = 0; p < Cfg::k_panels; ++p)
        tma_load_3d(q_smem + p * Br * 128, &tm_q, p * 64, m_block * Br, bh, q_full);
      for (int j = 0; j < n_blocks; ++j) {
        const int s = j % S;
        const uint32_t parity = ((j / S) - 1) & 1;
        if (j >= S) mbar_wait(k_empty(s), parity);
        mbar_arrive_expect_tx(k_full(s), Cfg::k_kv_bytes);
        for (int p = 0; p < Cfg::k_panels; ++p)
          tma_load_3d(k_smem + s * Cfg::k_kv_bytes + p * Bc * 128, &tm_k, p * 64, j * Bc, bh, k_full(s));
        if (j >= S) mbar_wait(v_empty(s), parity);
        mbar_arrive_expect_tx(v_full(s), Cfg::k_kv_bytes);
        for (int p = 0; p < Cfg::k_panels; ++p)
          tma_load_3d(v_smem + s * Cfg::k_kv_bytes + p * Bc * 128, &tm_v, p * 64, j * Bc, bh, v_full(s));
      }
    }
  } else {
    regs_alloc<Cfg::k_consumer_regs>();
    const int c = wg - 1;  // consumer index: rows [64c, 64c+64) of the tile
    const int warp = (threadIdx.x / 32) % 4;
    const int lane = threadIdx.x % 32;
    const int row0 = m_block * Br + c * 64 + warp * 16 + lane / 4;  // and row0 + 8
    const int col_in_quad = 2 * (lane % 4);
    const int first_row = m_block * Br;
    // Ping-pong turns: wait for the previous consumer's turn, then hand over to the next.
    const bool pingpong = Cfg::k_pingpong && NC > 1;
    const int next_bar = 1 + (c + 1) % NC;
    auto turn_begin = [&]() {
      if (pingpong) named_bar_sync(1 + c, 256);
    };
    auto turn_end = [&](bool last) {
      if (pingpong && !(last && c == NC - 1)) named_bar_arrive(next_bar, 256);
    };
    if (pingpong && c == NC - 1) named_bar_arrive(1, 256);  // consumer 0 goes first

    float o_acc[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o_acc[i] = 0.f;
    float m_run[2] = {-INFINITY, -INFINITY};
    float l_run[2] = {0.f, 0.f};
    float alpha[2];
    float s_acc[Bc / 2];
    uint32_t p_frag[Bc / 16][4];

    const uint32_t q_rows = q_smem + c * 64 * 128;
    mbar_wait(q_full, 0);

    // Block 0: S only; its P.V is issued together with the next block's S.
    mbar_wait(k_full(0), 0);
    turn_begin();
    issue_qk<Cfg, T>(s_acc, q_rows, k_smem);
    turn_end(false);
    wgmma_wait<0>();
    fence_regs(s_acc);
    if (lane == 0) mbar_arrive(k_empty(0));
    online_softmax<Cfg, Causal>(s_acc, m_run, l_run, alpha, 0, row0, col_in_quad, first_row, seq_len, scale_log2);
    pack_p<Cfg, T>(s_acc, p_frag);

    for (int j = 1; j < n_blocks; ++j) {
      const int s = j % S;
      const int sp = (j - 1) % S;
      mbar_wait(k_full(s), (j / S) & 1);
      turn_begin();
      issue_qk<Cfg, T>(s_acc, q_rows, k_smem + s * Cfg::k_kv_bytes);
      mbar_wait(v_full(sp), ((j - 1) / S) & 1);
      issue_pv<Cfg, T>(o_acc, p_frag, v_smem + sp * Cfg::k_kv_bytes);
      turn_end(false);
      wgmma_wait<1>();  // S_j is done; P_{j-1}.V_{j-1} may still run
      fence_regs(s_acc);
      if (lane == 0) mbar_arrive(k_empty(s));
      online_softmax<Cfg, Causal>(s_acc, m_run, l_run, alpha, j * Bc, row0, col_in_quad, first_row, seq_len,
                                  scale_log2);
      wgmma_wait<0>();
      fence_regs(o_acc);
      if (lane == 0) mbar_arrive(v_empty(sp));
      // Once the row maxima settle most blocks leave them unchanged: skip the rescale
      // when no row of the warp moved (a warp-uniform branch).
      if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
        for (int i = 0; i < D / 8; ++i) {
          o_acc[i * 4 + 0] *= alpha[0];
          o_acc[i * 4 + 1] *= alpha[0];
          o_acc[i * 4 + 2] *= alpha[1];
          o_acc[i * 4 + 3] *= alpha[1];
        }
      }
      pack_p<Cfg, T>(s_acc, p_frag);
    }

    {
      const int sl = (n_blocks - 1) % S;
      mbar_wait(v_full(sl), ((n_blocks - 1) / S) & 1);
      turn_begin();
      issue_pv<Cfg, T>(o_acc, p_frag, v_smem + sl * Cfg::k_kv_bytes);
      turn_end(true);
      wgmma_wait<0>();
      fence_regs(o_acc);
      if (lane == 0) mbar_arrive(v_empty(sl));
    }

    // Epilogue: normalise and stage O in this warpgroup's own Q rows (no longer read),
    // in the same swizzled panel layout, then one TMA store per panel; the copy engine
    // drops rows past seq_len. The natural-log LSE is stored directly.
    const size_t head_base = static_cast<size_t>(bh) * seq_len;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(l_run[h]);
      const float inv = l > 0.f ? 1.f / l : 0.f;
      const int r = warp * 16 + lane / 4 + 8 * h;  // row inside this warpgroup's 64
#pragma unroll
      for (int i = 0; i < D / 8; ++i) {
        const uint32_t addr =
            q_rows + (i / 8) * Br * 128 + r * 128 + ((static_cast<uint32_t>(i % 8) ^ (r % 8)) << 4) + col_in_quad * 2;
        const uint32_t v = pack2<T>(o_acc[i * 4 + 2 * h] * inv, o_acc[i * 4 + 2 * h + 1] * inv);
        st_shared_u32(addr, v);
      }
      const int row = row0 + 8 * h;
      if (row < seq_len && lane % 4 == 0)
        lse[head_base + row] = l > 0.f ? m_run[h] * 0.6931471805599453f + logf(l) : -INFINITY;
    }
    fence_proxy_async_smem();
    named_bar_sync(1 + NC + c, 128);
    if (threadIdx.x % 128 == 0) {
#pragma unroll
      for (int p = 0; p < Cfg::k_panels; ++p)
        tma_store_3d(&tm_o, q_rows + p * Br * 128, p * 64, m_block * Br + c * 64, bh);
      bulk_commit();
      bulk_wait_read<0>();
    }
  }
}

}  // namespace kport::kernels::attention_wgmma_tma
