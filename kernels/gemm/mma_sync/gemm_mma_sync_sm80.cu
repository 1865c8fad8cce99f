// Ampere-class gemm: C[M,N] = A[M,K] * B[K,N], row-major, bf16/fp16 in, fp32 accumulate, C in
// the input type. Target: sm_80 and every later target (sm_86/89/90/100/120 run it unchanged).
//
// Algorithm: each CTA of 8 warps computes a BMxBN tile of C. A Stages-deep ring of shared
// memory is filled with cp.async (16-byte, L2-only) BK columns of A and BK rows of B at a
// time, so Stages-1 loads are in flight while the tensor cores work on the oldest stage. Each
// warp owns a (BM/WarpsM)x(BN/WarpsN) sub-tile: A fragments come from ldmatrix.x4, B fragments
// (B is row-major [K,N], i.e. N-contiguous) from ldmatrix.x4.trans, and mma.sync.m16n8k16
// accumulates in fp32 registers. Shared-memory rows are padded by 16 bytes so the eight rows
// one ldmatrix reads fall in distinct bank groups. Tiles are visited in a grouped order so
// CTAs running together share rows of A and columns of B in L2.
//
// Constraints: none on M, N, K. The fast path needs K and N multiples of 8 and 16-byte
// aligned pointers (16-byte cp.async); other shapes take a path that loads element by element
// with bounds checks and stores C one element at a time.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "common/convert.cuh"
#include "common/cp_async_sm80.cuh"
#include "common/mma_sync_sm80.cuh"
#include "common/smem.cuh"
#include "kport/kernels/registry.h"

namespace kport::kernels::gemm_mma_sync {
namespace {

using namespace kport::kernels::sm80;

constexpr int k_group_m = 8;  // tile rows per L2 group

template <int BM_, int BN_, int BK_, int WarpsM_, int WarpsN_, int Stages_>
struct Config {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WarpsM = WarpsM_, WarpsN = WarpsN_;
  static constexpr int Stages = Stages_;
  static constexpr int threads = WarpsM * WarpsN * 32;
  static constexpr int WM = BM / WarpsM, WN = BN / WarpsN;  // warp tile
  static constexpr int MT = WM / 16, NT = WN / 8;           // mma tiles per warp
  static constexpr int a_ld = BK + 8, b_ld = BN + 8;        // padded row lengths (elements)
  static constexpr int a_elems = BM * a_ld, b_elems = BK * b_ld;
  static constexpr int smem_bytes = Stages * (a_elems + b_elems) * 2;
  static_assert(BK % 16 == 0, "BK is a whole number of k16 steps");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tile in 16x16 blocks (ldmatrix.x4)");
  static_assert((BM * BK / 8) % threads == 0 && (BK * BN / 8) % threads == 0,
                "every thread copies the same number of 16-byte chunks");
  static_assert(Stages >= 2, "pipeline depth");
};

// Copies a rows x cols tile whose top-left global element is (r0, c0) of a row-major [R, C]
// matrix into shared memory with row stride `ld`, zero-filling outside the matrix.
template <int Rows, int Cols, int Threads, bool Aligned, class T>
__device__ __forceinline__ void load_tile(T* sdst, int ld, const T* __restrict__ g, int R, int C, int r0, int c0) {
  constexpr int chunks_per_row = Cols / 8;
  constexpr int per_thread = Rows * chunks_per_row / Threads;
  if constexpr (Aligned) {
#pragma unroll
    for (int i = 0; i < per_thread; ++i) {
      const int idx = threadIdx.x + i * Threads;
      const int r = idx / chunks_per_row, cc = (idx % chunks_per_row) * 8;
      const int gr = r0 + r, gc = c0 + cc;
      // C % 8 == 0 here, so a chunk is entirely inside or entirely outside.
      const bool in = gr < R && gc < C;
      const T* src = in ? g + static_cast<size_t>(gr) * C + gc : g;
      cp_async_16_sm80(sdst + r * ld + cc, src, in);
    }
  } else {
    // Slow path for unaligned shapes; not unrolled, which keeps the large tiles free of spills.
#pragma unroll 1
    for (int i = 0; i < per_thread; ++i) {
      const int idx = threadIdx.x + i * Threads;
      const int r = idx / chunks_per_row, cc = (idx % chunks_per_row) * 8;
      const int gr = r0 + r, gc = c0 + cc;
      T* dst = sdst + r * ld + cc;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const bool in = gr < R && gc + e < C;
        dst[e] = in ? g[static_cast<size_t>(gr) * C + gc + e] : from_float<T>(0.f);
      }
    }
  }
}

template <class Cfg, class T, bool Aligned>
__global__ void __launch_bounds__(Cfg::threads)
    gemm_mma_sync_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n, int k) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, S = Cfg::Stages;
  constexpr int MT = Cfg::MT, NT = Cfg::NT;
  constexpr bool is_bf16 = std::is_same_v<T, __nv_bfloat16>;
  extern __shared__ __align__(16) uint8_t smem_raw[];
  T* sa = reinterpret_cast<T*>(smem_raw);
  T* sb = sa + S * Cfg::a_elems;

  // grouped tile order: k_group_m tile rows sweep all tile columns before moving on
  const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
  const int tile = blockIdx.x;
  const int per_group = k_group_m * tiles_n;
  const int group = tile / per_group, first_m = group * k_group_m;
  const int rows = min(tiles_m - first_m, k_group_m);
  const int tm = first_m + (tile - group * per_group) % rows;
  const int tn = (tile - group * per_group) / rows;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / Cfg::WarpsN, wn = warp % Cfg::WarpsN;
  const int k_blocks = (k + BK - 1) / BK;

  auto load_stage = [&](int stage, int kb) {
    load_tile<BM, BK, Cfg::threads, Aligned>(sa + stage * Cfg::a_elems, Cfg::a_ld, a, m, k, tm * BM, kb * BK);
    load_tile<BK, BN, Cfg::threads, Aligned>(sb + stage * Cfg::b_elems, Cfg::b_ld, b, k, n, kb * BK, tn * BN);
  };

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < k_blocks) load_stage(s, s);
    cp_async_commit_sm80();
  }

  // lane -> (row, column) inside a 16x16 block for ldmatrix.x4
  const int ld_row = (lane % 8) + ((lane / 8) % 2) * 8;
  const int ld_col = (lane / 16) * 8;

  for (int kb = 0; kb < k_blocks; ++kb) {
    cp_async_wait_sm80<S - 2>();
    __syncthreads();  // stage kb landed for everyone; stage kb-1 is free to overwrite
    if (kb + S - 1 < k_blocks) load_stage((kb + S - 1) % S, kb + S - 1);
    cp_async_commit_sm80();

    const T* sta = sa + (kb % S) * Cfg::a_elems;
    const T* stb = sb + (kb % S) * Cfg::b_elems;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t af[MT][4], bfr[NT][2];
#pragma unroll
      for (int i = 0; i < MT; ++i)
        ldmatrix_x4(af[i], smem_u32(sta + (wm * Cfg::WM + i * 16 + ld_row) * Cfg::a_ld + kk + ld_col));
#pragma unroll
      for (int j = 0; j < NT; j += 2) {
        uint32_t r[4];
        ldmatrix_x4_trans(r, smem_u32(stb + (kk + ld_row) * Cfg::b_ld + wn * Cfg::WN + j * 8 + ld_col));
        bfr[j][0] = r[0];
        bfr[j][1] = r[1];
        bfr[j + 1][0] = r[2];
        bfr[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) mma_m16n8k16<is_bf16>(acc[i][j], af[i], bfr[j]);
    }
  }
  cp_async_wait_sm80<0>();

  // C fragment: rows lane/4 and +8, columns 2*(lane%4) and +1 of each 16x8 block
  const int row_base = tm * BM + wm * Cfg::WM + lane / 4;
  const int col_base = tn * BN + wn * Cfg::WN + (lane % 4) * 2;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_base + i * 16 + h * 8, col = col_base + j * 8;
        if (row >= m) continue;
        T* dst = c + static_cast<size_t>(row) * n + col;
        if constexpr (Aligned) {
          if (col < n) *reinterpret_cast<uint32_t*>(dst) = pack2<T>(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (col < n) dst[0] = from_float<T>(acc[i][j][2 * h]);
          if (col + 1 < n) dst[1] = from_float<T>(acc[i][j][2 * h + 1]);
        }
      }
}

// ---- host side --------------------------------------------------------------------------------

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <class Cfg>
std::string supports(const Problem& p) {
  if (p.family != Family::gemm) return "not a gemm problem";
  const GemmArgs& g = p.gemm;
  if (g.dtype != DType::bf16 && g.dtype != DType::f16)
    return std::string("dtype ") + dtype_name(g.dtype) +
           " not supported: mma_sync takes bf16 or f16 (use the simt variant for f32)";
  if (g.m < 0 || g.n < 0 || g.k < 0) return "negative dimension";
  int dev = 0, smem = 0;
  if (cudaGetDevice(&dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess &&
      smem < Cfg::smem_bytes)
    return "needs " + std::to_string(Cfg::smem_bytes) + " bytes of shared memory per block, device has " +
           std::to_string(smem);
  return "";
}

template <class Cfg, class T, bool Aligned>
cudaError_t launch_kernel(const GemmArgs& g, cudaStream_t stream) {
  auto kernel = gemm_mma_sync_kernel<Cfg, T, Aligned>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  const int tiles = ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN);
  kernel<<<tiles, Cfg::threads, Cfg::smem_bytes, stream>>>(static_cast<const T*>(g.a), static_cast<const T*>(g.b),
                                                           static_cast<T*>(g.c), g.m, g.n, g.k);
  return cudaGetLastError();
}

template <class Cfg, class T>
cudaError_t launch_typed(const GemmArgs& g, cudaStream_t stream) {
  if (g.m == 0 || g.n == 0) return cudaSuccess;
  const bool aligned = g.k % 8 == 0 && g.n % 8 == 0 && aligned16(g.a) && aligned16(g.b) && aligned16(g.c);
  return aligned ? launch_kernel<Cfg, T, true>(g, stream) : launch_kernel<Cfg, T, false>(g, stream);
}

template <class Cfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  if (p.gemm.dtype == DType::bf16) return launch_typed<Cfg, __nv_bfloat16>(p.gemm, stream);
  return launch_typed<Cfg, __half>(p.gemm, stream);
}

template <class Cfg>
std::string config_json() {
  return "{\"bm\":" + std::to_string(Cfg::BM) + ",\"bn\":" + std::to_string(Cfg::BN) +
         ",\"bk\":" + std::to_string(Cfg::BK) + ",\"stages\":" + std::to_string(Cfg::Stages) +
         ",\"warps_m\":" + std::to_string(Cfg::WarpsM) + ",\"warps_n\":" + std::to_string(Cfg::WarpsN) +
         ",\"threads\":" + std::to_string(Cfg::threads) + ",\"smem_bytes\":" + std::to_string(Cfg::smem_bytes) +
         R"(,"n_align_bytes":16,"k_align_bytes":16})";  // launch_typed's other kernel off 16-byte rows
}

// 128x128: 8 warps of 64x32; 4 stages (76 KB) fit every target down to sm_86's 99 KB.
using Cfg128x128 = Config<128, 128, 32, 2, 4, 4>;
// 128x256: 8 warps of 64x64; 3 stages (81 KB) for the same reason.
using Cfg128x256 = Config<128, 256, 32, 2, 4, 3>;
// 128x256 with BK=64: half the barriers per K; 157 KB, so sm_80/87/90/100 only (supports()
// refuses it on the 99 KB parts). 7% ahead of 128x128x32_s4 at 4096^3 on the H200.
using Cfg128x256K64 = Config<128, 256, 64, 2, 4, 3>;

const Instance k_inst_128x128{Family::gemm,
                              "mma_sync",
                              "gemm.mma_sync.128x128x32_s4",
                              {"mma_sync", "mma_sync_bf16", "ldmatrix", "cp_async"},
                              {DType::bf16, DType::f16},
                              config_json<Cfg128x128>(),
                              &supports<Cfg128x128>,
                              &launch<Cfg128x128>};
const Instance k_inst_128x256{Family::gemm,
                              "mma_sync",
                              "gemm.mma_sync.128x256x32_s3",
                              {"mma_sync", "mma_sync_bf16", "ldmatrix", "cp_async"},
                              {DType::bf16, DType::f16},
                              config_json<Cfg128x256>(),
                              &supports<Cfg128x256>,
                              &launch<Cfg128x256>};

const Instance k_inst_128x256k64{Family::gemm,
                                 "mma_sync",
                                 "gemm.mma_sync.128x256x64_s3",
                                 {"mma_sync", "mma_sync_bf16", "ldmatrix", "cp_async"},
                                 {DType::bf16, DType::f16},
                                 config_json<Cfg128x256K64>(),
                                 &supports<Cfg128x256K64>,
                                 &launch<Cfg128x256K64>};

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x128);
KPORT_REGISTER_KERNEL(k_inst_128x256);
KPORT_REGISTER_KERNEL(k_inst_128x256k64);

}  // namespace kport::kernels::gemm_mma_sync
