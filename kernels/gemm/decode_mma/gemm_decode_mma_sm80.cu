// gemm, decode variant on tensor cores: C[M,N] = A[M,K] * B[K,N] for M <= 8, row-major, bf16 or
// fp16 in and out, fp32 accumulation with mma.sync m16n8k16 (sm_80 and later). At decode sizes
// the time is B's bytes, read once; gemm.gemv's CUDA-core FMAs (64 per 16 bytes of B at eight
// rows) cost more than the read, so here the MMA does the arithmetic and a thread's work per
// 16 bytes of B is four byte permutes and a share of one MMA.
//
// The MMA runs "swapped": 16 columns of C are the MMA's M (its A operand is a 16 x 16 tile of
// B transposed) and the <= 8 rows of A are its N (its B operand, rows past m read as zero), so
// it accumulates a 16 x 8 tile of C transposed. A warp owns 64 columns. Lane (g, t) = (lane / 4,
// lane % 4) loads, per 16-row step of K, the 16 bytes of B at columns 8g..8g+7 of the rows
// 4t..4t+3 (rows 4t+j of the step, one 16-byte ld.global.nc each: the warp reads 4 rows x 128
// bytes a load). The sum over K does not care in which order K comes, so the step's K is
// permuted: the MMA's K slots 2t, 2t+1, 2t+8, 2t+9 (the A fragment's columns of lane (g, t))
// stand for the rows 4t, 4t+1, 4t+2, 4t+3. B is N-contiguous while a fragment register holds
// two K values of one column, so two byte permutes (prmt) turn two loads' registers into the
// fragment's pairs: MMA i of the four a step takes columns 8g+2i and 8g+2i+1 as its rows g and
// g+8. The activation's fragment (b0,b1 = K slots 2t, 2t+1 of row g; b2,b3 = slots 2t+8, 2t+9)
// is then rows 4t..4t+3 of A's row g: one 8-byte shared load, A's split slice being staged in
// shared memory once, as 16-bit values, [row][k] with a row stride of 16 mod 64 elements (no
// bank conflict). The accumulators give lane (g, t) the columns 8g..8g+7 of C's rows 2t and
// 2t+1: one 16-byte store per row.
//
// A block is WarpsN x WarpsK warps: WarpsN column groups of 64, each read by WarpsK warps that
// take turns along K as gemm.gemv's warps do (warp k reads steps k*S..k*S+S-1 of every group
// of WarpsK*S steps, S = Steps), and add their sums through shared memory at the end. Each warp
// holds two sets of S steps' loads (8*S loads of 16 bytes): the next set is issued before the
// current one is multiplied, and the first before A is staged, so B is in flight from the
// block's first instruction. K is split over the grid as gemm.gemv splits it
// (common/split_k_rows.cuh: the workspace, the plan, the last split adding in split order).
// Any M from 1 to 8 runs the one kernel (the MMA's N is 8 either way); N must be a multiple of
// 8 (16-byte loads), any K. Instances of 16 and 32 rows (decode_mma_rows_kernel, further down)
// put 2 or 4 n8 tiles of A's rows on the MMA's N side, each reusing the step's B fragments, and
// stage A in double-buffered windows of 256 K rows. (64 rows, 8 tiles, ran at 0.58x cuBLAS at
// 64x4096x14336 on an H200, below the tiled gemm's 0.65x: not registered.)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "common/convert.cuh"
#include "common/cp_async_sm80.cuh"
#include "common/mma_sync_sm80.cuh"
#include "common/split_k_rows.cuh"
#include "common/vector_io.cuh"
#include "kport/kernels/registry.h"

namespace {

using kport::kernels::DType;
using kport::kernels::Family;
using kport::kernels::GemmArgs;
using kport::kernels::Instance;
using kport::kernels::Problem;
using kport::kernels::SplitK;

constexpr int k_max_m = 8;
constexpr int k_warp_cols = 64;  // C's columns a warp owns
constexpr int k_step = 16;       // K rows an MMA takes

// A block's shape and how far it reads ahead.
struct Config {
  int warps_n, warps_k, steps;  // steps: 16-row K steps a set of loads covers
  int blocks_per_sm;            // what the K split aims at
  int a_bytes;                  // most shared memory for the split's A
};

// A's row stride in shared memory for `chunk` rows of K: 16 mod 64 elements, so the eight
// rows' 8-byte fragment loads fall in two conflict-free wavefronts.
__host__ __device__ constexpr int a_stride(int chunk) { return (chunk + 63) / 64 * 64 + 16; }

// One set of loads: S steps x 4 rows of B, 16 bytes each; rows at or past `rows` (the split's
// end) and columns past n read as zero.
template <int S>
__device__ __forceinline__ void load_set(uint4 (&raw)[S][4], const uint16_t* bp, long long n, int step0, int rows,
                                         int t4, bool active) {
#pragma unroll
  for (int s = 0; s < S; ++s)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = (step0 + s) * k_step + j;  // bp points at the split's row t4 = 4t
      raw[s][j] = active && r + t4 < rows ? kport::kernels::ld_global_nc_v4(bp + r * n) : make_uint4(0, 0, 0, 0);
    }
}

// MMA i's A fragment from one step's four loads of B (K rows 4t..4t+3, columns 8g..8g+7):
// register i of a load holds columns 8g+2i (low half) and 8g+2i+1 (high half), so pairing
// the halves of loads 0 and 1 (and 2 and 3) gives those two columns at K slots 2t, 2t+1 (and
// 2t+8, 2t+9) as the fragment's rows g and g+8.
__device__ __forceinline__ void b_columns_as_a(const uint4 (&raw)[4], int i, uint32_t (&a)[4]) {
  const uint32_t* r0 = &raw[0].x;
  const uint32_t* r1 = &raw[1].x;
  const uint32_t* r2 = &raw[2].x;
  const uint32_t* r3 = &raw[3].x;
  a[0] = __byte_perm(r0[i], r1[i], 0x5410);
  a[1] = __byte_perm(r0[i], r1[i], 0x7632);
  a[2] = __byte_perm(r2[i], r3[i], 0x5410);
  a[3] = __byte_perm(r2[i], r3[i], 0x7632);
}

// The MMAs of one set: per step, A's fragment from shared memory, then B's four column pairs.
template <bool IsBf16, int S>
__device__ __forceinline__ void mma_set(float (&acc)[4][4], const uint4 (&raw)[S][4], const uint16_t* a_row, int step0,
                                        int rows, bool has_row) {
#pragma unroll
  for (int s = 0; s < S; ++s) {
    if ((step0 + s) * k_step >= rows) break;  // warp-uniform
    uint32_t b[2] = {0u, 0u};
    if (has_row) {
      const uint2 v = *reinterpret_cast<const uint2*>(a_row + (step0 + s) * k_step);
      b[0] = v.x, b[1] = v.y;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      uint32_t a[4];
      b_columns_as_a(raw[s], i, a);
      kport::kernels::sm80::mma_m16n8k16<IsBf16>(acc[i], a, b);
    }
  }
}

// One block: columns [blockIdx.x * 64 * WarpsN, +64 * WarpsN) over the K rows of split
// blockIdx.y. Partial sums [split][m_rows][n].
template <typename T, int WarpsN, int WarpsK, int Steps>
__global__ void __launch_bounds__(32 * WarpsN * WarpsK)
    decode_mma_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m_rows, int n, int k,
                      int chunk, float* __restrict__ partial, unsigned* __restrict__ done) {
  constexpr bool is_bf16 = std::is_same_v<T, __nv_bfloat16>;
  constexpr int S = Steps, WK = WarpsK;
  constexpr int threads = 32 * WarpsN * WK;
  extern __shared__ __align__(16) uint16_t a_s[];  // [m_rows][a_stride(chunk)]
  __shared__ float red[WK > 1 ? WK - 1 : 1][WarpsN][16][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wn = warp % WarpsN, wk = warp / WarpsN;
  const int g = lane / 4, t = lane % 4;
  const int col = (blockIdx.x * WarpsN + wn) * k_warp_cols + 8 * g;
  const bool active = col < n;  // n is a multiple of 8
  const int k_begin = blockIdx.y * chunk;
  const int rows = min(chunk, k - k_begin);
  const int stride = a_stride(chunk);
  const uint16_t* bp = reinterpret_cast<const uint16_t*>(b) + static_cast<long long>(k_begin + 4 * t) * n + col;

  // The first set of B before anything else, then the split's A, 16 bytes at a time where
  // K allows it; past `rows` zeros (B reads zero there too, so no NaN from stale memory).
  uint4 raw0[S][4], raw1[S][4];
  int step0 = wk * S;
  load_set<S>(raw0, bp, n, step0, rows, 4 * t, active);
  const uint16_t* a16 = reinterpret_cast<const uint16_t*>(a);
  if (k % 8 == 0) {
    const int vecs = chunk / 8;
    for (int i = threadIdx.x; i < m_rows * vecs; i += threads) {
      const int m = i / vecs, r = i % vecs * 8;
      const uint4 v = r < rows ? *reinterpret_cast<const uint4*>(a16 + static_cast<long long>(m) * k + k_begin + r)
                               : make_uint4(0, 0, 0, 0);
      *reinterpret_cast<uint4*>(a_s + m * stride + r) = v;
    }
  } else {
    for (int i = threadIdx.x; i < m_rows * chunk; i += threads) {
      const int m = i / chunk, r = i % chunk;
      a_s[m * stride + r] = r < rows ? a16[static_cast<long long>(m) * k + k_begin + r] : uint16_t{0};
    }
  }
  __syncthreads();

  float acc[4][4] = {};
  const bool has_row = g < m_rows;
  const uint16_t* a_row = a_s + (has_row ? g : 0) * stride + 4 * t;
  constexpr int group = WK * S;  // steps the block's warps cover between two sets of a warp
  const int steps = (rows + k_step - 1) / k_step;
  // Two sets in turn: the next one's loads are in flight while this one is multiplied.
  while (step0 < steps) {
    load_set<S>(raw1, bp, n, step0 + group, rows, 4 * t, active);
    mma_set<is_bf16, S>(acc, raw0, a_row, step0, rows, has_row);
    step0 += group;
    if (step0 >= steps) break;
    load_set<S>(raw0, bp, n, step0 + group, rows, 4 * t, active);
    mma_set<is_bf16, S>(acc, raw1, a_row, step0, rows, has_row);
    step0 += group;
  }

  // The column group's WK warps into its first.
  if constexpr (WK > 1) {
    if (wk > 0)
#pragma unroll
      for (int i = 0; i < 16; ++i) red[wk - 1][wn][i][lane] = acc[i / 4][i % 4];
    __syncthreads();
    if (wk == 0)
#pragma unroll
      for (int w = 0; w < WK - 1; ++w)
#pragma unroll
        for (int i = 0; i < 16; ++i) acc[i / 4][i % 4] += red[w][wn][i][lane];
  }

  // Lane (g, t) holds C's rows 2t and 2t+1 at columns col..col+7: MMA i's d0/d1 are column
  // col+2i of the two rows, d2/d3 column col+2i+1.
  if (wk == 0 && active) {
    if (gridDim.y == 1) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = 2 * t + h;
        if (m < m_rows) {
          uint4 out;
          out.x = kport::kernels::pack2<T>(acc[0][h], acc[0][2 + h]);
          out.y = kport::kernels::pack2<T>(acc[1][h], acc[1][2 + h]);
          out.z = kport::kernels::pack2<T>(acc[2][h], acc[2][2 + h]);
          out.w = kport::kernels::pack2<T>(acc[3][h], acc[3][2 + h]);
          *reinterpret_cast<uint4*>(c + static_cast<long long>(m) * n + col) = out;
        }
      }
    } else {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = 2 * t + h;
        if (m < m_rows) {
          float* p = partial + (static_cast<long long>(blockIdx.y) * m_rows + m) * n + col;
          *reinterpret_cast<float4*>(p) = make_float4(acc[0][h], acc[0][2 + h], acc[1][h], acc[1][2 + h]);
          *reinterpret_cast<float4*>(p + 4) = make_float4(acc[2][h], acc[2][2 + h], acc[3][h], acc[3][2 + h]);
        }
      }
      __threadfence();
    }
  }
  if (gridDim.y == 1) return;
  if (!kport::kernels::last_split_to_finish(done)) return;
  constexpr int seg = k_warp_cols * WarpsN;
  kport::kernels::add_splits_in_order<T, threads>(partial, c, done, m_rows, n, static_cast<long long>(m_rows) * n,
                                                  blockIdx.x * seg, seg);
}

// ---- More rows: 16 or 32 (NT = Rows / 8 n8 tiles on the MMA's N side) ----
//
// The same B fragments, read and permuted as above, now feed NT MMAs each: tile j takes A's
// rows 8j..8j+7 as its N, so B is still read once and a step's permutes serve NT x 4 MMAs.
// Lane (g, t) holds C's rows 8j+2t and 8j+2t+1 of tile j at columns col..col+7. A's split
// slice no longer fits shared memory whole at these rows (64 rows of a 1792-row split are
// 229 KB), so A comes in windows of k_window K rows, double-buffered with cp.async: window
// w+1 is copied while window w is multiplied, one barrier a window. The K split is then
// chosen by the grid alone (whole windows a split), not by shared memory.
constexpr int k_window = 256;   // K rows of A a window holds
constexpr int k_max_rows = 32;  // the largest instances' rows (64 were slower than the tiled gemm)

// The MMAs of one set at NT tiles: per step the four A fragments of B's column pairs are
// built once and each multiplies the tiles' activation fragments (rows 8j+g, j < tiles).
// `a_row` is row g of the window's buffer at K column 4t, `row0` the window's first K row;
// tiles at or past `tiles` (rows past m rounded up to 8) are skipped, rows past m inside the
// last tile read zeros from the buffer.
template <bool IsBf16, int S, int NT>
__device__ __forceinline__ void mma_set_rows(float (&acc)[4][NT][4], const uint4 (&raw)[S][4], const uint16_t* a_row,
                                             int tile_stride, int step0, int row0, int rows, int tiles) {
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int r = (step0 + s) * k_step;
    if (r >= rows) break;  // warp-uniform
    uint32_t b[NT][2];
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      b[j][0] = b[j][1] = 0u;
      if (j < tiles) {  // warp-uniform
        const uint2 v = *reinterpret_cast<const uint2*>(a_row + j * tile_stride + (r - row0));
        b[j][0] = v.x, b[j][1] = v.y;
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      uint32_t a[4];
      b_columns_as_a(raw[s], i, a);
#pragma unroll
      for (int j = 0; j < NT; ++j)
        if (j < tiles) kport::kernels::sm80::mma_m16n8k16<IsBf16>(acc[i][j], a, b[j]);
    }
  }
}

// Window w of the split's A (K rows [w * k_window, +k_window) of the split) into `dst`,
// [m][a_stride(k_window)] for m below m_pad (m_rows rounded up to 8), zeros past `rows` and
// m_rows: cp.async of 16 bytes when K is a multiple of 8 (the caller commits), else plain
// copies (seen after the caller's next barrier).
template <int Threads>
__device__ __forceinline__ void stage_window(uint16_t* dst, const uint16_t* a16, int m_rows, int m_pad, int k,
                                             int k_begin, int rows, int w) {
  constexpr int stride = a_stride(k_window);
  const int r0 = w * k_window;
  if (k % 8 == 0) {
    constexpr int vecs = k_window / 8;
    for (int i = threadIdx.x; i < m_pad * vecs; i += Threads) {
      const int m = i / vecs, r = r0 + i % vecs * 8;  // rows and k are multiples of 8
      const bool valid = r < rows && m < m_rows;
      const uint16_t* src = a16 + (valid ? static_cast<long long>(m) * k + k_begin + r : 0);
      kport::kernels::cp_async_16_sm80(dst + m * stride + (r - r0), src, valid);
    }
  } else {
    for (int i = threadIdx.x; i < m_pad * k_window; i += Threads) {
      const int m = i / k_window, r = r0 + i % k_window;
      dst[m * stride + (r - r0)] =
          r < rows && m < m_rows ? a16[static_cast<long long>(m) * k + k_begin + r] : uint16_t{0};
    }
  }
}

// Dynamic shared memory of the kernel below: A's two windows, reused at the end for the
// column groups' WK - 1 warps' sums of the tiles in use.
__host__ __device__ constexpr int rows_smem_bytes(int m_rows, int warps_n, int warps_k) {
  const int windows = 2 * ((m_rows + 7) / 8 * 8) * a_stride(k_window) * 2;  // two buffers of 16-bit values
  const int red = (warps_k - 1) * warps_n * 16 * ((m_rows + 7) / 8) * 32 * 4;
  return windows > red ? windows : red;
}

// One block of the Rows-row kernel: columns [blockIdx.x * 64 * WarpsN, +64 * WarpsN) over the
// K rows of split blockIdx.y (a whole number of windows but at K's end). Partial sums
// [split][m_rows][n] as above.
template <typename T, int Rows, int WarpsN, int WarpsK, int Steps, int MinBlocks>
__global__ void __launch_bounds__(32 * WarpsN * WarpsK, MinBlocks)
    decode_mma_rows_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m_rows, int n,
                           int k, int chunk, float* __restrict__ partial, unsigned* __restrict__ done) {
  constexpr bool is_bf16 = std::is_same_v<T, __nv_bfloat16>;
  constexpr int S = Steps, WK = WarpsK, NT = Rows / 8;
  constexpr int threads = 32 * WarpsN * WK;
  constexpr int group = WK * S;                    // steps the block's warps cover a set
  constexpr int sets = k_window / k_step / group;  // sets of a warp a window
  constexpr int stride = a_stride(k_window);
  static_assert(Rows % 8 == 0 && Rows <= 64, "rows are whole n8 tiles, at most eight");
  static_assert(sets >= 2 && sets % 2 == 0, "a window holds an even number of a warp's sets");
  extern __shared__ __align__(16) uint16_t a_s[];  // [2][m_pad][stride], then the sums
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wn = warp % WarpsN, wk = warp / WarpsN;
  const int g = lane / 4, t = lane % 4;
  const int col = (blockIdx.x * WarpsN + wn) * k_warp_cols + 8 * g;
  const bool active = col < n;  // n is a multiple of 8
  const int k_begin = blockIdx.y * chunk;
  const int rows = min(chunk, k - k_begin);
  const int windows = (rows + k_window - 1) / k_window;
  const uint16_t* bp = reinterpret_cast<const uint16_t*>(b) + static_cast<long long>(k_begin + 4 * t) * n + col;
  const uint16_t* a16 = reinterpret_cast<const uint16_t*>(a);
  const int tiles = (m_rows + 7) / 8, m_pad = 8 * tiles;
  const int buffer = m_pad * stride;

  // The first set of B, then A's first window on its way.
  uint4 raw0[S][4], raw1[S][4];
  int step0 = wk * S;
  load_set<S>(raw0, bp, n, step0, rows, 4 * t, active);
  stage_window<threads>(a_s, a16, m_rows, m_pad, k, k_begin, rows, 0);
  kport::kernels::cp_async_commit_sm80();

  float acc[4][NT][4] = {};
  for (int w = 0; w < windows; ++w) {
    // Window w has landed and every warp is done with window w - 1's buffer: the next
    // window goes there while this one is multiplied.
    kport::kernels::cp_async_wait_sm80<0>();
    __syncthreads();
    if (w + 1 < windows) {
      stage_window<threads>(a_s + (w + 1) % 2 * buffer, a16, m_rows, m_pad, k, k_begin, rows, w + 1);
      kport::kernels::cp_async_commit_sm80();
    }
    const uint16_t* a_row = a_s + w % 2 * buffer + g * stride + 4 * t;
    const int row0 = w * k_window;
#pragma unroll 1
    for (int p = 0; p < sets; p += 2) {
      load_set<S>(raw1, bp, n, step0 + group, rows, 4 * t, active);
      mma_set_rows<is_bf16, S, NT>(acc, raw0, a_row, 8 * stride, step0, row0, rows, tiles);
      step0 += group;
      load_set<S>(raw0, bp, n, step0 + group, rows, 4 * t, active);
      mma_set_rows<is_bf16, S, NT>(acc, raw1, a_row, 8 * stride, step0, row0, rows, tiles);
      step0 += group;
    }
  }

  // The column group's WK warps into its first, through the windows' memory.
  if constexpr (WK > 1) {
    float* red = reinterpret_cast<float*>(a_s);
    const int per_warp = 16 * tiles * 32;
    __syncthreads();  // every warp is done with A
    if (wk > 0)
#pragma unroll
      for (int j = 0; j < NT; ++j)
        if (j < tiles)
#pragma unroll
          for (int i = 0; i < 16; ++i)
            red[((wk - 1) * WarpsN + wn) * per_warp + (j * 16 + i) * 32 + lane] = acc[i / 4][j][i % 4];
    __syncthreads();
    if (wk == 0)
#pragma unroll
      for (int v = 0; v < WK - 1; ++v)
#pragma unroll
        for (int j = 0; j < NT; ++j)
          if (j < tiles)
#pragma unroll
            for (int i = 0; i < 16; ++i)
              acc[i / 4][j][i % 4] += red[(v * WarpsN + wn) * per_warp + (j * 16 + i) * 32 + lane];
  }

  // Tile j: lane (g, t) holds C's rows 8j+2t and 8j+2t+1 at columns col..col+7 (MMA i's
  // d0/d1 column col+2i, d2/d3 column col+2i+1).
  if (wk == 0 && active) {
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = 8 * j + 2 * t + h;
        if (m >= m_rows) continue;
        if (gridDim.y == 1) {
          uint4 out;
          out.x = kport::kernels::pack2<T>(acc[0][j][h], acc[0][j][2 + h]);
          out.y = kport::kernels::pack2<T>(acc[1][j][h], acc[1][j][2 + h]);
          out.z = kport::kernels::pack2<T>(acc[2][j][h], acc[2][j][2 + h]);
          out.w = kport::kernels::pack2<T>(acc[3][j][h], acc[3][j][2 + h]);
          *reinterpret_cast<uint4*>(c + static_cast<long long>(m) * n + col) = out;
        } else {
          float* p = partial + (static_cast<long long>(blockIdx.y) * m_rows + m) * n + col;
          *reinterpret_cast<float4*>(p) = make_float4(acc[0][j][h], acc[0][j][2 + h], acc[1][j][h], acc[1][j][2 + h]);
          *reinterpret_cast<float4*>(p + 4) =
              make_float4(acc[2][j][h], acc[2][j][2 + h], acc[3][j][h], acc[3][j][2 + h]);
        }
      }
    if (gridDim.y > 1) __threadfence();
  }
  if (gridDim.y == 1) return;
  if (!kport::kernels::last_split_to_finish(done)) return;
  constexpr int seg = k_warp_cols * WarpsN;
  kport::kernels::add_splits_in_order<T, threads>(partial, c, done, m_rows, n, static_cast<long long>(m_rows) * n,
                                                  blockIdx.x * seg, seg);
}

// What an instance of `Rows` rows takes: m from 1 to Rows (the MMA's N side holds Rows / 8
// tiles of eight rows; tiles past m are skipped), n a multiple of 8, any K, 16-bit types. Every
// m an instance takes is one it may be measured at, so the best-kernel answers about small m
// compare the 16- and 32-row instances with the 8-row ones on figures, not on a model.
template <int Rows>
std::string supports_gemm(const GemmArgs& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return "m, n, k must be positive";
  if (g.m > Rows) {
    std::string why = "m = " + std::to_string(g.m) + " is above this instance's " + std::to_string(Rows) +
                      " rows (its MMAs' N side holds " + std::to_string(Rows) + " rows of A)";
    return g.m > k_max_rows ? why + "; gemm.decode_mma takes m <= " + std::to_string(k_max_rows) + ": use a tiled gemm"
                            : why + "; gemm.decode_mma's m16 and m32 instances take up to 16 and 32 rows";
  }
  if (g.n % 8 != 0) return "n = " + std::to_string(g.n) + " must be a multiple of 8 (B is read 16 bytes at a time)";
  return "";
}

template <int Rows>
std::string supports(const Problem& p) {
  if (p.family != Family::gemm) return "not a gemm problem";
  switch (p.gemm.dtype) {
    case DType::f16:
    case DType::bf16: return supports_gemm<Rows>(p.gemm);
    default: return "dtype not supported: gemm.decode_mma takes bf16 and fp16 (a 16-bit MMA); gemm.gemv takes fp32";
  }
}

// Launches `kernel` (either decode kernel: they take the same arguments) as segments x
// plan.splits blocks of `threads` with `smem` bytes of dynamic shared memory, after the split
// workspace when K is split.
template <typename T, typename Kernel>
cudaError_t launch_split(Kernel kernel, const GemmArgs& g, int segments, const SplitK& plan, int threads,
                         std::size_t smem, cudaStream_t stream) {
  float* partial = nullptr;
  unsigned* done = nullptr;
  if (plan.splits > 1)
    if (cudaError_t e = kport::kernels::split_k_workspace(static_cast<std::size_t>(plan.splits) * g.m * g.n, segments,
                                                          partial, done);
        e != cudaSuccess)
      return e;
  if (smem > 48 * 1024)
    if (cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
        e != cudaSuccess)
      return e;
  kernel<<<dim3(segments, plan.splits), threads, smem, stream>>>(static_cast<const T*>(g.a), static_cast<const T*>(g.b),
                                                                 static_cast<T*>(g.c), g.m, g.n, g.k, plan.chunk,
                                                                 partial, done);
  return cudaGetLastError();
}

template <Config C, typename T>
cudaError_t launch_typed(const GemmArgs& g, cudaStream_t stream) {
  constexpr int seg = k_warp_cols * C.warps_n;
  constexpr int group = k_step * C.warps_k * C.steps;  // K rows the block reads per set
  const int segments = (g.n + seg - 1) / seg;
  int sms = 0;
  if (cudaError_t e = kport::kernels::sm_count(sms); e != cudaSuccess) return e;
  // The split's A, m rows of a_stride(chunk) 16-bit values, within C.a_bytes.
  const int chunk_most = std::max(group, (C.a_bytes / (2 * g.m) - 80) / group * group);
  const SplitK plan = kport::kernels::plan_split_k(g.k, segments, sms, C.blocks_per_sm, group, chunk_most);
  const std::size_t a_bytes = static_cast<std::size_t>(g.m) * a_stride(plan.chunk) * sizeof(uint16_t);
  return launch_split<T>(decode_mma_kernel<T, C.warps_n, C.warps_k, C.steps>, g, segments, plan,
                         32 * C.warps_n * C.warps_k, a_bytes, stream);
}

// The Rows-row kernel: K split by the grid alone, each split whole windows of A (but at K's
// end), A's two windows (or the sums of the K warps, the larger) in dynamic shared memory.
template <int Rows, Config C, typename T>
cudaError_t launch_rows_typed(const GemmArgs& g, cudaStream_t stream) {
  constexpr int seg = k_warp_cols * C.warps_n;
  const int segments = (g.n + seg - 1) / seg;
  int sms = 0;
  if (cudaError_t e = kport::kernels::sm_count(sms); e != cudaSuccess) return e;
  constexpr int chunk_most = (1 << 30) / k_window * k_window;
  const SplitK plan = kport::kernels::plan_split_k(g.k, segments, sms, C.blocks_per_sm, k_window, chunk_most);
  return launch_split<T>(decode_mma_rows_kernel<T, Rows, C.warps_n, C.warps_k, C.steps, C.blocks_per_sm>, g, segments,
                         plan, 32 * C.warps_n * C.warps_k, rows_smem_bytes(g.m, C.warps_n, C.warps_k), stream);
}

template <Config C>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  switch (p.gemm.dtype) {
    case DType::f16: return launch_typed<C, __half>(p.gemm, stream);
    case DType::bf16: return launch_typed<C, __nv_bfloat16>(p.gemm, stream);
    default: return cudaErrorInvalidValue;
  }
}

template <int Rows, Config C>
cudaError_t launch_rows(const Problem& p, cudaStream_t stream) {
  switch (p.gemm.dtype) {
    case DType::f16: return launch_rows_typed<Rows, C, __half>(p.gemm, stream);
    case DType::bf16: return launch_rows_typed<Rows, C, __nv_bfloat16>(p.gemm, stream);
    default: return cudaErrorInvalidValue;
  }
}

// The instances: WarpsN x WarpsK warps, S steps a set of loads, the blocks per SM the K split
// aims at, A's slice within 32 KB. Their geometry for the best-kernel query: one tile of rows
// (bm = max_m), a block's BN columns, K in 16-row MMA steps split over the grid until the GPU
// is full (split_k 0), so the time moves with N x K and not with M.
#define KPORT_DECODE_MMA_INSTANCE(VAR, NAME, WN, WK, S, BPS, BN)                                                    \
  constexpr Config k_cfg_##VAR{WN, WK, S, BPS, 32 * 1024};                                                          \
  const Instance VAR{Family::gemm,                                                                                  \
                     "decode_mma",                                                                                  \
                     "gemm.decode_mma." NAME,                                                                       \
                     {"mma_sync", "mma_sync_bf16"},                                                                 \
                     {DType::bf16, DType::f16},                                                                     \
                     R"({"max_m":8,"bm":8,"bn":)" #BN R"(,"bk":16,"run_n_align_bytes":16,"warps_n":)" #WN           \
                     R"(,"warps_k":)" #WK R"(,"steps_per_set":)" #S R"(,"blocks_per_sm":)" #BPS                     \
                     R"(,"mma":"m16n8k16, C transposed","a_staged_bytes":32768,)"                                   \
                     R"("split_k":0,"split_k_by":"grid until about blocks_per_sm blocks per SM, in split order"})", \
                     &supports<k_max_m>,                                                                            \
                     &launch<k_cfg_##VAR>};                                                                         \
  KPORT_REGISTER_KERNEL(VAR)

KPORT_DECODE_MMA_INSTANCE(k_n64_k4_s2, "n64_k4_s2", 1, 4, 2, 4, 64);
KPORT_DECODE_MMA_INSTANCE(k_n64_k4_s1, "n64_k4_s1", 1, 4, 1, 8, 64);
KPORT_DECODE_MMA_INSTANCE(k_n128_k2_s2, "n128_k2_s2", 2, 2, 2, 4, 128);
KPORT_DECODE_MMA_INSTANCE(k_n256_k1_s2, "n256_k1_s2", 4, 1, 2, 4, 256);

// The instances of 16, 32 and 64 rows: geometry as above with bm = max_m = ROWS and A staged
// in windows of 256 K rows, the K split by the grid alone (whole windows a split).
#define KPORT_DECODE_MMA_ROWS_INSTANCE(VAR, NAME, ROWS, WN, WK, S, BPS, BN)                                          \
  constexpr Config k_cfg_##VAR{WN, WK, S, BPS, 0};                                                                   \
  const Instance VAR{Family::gemm,                                                                                   \
                     "decode_mma",                                                                                   \
                     "gemm.decode_mma." NAME,                                                                        \
                     {"mma_sync", "mma_sync_bf16"},                                                                  \
                     {DType::bf16, DType::f16},                                                                      \
                     R"({"max_m":)" #ROWS R"(,"bm":)" #ROWS R"(,"bn":)" #BN R"(,"bk":16,"run_n_align_bytes":16)"     \
                     R"(,"warps_n":)" #WN R"(,"warps_k":)" #WK R"(,"steps_per_set":)" #S R"(,"blocks_per_sm":)" #BPS \
                     R"(,"mma":"m16n8k16, C transposed","a_window_rows":256,)"                                       \
                     R"("split_k":0,"split_k_by":"grid until about blocks_per_sm blocks per SM, in split order"})",  \
                     &supports<ROWS>,                                                                                \
                     &launch_rows<ROWS, k_cfg_##VAR>};                                                               \
  KPORT_REGISTER_KERNEL(VAR)

KPORT_DECODE_MMA_ROWS_INSTANCE(k_m16_n64_k4_s2, "m16_n64_k4_s2", 16, 1, 4, 2, 3, 64);
KPORT_DECODE_MMA_ROWS_INSTANCE(k_m16_n64_k4_s1, "m16_n64_k4_s1", 16, 1, 4, 1, 4, 64);
KPORT_DECODE_MMA_ROWS_INSTANCE(k_m16_n128_k2_s2, "m16_n128_k2_s2", 16, 2, 2, 2, 3, 128);
KPORT_DECODE_MMA_ROWS_INSTANCE(k_m16_n256_k1_s2, "m16_n256_k1_s2", 16, 4, 1, 2, 3, 256);
KPORT_DECODE_MMA_ROWS_INSTANCE(k_m32_n64_k4_s1, "m32_n64_k4_s1", 32, 1, 4, 1, 3, 64);
KPORT_DECODE_MMA_ROWS_INSTANCE(k_m32_n128_k2_s1, "m32_n128_k2_s1", 32, 2, 2, 1, 3, 128);
KPORT_DECODE_MMA_ROWS_INSTANCE(k_m32_n256_k1_s1, "m32_n256_k1_s1", 32, 4, 1, 1, 3, 256);
KPORT_DECODE_MMA_ROWS_INSTANCE(k_m32_n256_k1_s2, "m32_n256_k1_s2", 32, 4, 1, 2, 2, 256);

}  // namespace
