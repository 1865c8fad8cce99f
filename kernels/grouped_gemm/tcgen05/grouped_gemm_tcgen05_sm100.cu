// grouped_gemm, Blackwell: the contiguous layout of prefill MoE on the tcgen05 gemm tile of
// common/tcgen05_gemm_sm100.cuh, as gemm.tcgen05 runs it. Target: sm_100a (and the other
// tcgen05 targets). No GPU of that family is available to this project yet: the variant
// compiles and its instruction audit passes, but it has never run, so its numerics are
// unverified (its config says "verified": false).
//
// The contiguous layout is one tall gemm over G*M rows of A and D whose B changes every M rows:
// each group's M is a multiple of the 128-row tile, so a tile row lies in one group, and its
// group is its first row divided by M. B is read through a 3-D tensor map [G][K][N] (as the
// Hopper variant reads it): a K not a multiple of 64 is zero-filled at the end of the group's
// slice instead of being read from the next group.
//
// Constraints: bf16; M (per group) a multiple of 128; K and N multiples of 8 (TMA's 16-byte row
// strides); A, B and D 16-byte aligned. The masked layout (masked_m set, counts on the device)
// runs the masked kernel of grouped_gemm_tcgen05_masked_sm100.cu at the same tile, M free.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <string>

#include "grouped_gemm/tcgen05/grouped_gemm_tcgen05_masked_sm100.h"

#include "common/grouped_masked_supports.h"
#include "common/mbarrier_sm90.cuh"
#include "common/smem.cuh"
#include "common/tcgen05_gemm_sm100.cuh"
#include "common/tcgen05_launch_sm100.cuh"
#include "common/tcgen05_sm100.cuh"
#include "common/tma_host_sm90.h"
#include "common/tma_sm90.cuh"
#include "kport/kernels/registry.h"

namespace kport::kernels::grouped_gemm_tcgen05 {
namespace {

using namespace kport::kernels::sm90;  // mbarriers and TMA: the same PTX on sm_100
using namespace kport::kernels::sm100;

// rows = G*M (A's and D's rows), m = M (a group's rows, a multiple of BM).
template <class Cfg>
__global__ void __launch_bounds__(k_gemm_threads, 1)
    grouped_gemm_tcgen05_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                                __nv_bfloat16* __restrict__ d, int rows, int m, int n, int k) {
#if KPORT_TCGEN05_ENABLED
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
  // A as 128x64 tiles of the tall A; B as 64x256 tiles of the tile's group, in 64-column slabs.
  auto load = [&](uint32_t a, uint32_t b, int kb, int tm, int tn, uint32_t bar) {
    const int group = tm * BM / m;
    tma_load_2d(a, &tmap_a, kb * BK, tm * BM, bar);
#pragma unroll
    for (int j = 0; j < BN / 64; ++j)
      tma_load_3d(b + j * Cfg::b_chunk_bytes, &tmap_b, tn * BN + j * 64, kb * BK, group, bar);
  };
  auto mma = [](uint32_t tmem_d, uint32_t a, uint32_t b, int kb) { mma_f16_kblock<Cfg, true>(tmem_d, a, b, kb); };
  auto store = [&](int row, int col, const uint32_t(&r)[32]) { store_row32(d, n, row, col, r); };
  gemm_tile<Cfg>(&tmap_a, &tmap_b, rows, n, k, load, mma, store);
#endif
}

// ---- host side --------------------------------------------------------------------------------

template <class Cfg>
std::string supports(const Problem& p) {
  if (p.family != Family::grouped_gemm) return "not a grouped_gemm problem";
  const GroupedGemmArgs& g = p.grouped_gemm;
  if (g.dtype != DType::bf16)
    return std::string("dtype ") + dtype_name(g.dtype) + " not supported: grouped_gemm.tcgen05 takes bf16";
  if (g.groups <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0) return "g, m, n and k must be positive";
  if (g.k % 8 != 0 || g.n % 8 != 0)
    return "K and N must be multiples of 8: TMA needs 16-byte row strides (K=" + std::to_string(g.k) +
           ", N=" + std::to_string(g.n) + "); use the simt variant";
  if (g.masked_m != nullptr) return grouped_gemm_masked_supports(g, Cfg::BM, Cfg::BN);
  if (g.m % Cfg::BM != 0)
    return "m (the rows of each group) must be a multiple of " + std::to_string(Cfg::BM) +
           ", the tile's rows, so that no tile holds two groups (m=" + std::to_string(g.m) + ")";
  if (static_cast<long long>(g.groups) * g.m > INT_MAX) return "g*m (the rows of A and D) must fit an int";
  auto misaligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 != 0; };
  if (misaligned(g.a) || misaligned(g.b) || misaligned(g.d)) return "A, B and D must be 16-byte aligned for TMA";
  return "";
}

template <class Cfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  const GroupedGemmArgs& g = p.grouped_gemm;
  if (g.masked_m != nullptr) return launch_masked<Cfg::BN, Cfg::Stages>(g, stream);
  const int rows = g.groups * g.m;  // supports() keeps it within int
  CUtensorMap ta, tb;
  // B as [G][K][N]: dims innermost first, byte strides of K rows and of whole groups.
  const cuuint64_t b_dims[3] = {static_cast<cuuint64_t>(g.n), static_cast<cuuint64_t>(g.k),
                                static_cast<cuuint64_t>(g.groups)};
  const cuuint64_t b_strides[2] = {static_cast<cuuint64_t>(g.n) * 2, static_cast<cuuint64_t>(g.k) * g.n * 2};
  const cuuint32_t b_box[3] = {64, static_cast<cuuint32_t>(Cfg::BK), 1};
  if (!tma_host::make_tmap(&ta, g.a, rows, g.k, Cfg::BM, g.dtype) ||
      !tma_host::make_tmap_16bit_sw128<3>(&tb, g.b, b_dims, b_strides, b_box, g.dtype))
    return cudaErrorInvalidValue;
  return launch_gemm_kernel<Cfg>(grouped_gemm_tcgen05_kernel<Cfg>, gemm_tiles<Cfg>(rows, g.n), stream, ta, tb,
                                 static_cast<__nv_bfloat16*>(g.d), rows, g.m, g.n, g.k);
}

using Cfg128x256 = F16Config<128, 256, 64, 4>;

const Instance k_inst_128x256{Family::grouped_gemm,
                              "tcgen05",
                              "grouped_gemm.tcgen05.128x256x64_s4",
                              {"tcgen05", "tmem", "tma", "mbarrier"},
                              {DType::bf16},
                              std::string(R"({"bm":128,"bn":256,"bk":64,"stages":4,"threads":128,"cta_group":1,)") +
                                  R"("group_m_align":128,)" + tma_host::k_gemm_run_align_config +
                                  R"(,"verified":false})",
                              &supports<Cfg128x256>,
                              &launch<Cfg128x256>};

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x256);

}  // namespace kport::kernels::grouped_gemm_tcgen05
