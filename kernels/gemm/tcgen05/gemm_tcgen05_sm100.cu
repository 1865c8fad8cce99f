// Blackwell gemm: C[M,N] = A[M,K] * B[K,N], row-major, bf16/fp16 in, fp32 accumulate, C in the
// input type. Target: sm_100a (and the other tcgen05 targets, sm_103a/sm_110a and their f
// variants). No GPU of that family is available to this project yet: the variant compiles and
// its instruction audit passes, but it has never run, so its numerics are unverified.
//
// Algorithm: one CTA of four warps per 128x256 output tile (tiles in a grouped order for L2
// reuse). Warp 0 streams 128x64 tiles of A and 64x256 tiles of B through a 4-stage ring of
// shared memory with TMA (128-byte swizzle); warp 1 issues tcgen05.mma (cta_group::1,
// kind::f16, M=128, N=256, K=16) from a single thread into an fp32 accumulator in tensor
// memory, and tcgen05.commit releases each stage to the producer once the MMAs that read it
// have finished. Warp 2 allocates and frees the 256 tensor-memory columns. When the last
// commit lands, all four warps move their 32 accumulator lanes to registers with tcgen05.ld,
// convert, and store rows of C with 16-byte stores, guarded at the M and N edges.
//
// Constraints: K and N multiples of 8 (TMA 16-byte row strides), 16-byte aligned pointers.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "common/convert.cuh"
#include "common/mbarrier_sm90.cuh"
#include "common/smem.cuh"
#include "common/tcgen05_sm100.cuh"
#include "common/tma_host_sm90.h"
#include "common/tma_sm90.cuh"
#include "kport/kernels/registry.h"

namespace kport::kernels::gemm_tcgen05 {
namespace {

using namespace kport::kernels::sm90;  // mbarriers and TMA: the same PTX on sm_100
using namespace kport::kernels::sm100;

constexpr int k_threads = 128;
constexpr int k_group_m = 8;

template <int BM_, int BN_, int BK_, int Stages_>
struct Config {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, Stages = Stages_;
  static_assert(BM == 128, "cta_group::1 MMA with all 128 tensor-memory lanes");
  static_assert(BN % 32 == 0 && BN >= 32 && BN <= 256, "N of one MMA; 32-column loads");
  static_assert((BN & (BN - 1)) == 0, "tensor memory is allocated in powers of two columns");
  static_assert(BK == 64, "one 128-byte swizzle row of 16-bit elements per K block");
  static_assert(BN % 64 == 0, "B arrives in 64-column slabs");
  static constexpr int a_bytes = BM * BK * 2;
  static constexpr int b_chunk_bytes = BK * 64 * 2;
  static constexpr int stage_bytes = a_bytes + BK * BN * 2;
  static constexpr int tmem_cols = BN;
  // stages, full/empty barriers, the accumulator barrier and the tensor-memory address slot
  static constexpr int smem_bytes = Stages * stage_bytes + (2 * Stages + 1) * 8 + 16 + 1024;
  static_assert(smem_bytes <= 227 * 1024, "fits the sm_100 per-block shared memory");
};

template <class Cfg, class T>
__global__ void __launch_bounds__(k_threads, 1)
    gemm_tcgen05_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                        T* __restrict__ c, int m, int n, int k) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, S = Cfg::Stages;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t smem_base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t bar_base = smem_base + S * Cfg::stage_bytes;
  auto full_bar = [&](int s) { return bar_base + 8u * s; };
  auto empty_bar = [&](int s) { return bar_base + 8u * (S + s); };
  const uint32_t acc_bar = bar_base + 16u * S;
  const uint32_t tmem_slot = acc_bar + 8u;
  auto stage_a = [&](int s) { return smem_base + s * Cfg::stage_bytes; };
  auto stage_b = [&](int s) { return smem_base + s * Cfg::stage_bytes + Cfg::a_bytes; };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  // grouped tile order
  const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
  const int per_group = k_group_m * tiles_n;
  const int group = blockIdx.x / per_group, first_m = group * k_group_m;
  const int rows = min(tiles_m - first_m, k_group_m);
  const int tm = first_m + (blockIdx.x - group * per_group) % rows;
  const int tn = (blockIdx.x - group * per_group) / rows;
  const int k_blocks = (k + BK - 1) / BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(full_bar(s), 1);
      mbar_init(empty_bar(s), 1);
    }
    mbar_init(acc_bar, 1);
    mbar_fence_init();
    tma_prefetch_desc(&tmap_a);
    tma_prefetch_desc(&tmap_b);
  }
  if (warp == 2) {
    tmem_alloc(tmem_slot, Cfg::tmem_cols);
    tmem_relinquish();
  }
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  uint32_t tmem_d;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(tmem_d) : "r"(tmem_slot) : "memory");

  if (warp == 0 && lane == 0) {
    // TMA producer
    int s = 0;
    uint32_t phase = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
      mbar_wait(empty_bar(s), phase ^ 1);
      mbar_arrive_expect_tx(full_bar(s), Cfg::stage_bytes);
      tma_load_2d(stage_a(s), &tmap_a, kb * BK, tm * BM, full_bar(s));
#pragma unroll
      for (int j = 0; j < BN / 64; ++j)
        tma_load_2d(stage_b(s) + j * Cfg::b_chunk_bytes, &tmap_b, tn * BN + j * 64, kb * BK, full_bar(s));
      if (++s == S) {
        s = 0;
        phase ^= 1;
      }
    }
  } else if (warp == 1 && lane == 0) {
    // MMA issuer
    constexpr uint32_t idesc = make_idesc_f16<BM, BN, std::is_same_v<T, __nv_bfloat16>>();
    int s = 0;
    uint32_t phase = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
      mbar_wait(full_bar(s), phase);
      tc_fence_after();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const uint64_t da = make_sdesc_sw128(stage_a(s) + kk * 32, 16, 1024);
        const uint64_t db = make_sdesc_sw128(stage_b(s) + kk * 2048, Cfg::b_chunk_bytes, 1024);
        mma_f16(tmem_d, da, db, idesc, (kb > 0 || kk > 0) ? 1u : 0u);
      }
      mma_commit(empty_bar(s));  // stage s is free once these MMAs are done
      if (++s == S) {
        s = 0;
        phase ^= 1;
      }
    }
    mma_commit(acc_bar);  // accumulator complete
  }
  __syncwarp();

  // Epilogue: warp w owns tensor-memory lanes (rows) 32w..32w+31; 32 columns per load.
  mbar_wait(acc_bar, 0);
  tc_fence_after();
  const int row = tm * BM + warp * 32 + lane;
  const uint32_t lane_addr = tmem_d + (static_cast<uint32_t>(warp * 32) << 16);
#pragma unroll 1
  for (int chunk = 0; chunk < BN / 32; ++chunk) {
    uint32_t r[32];
    tmem_ld_32x32b_x32(lane_addr + chunk * 32, r);
    tmem_wait_ld();
    const int col = tn * BN + chunk * 32;
    if (row >= m || col >= n) continue;
    uint32_t packed[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) packed[i] = pack2<T>(__uint_as_float(r[2 * i]), __uint_as_float(r[2 * i + 1]));
    T* dst = c + static_cast<size_t>(row) * n + col;
    if (col + 32 <= n) {
      // n % 8 == 0 and col % 32 == 0 keep these 16-byte aligned
#pragma unroll
      for (int q = 0; q < 4; ++q)
        reinterpret_cast<uint4*>(dst)[q] =
            make_uint4(packed[4 * q], packed[4 * q + 1], packed[4 * q + 2], packed[4 * q + 3]);
    } else {
#pragma unroll
      for (int i = 0; i < 16; ++i)
        if (col + 2 * i < n) reinterpret_cast<uint32_t*>(dst)[i] = packed[i];
    }
  }
  tc_fence_before();
  __syncthreads();
  if (warp == 2) {
    tc_fence_after();
    tmem_dealloc(tmem_d, Cfg::tmem_cols);
  }
#endif
}

// ---- host side --------------------------------------------------------------------------------

using tma_host::make_tmap;

std::string supports(const Problem& p) { return tma_host::gemm_supports(p, "tcgen05"); }

template <class Cfg, class T>
cudaError_t launch_typed(const GemmArgs& g, cudaStream_t stream) {
  if (g.m == 0 || g.n == 0) return cudaSuccess;
  if (g.k == 0)  // empty sum: C is zero
    return cudaMemsetAsync(g.c, 0, static_cast<size_t>(g.m) * g.n * sizeof(T), stream);
  CUtensorMap ta, tb;
  if (!make_tmap(&ta, g.a, g.m, g.k, Cfg::BM, g.dtype) || !make_tmap(&tb, g.b, g.k, g.n, Cfg::BK, g.dtype))
    return cudaErrorInvalidValue;
  auto kernel = gemm_tcgen05_kernel<Cfg, T>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  const int tiles = ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN);
  kernel<<<tiles, k_threads, Cfg::smem_bytes, stream>>>(ta, tb, static_cast<T*>(g.c), g.m, g.n, g.k);
  return cudaGetLastError();
}

template <class Cfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  if (p.gemm.dtype == DType::bf16) return launch_typed<Cfg, __nv_bfloat16>(p.gemm, stream);
  return launch_typed<Cfg, __half>(p.gemm, stream);
}

using Cfg128x256 = Config<128, 256, 64, 4>;

const Instance k_inst_128x256{Family::gemm,
                              "tcgen05",
                              "gemm.tcgen05.128x256x64_s4",
                              {"tcgen05", "tmem", "tma", "mbarrier"},
                              {DType::bf16, DType::f16},
                              "{\"bm\":128,\"bn\":256,\"bk\":64,\"stages\":4,\"threads\":128,\"cta_group\":1,"
                              "\"verified\":false}",
                              &supports,
                              &launch<Cfg128x256>};

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x256);

}  // namespace kport::kernels::gemm_tcgen05
