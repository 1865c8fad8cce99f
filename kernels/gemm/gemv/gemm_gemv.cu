// gemm, decode variant: C[M,N] = A[M,K] * B[K,N] for M <= 8, row-major, fp32 accumulation on
// CUDA cores, output in the input dtype. At decode sizes the product is a matrix-vector one:
// the time is B's bytes, read once, so the kernel is shaped for reading B at the memory's rate.
//
// Each thread owns 16 bytes of columns (8 bf16/fp16 or 4 fp32) and a warp one row segment of
// 32 such loads. A block stages its split's whole slice of A (k_chunk x M, fp32) in shared
// memory once, then its 4 warps stream B without a barrier: warp w reads rows
// w*L..w*L+L-1 of every group of 4*L consecutive rows (L = Tuning::loads in flight), so the
// block reads B's rows in order and every warp keeps loads in flight from its first row to
// its last. (A 64-row A tile between two barriers, as before, drained every warp's loads
// each 64 rows.) K is split over the grid (y) until about Tuning::blocks_per_sm blocks per
// SM are busy and each split's A fits k_a_bytes: each split writes its fp32 partial sums to
// a workspace, and the last split of a column segment to finish (a counter per segment) adds
// the partials in split order with all its threads and writes C, so the result does not
// depend on which split ran first. M, the rows the kernel holds, is a template argument of 1,
// 2, 4 or 8: the row count rounded up to one of them (the rows past it repeat A's last row
// and are never written). Four kernels per dtype instead of eight keep the compile short;
// the spare accumulators of a rounded-up M cost arithmetic the kernel has to spare, not bytes.
// The split plan, the workspace and the adding of the splits are common/split_k_rows.cuh's,
// shared with gemm.decode_mma.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <string>
#include <type_traits>

#include "common/convert.cuh"
#include "common/split_k_rows.cuh"
#include "kport/kernels/registry.h"

namespace {

using kport::kernels::DType;
using kport::kernels::Family;
using kport::kernels::GemmArgs;
using kport::kernels::Instance;
using kport::kernels::Problem;
using kport::kernels::SplitK;

constexpr int k_max_m = 8;
constexpr int k_warps = 4;
constexpr int k_threads = 32 * k_warps;
// Shared memory for a split's A (k_chunk x M fp32): small enough for 8 blocks per SM.
constexpr int k_a_bytes = 16 * 1024;
// How many B loads each thread has in flight and how many blocks per SM the K split aims
// at, by row count (launch_typed).
struct Tuning {
  int loads, blocks_per_sm;
};

template <typename T>
constexpr int vec() {
  return 16 / static_cast<int>(sizeof(T));
}

// 16 bytes of B as fp32.
template <typename T>
__device__ inline void unpack(const uint4& raw, float (&out)[vec<T>()]) {
  if constexpr (std::is_same_v<T, float>) {
    out[0] = __uint_as_float(raw.x), out[1] = __uint_as_float(raw.y);
    out[2] = __uint_as_float(raw.z), out[3] = __uint_as_float(raw.w);
  } else {
    using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    const Pair* h = reinterpret_cast<const Pair*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = kport::kernels::to_float2(h[i]);
      out[2 * i] = f.x, out[2 * i + 1] = f.y;
    }
  }
}

// One block: the columns [blockIdx.x * 32 * V, +32 * V) over the K rows of split blockIdx.y.
template <typename T, int M, int Loads>
__global__ void __launch_bounds__(k_threads)
    gemv_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m_rows, int n, int k,
                int k_chunk, float* __restrict__ partial, unsigned* __restrict__ done) {
  constexpr int V = vec<T>();
  constexpr int group = k_warps * Loads;  // consecutive rows of B the block reads at a time
  extern __shared__ float a_s[];          // [k_chunk][M]
  __shared__ float red[k_warps - 1][M][32 * V];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int col = (blockIdx.x * 32 + lane) * V;
  const bool active = col < n;  // n is a multiple of V
  const int k_begin = blockIdx.y * k_chunk;
  const int rows = min(k_chunk, k - k_begin);

  // The split's A, once. The rows past m_rows repeat A's last row: their sums are never
  // written.
  for (int i = threadIdx.x; i < rows * M; i += k_threads) {
    const int m = i / rows, r = i % rows;
    const long long row = min(m, m_rows - 1);
    a_s[r * M + m] = static_cast<float>(a[row * k + k_begin + r]);
  }
  __syncthreads();

  float acc[M][V];
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int v = 0; v < V; ++v) acc[m][v] = 0.0f;

  const T* bp = b + static_cast<long long>(k_begin) * n + col;
  for (int r0 = warp * Loads; r0 < rows; r0 += group) {
    uint4 raw[Loads];
#pragma unroll
    for (int j = 0; j < Loads; ++j)
      raw[j] = active && r0 + j < rows ? __ldg(reinterpret_cast<const uint4*>(bp + static_cast<long long>(r0 + j) * n))
                                       : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int j = 0; j < Loads; ++j) {
      if (r0 + j >= rows) break;
      float bf[V];
      unpack<T>(raw[j], bf);
#pragma unroll
      for (int m = 0; m < M; ++m) {
        const float av = a_s[(r0 + j) * M + m];
#pragma unroll
        for (int v = 0; v < V; ++v) acc[m][v] = fmaf(av, bf[v], acc[m][v]);
      }
    }
  }

  // The block's four warps into warp 0.
  if (warp > 0)
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
      for (int v = 0; v < V; ++v) red[warp - 1][m][lane * V + v] = acc[m][v];
  __syncthreads();
  if (warp == 0) {
#pragma unroll
    for (int w = 0; w < k_warps - 1; ++w)
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int v = 0; v < V; ++v) acc[m][v] += red[w][m][lane * V + v];
    if (gridDim.y == 1) {
      if (active)
#pragma unroll
        for (int m = 0; m < M; ++m)
          if (m < m_rows)
#pragma unroll
            for (int v = 0; v < V; ++v)
              c[static_cast<long long>(m) * n + col + v] = kport::kernels::from_float<T>(acc[m][v]);
    } else if (active) {
      // This split's partial sums, 16 bytes a store.
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int v = 0; v < V; v += 4)
          *reinterpret_cast<float4*>(
              &partial[blockIdx.y * static_cast<long long>(M) * n + static_cast<long long>(m) * n + col + v]) =
              make_float4(acc[m][v], acc[m][v + 1], acc[m][v + 2], acc[m][v + 3]);
      __threadfence();
    }
  }
  if (gridDim.y == 1) return;
  // Split K: the last split of the segment to finish adds every split's sums in split order.
  if (!kport::kernels::last_split_to_finish(done)) return;
  constexpr int seg = 32 * V;
  kport::kernels::add_splits_in_order<T, k_threads>(partial, c, done, m_rows, n, static_cast<long long>(M) * n,
                                                    blockIdx.x * seg, seg);
}

template <typename T>
std::string supports(const Problem& p) {
  if (p.family != Family::gemm) return "not a gemm problem";
  const GemmArgs& g = p.gemm;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return "m, n, k must be positive";
  if (g.m > k_max_m)
    return "m = " + std::to_string(g.m) + " is not a decode size: this variant takes m <= " + std::to_string(k_max_m);
  const int v = vec<T>();
  if (g.n % v != 0)
    return "n = " + std::to_string(g.n) + " must be a multiple of " + std::to_string(v) +
           " (B is read 16 bytes at a time)";
  return "";
}

std::string supports_any(const Problem& p) {
  switch (p.gemm.dtype) {
    case DType::f32: return supports<float>(p);
    case DType::f16: return supports<__half>(p);
    case DType::bf16: return supports<__nv_bfloat16>(p);
    default: return "dtype not supported: gemm.gemv takes bf16, fp16 and fp32";
  }
}

template <Tuning Tu, typename T, int M>
cudaError_t launch_m(const GemmArgs& g, cudaStream_t stream) {
  constexpr int V = vec<T>();
  const int segments = (g.n / V + 31) / 32;
  // Split K until about Tu.blocks_per_sm blocks per SM, each split at least two groups of
  // rows deep and its A within k_a_bytes.
  int sms = 0;
  if (cudaError_t e = kport::kernels::sm_count(sms); e != cudaSuccess) return e;
  constexpr int group = k_warps * Tu.loads;
  constexpr int chunk_most = k_a_bytes / (M * static_cast<int>(sizeof(float))) / group * group;
  const SplitK plan = kport::kernels::plan_split_k(g.k, segments, sms, Tu.blocks_per_sm, group, chunk_most);
  const int chunk = plan.chunk, splits = plan.splits;
  float* partial = nullptr;
  unsigned* done = nullptr;
  if (splits > 1)
    if (cudaError_t e =
            kport::kernels::split_k_workspace(static_cast<std::size_t>(splits) * M * g.n, segments, partial, done);
        e != cudaSuccess)
      return e;
  const std::size_t a_bytes = static_cast<std::size_t>(chunk) * M * sizeof(float);
  gemv_kernel<T, M, Tu.loads><<<dim3(segments, splits), k_threads, a_bytes, stream>>>(
      static_cast<const T*>(g.a), static_cast<const T*>(g.b), static_cast<T*>(g.c), g.m, g.n, g.k, chunk, partial,
      done);
  return cudaGetLastError();
}

// Loads in flight a thread and the blocks per SM the split aims at, by rows held: eight and
// four at one, two and eight rows, four and four at four rows. Side by side on the H200
// (bench/decode, 2026-12-03, with A staged once) eight and four were up to 12 % faster than
// eight and eight at one row (1x4096x4096: 19.3 against 21.7 µs) and 7-11 % faster than four
// and four at eight rows (8x8192x28672: 233.7 against 249.2 µs); at four rows four and four
// were the faster on the large shapes (4x8192x28672: 156.0 against 170.1 µs).
constexpr Tuning k_one_two_rows{8, 4}, k_four_rows{4, 4}, k_eight_rows{8, 4};

template <typename T>
cudaError_t launch_typed(const GemmArgs& g, cudaStream_t stream) {
  switch (g.m) {
    case 1: return launch_m<k_one_two_rows, T, 1>(g, stream);
    case 2: return launch_m<k_one_two_rows, T, 2>(g, stream);
    case 3:
    case 4: return launch_m<k_four_rows, T, 4>(g, stream);
    case 5:
    case 6:
    case 7:
    case 8: return launch_m<k_eight_rows, T, 8>(g, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launch(const Problem& p, cudaStream_t stream) {
  switch (p.gemm.dtype) {
    case DType::f32: return launch_typed<float>(p.gemm, stream);
    case DType::f16: return launch_typed<__half>(p.gemm, stream);
    case DType::bf16: return launch_typed<__nv_bfloat16>(p.gemm, stream);
    default: return cudaErrorInvalidValue;
  }
}

const Instance k_gemm_gemv{
    Family::gemm,
    "gemv",
    "gemm.gemv.m8_splitk",
    {"simt"},
    {DType::bf16, DType::f16, DType::f32},
    // Its geometry for the best-kernel query: one tile of rows (bm = max_m), a block's 256
    // columns (bn, 2-byte elements; fp32 blocks take 128), K walked 4 rows a step (bk, one
    // a warp) and split until the GPU is full (split_k 0), so the time moves with N x K
    // and not with M. It takes N only in whole 16-byte loads (run_n_align_bytes).
    R"({"max_m":8,"bm":8,"bn":256,"bk":4,"run_n_align_bytes":16,"threads":128,"warps_interleave_k":4,)"
    R"("a_staged_bytes":16384,)"
    R"("bytes_per_load":16,"loads_in_flight":{"1-2":8,"3-4":4,"5-8":8},"blocks_per_sm":4,"split_k":0,)"
    R"("split_k_by":"grid until about blocks_per_sm blocks per SM, fp32 partials added in split order"})",
    &supports_any,
    &launch};
KPORT_REGISTER_KERNEL(k_gemm_gemv);

}  // namespace
