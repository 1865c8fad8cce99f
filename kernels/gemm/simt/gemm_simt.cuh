// The portable SIMT gemm kernel: C[M,N] = A[M,K] * B[K,N], row-major, fp32 accumulation on
// CUDA cores, output in the input dtype (bf16, fp16, fp32).
//
// Algorithm: a block of 256 threads computes a k_bm x k_bn tile of C; each thread owns a
// k_tm x k_tn sub-tile in registers (outer products from shared memory). A and B tiles of
// depth k_bk are staged through double-buffered shared memory as fp32 (A transposed so a
// thread reads its k_tm rows as float4), and the next tile is fetched into registers while
// the current one is multiplied. Loads are scalar and bounds-checked, so any M, N, K and any
// alignment work. Builds for every target; tensor-core variants are the fast path.
// Included by gemm.simt (gemm_simt.cu) and, batched over grid z, by grouped_gemm.simt.
#pragma once

#include "common/convert.cuh"
#include "kport/kernels/registry.h"

namespace {

using namespace kport::kernels;

constexpr int k_threads = 256;

template <int k_bm, int k_bn, int k_bk, int k_tm, int k_tn>
struct GemmTile {
  static_assert((k_bm / k_tm) * (k_bn / k_tn) == k_threads, "one sub-tile per thread");
  static_assert(k_tm % 4 == 0 && k_tn % 4 == 0, "sub-tiles are read as float4");
  static_assert((k_bm * k_bk) % k_threads == 0 && (k_bk * k_bn) % k_threads == 0, "tiles load evenly");
  static constexpr int k_a_loads = k_bm * k_bk / k_threads;
  static constexpr int k_b_loads = k_bk * k_bn / k_threads;
  static constexpr int k_pad = 4;  // keeps float4 alignment, shifts banks between rows
};

// The block's tile of C, tile row blockIdx.y and column blockIdx.x, staged through the
// kernel's `as` and `bs`: the kernels' body (gemm's, and grouped_gemm's with A, B and C at the
// block's group).
template <typename T, int k_bm, int k_bn, int k_bk, int k_tm, int k_tn,
          class Tile = GemmTile<k_bm, k_bn, k_bk, k_tm, k_tn>>
__device__ __forceinline__ void gemm_simt_tile(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                               int m, int n, int k, float (&as)[2][k_bk][k_bm + Tile::k_pad],
                                               float (&bs)[2][k_bk][k_bn + Tile::k_pad]) {
  const int tid = threadIdx.x;
  const int tx = tid % (k_bn / k_tn), ty = tid / (k_bn / k_tn);
  const long m0 = static_cast<long>(blockIdx.y) * k_bm;
  const long n0 = static_cast<long>(blockIdx.x) * k_bn;

  float ra[Tile::k_a_loads], rb[Tile::k_b_loads];
  // Global -> registers for the tile starting at depth k0; out-of-range elements are zero.
  const auto fetch = [&](int k0) {
#pragma unroll
    for (int i = 0; i < Tile::k_a_loads; ++i) {
      const int idx = i * k_threads + tid;
      const long row = m0 + idx / k_bk;
      const int col = k0 + idx % k_bk;
      ra[i] = (row < m && col < k) ? to_float(a[row * k + col]) : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < Tile::k_b_loads; ++i) {
      const int idx = i * k_threads + tid;
      const int row = k0 + idx / k_bn;
      const long col = n0 + idx % k_bn;
      rb[i] = (row < k && col < n) ? to_float(b[static_cast<long>(row) * n + col]) : 0.0f;
    }
  };
  const auto stash = [&](int buf) {
#pragma unroll
    for (int i = 0; i < Tile::k_a_loads; ++i) {
      const int idx = i * k_threads + tid;
      as[buf][idx % k_bk][idx / k_bk] = ra[i];
    }
#pragma unroll
    for (int i = 0; i < Tile::k_b_loads; ++i) {
      const int idx = i * k_threads + tid;
      bs[buf][idx / k_bn][idx % k_bn] = rb[i];
    }
  };

  float acc[k_tm][k_tn] = {};
  fetch(0);
  stash(0);
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < k; k0 += k_bk) {
    const bool more = k0 + k_bk < k;
    if (more) fetch(k0 + k_bk);  // in flight while this tile is multiplied
#pragma unroll
    for (int kk = 0; kk < k_bk; ++kk) {
      float fa[k_tm], fb[k_tn];
#pragma unroll
      for (int i = 0; i < k_tm; i += 4)
        *reinterpret_cast<float4*>(&fa[i]) = *reinterpret_cast<const float4*>(&as[buf][kk][ty * k_tm + i]);
#pragma unroll
      for (int j = 0; j < k_tn; j += 4)
        *reinterpret_cast<float4*>(&fb[j]) = *reinterpret_cast<const float4*>(&bs[buf][kk][tx * k_tn + j]);
#pragma unroll
      for (int i = 0; i < k_tm; ++i)
#pragma unroll
        for (int j = 0; j < k_tn; ++j) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
    }
    if (more) stash(buf ^ 1);  // the other buffer was last read before the previous barrier
    __syncthreads();
    buf ^= 1;
  }

#pragma unroll
  for (int i = 0; i < k_tm; ++i) {
    const long row = m0 + ty * k_tm + i;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < k_tn; ++j) {
      const long col = n0 + tx * k_tn + j;
      if (col < n) c[row * n + col] = from_float<T>(acc[i][j]);
    }
  }
}

// Batched (grouped_gemm's simt instances): blockIdx.z picks a gemm whose A, B and C start
// stride_a, stride_b and stride_c elements after the previous one's; otherwise the strides
// are not read.
template <typename T, int k_bm, int k_bn, int k_bk, int k_tm, int k_tn, bool Batched = false>
__global__ void __launch_bounds__(k_threads)
    gemm_simt_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n, int k,
                     long long stride_a, long long stride_b, long long stride_c) {
  if constexpr (Batched) {
    a += blockIdx.z * stride_a;
    b += blockIdx.z * stride_b;
    c += blockIdx.z * stride_c;
  }
  using Tile = GemmTile<k_bm, k_bn, k_bk, k_tm, k_tn>;
  __shared__ __align__(16) float as[2][k_bk][k_bm + Tile::k_pad];
  __shared__ __align__(16) float bs[2][k_bk][k_bn + Tile::k_pad];
  gemm_simt_tile<T, k_bm, k_bn, k_bk, k_tm, k_tn>(a, b, c, m, n, k, as, bs);
}

}  // namespace
