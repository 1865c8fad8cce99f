// grouped_gemm, Hopper: gemm.wgmma_tma's persistent, warp-specialized kernel
// (kernels/gemm/wgmma_tma/gemm_wgmma_tma_sm90.cuh) with Config::Grouped. Target sm_90a only.
//
// The contiguous layout makes a grouped problem one tall gemm over G*M rows of A and D whose
// B changes every M rows: each group's M is a multiple of the 128-row tile, so every tile row
// lies in one group, the persistent scheduler walks the tiles of all groups in one order (the
// gemm's L2-grouped order over G*M / 128 tile rows), and a tile's group is its tile row
// divided by M / 128. B is read through a 3-D tensor map [G][K][N]: a tile loads from group
// g's slice, and a K not a multiple of 64 is zero-filled at the slice's end instead of being
// read from the next group. No B multicast and no split K (Config's static_assert).
//
// Constraints: bf16; M (per group) a multiple of 128; K and N multiples of 8 (TMA's 16-byte
// row strides); A, B and D 16-byte aligned. Anything else is refused by supports(), with the
// simt variant named as the one that runs it. The masked layout (masked_m set) runs the
// masked kernel of grouped_gemm_wgmma_tma_masked_sm90.cu at the same tile, M free.
#include "common/grouped_masked_supports.h"
#include "gemm/wgmma_tma/gemm_wgmma_tma_sm90.cuh"
#include "grouped_gemm/wgmma_tma/grouped_gemm_wgmma_tma_masked_sm90.h"

#include <climits>
#include <string>
#include <vector>

namespace kport::kernels::grouped_gemm_wgmma_tma {
namespace {

using gemm_wgmma_tma::Config;
using gemm_wgmma_tma::gemm_wgmma_tma_kernel;
using gemm_wgmma_tma::k_consumers;
using gemm_wgmma_tma::k_threads;
using gemm_wgmma_tma::resident_ctas;

template <class Cfg>
std::string supports(const Problem& p) {
  if (p.family != Family::grouped_gemm) return "not a grouped_gemm problem";
  const GroupedGemmArgs& g = p.grouped_gemm;
  if (g.dtype != DType::bf16)
    return std::string("dtype ") + dtype_name(g.dtype) + " not supported: grouped_gemm.wgmma_tma takes bf16";
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

template <class Cfg, class T>
cudaError_t launch_typed(const GroupedGemmArgs& g, cudaStream_t stream) {
  const int rows = g.groups * g.m;  // supports() keeps it within int
  CUtensorMap ta, tb, tc;
  // B as [G][K][N]: dims innermost first, byte strides of K rows and of whole groups.
  const cuuint64_t b_dims[3] = {static_cast<cuuint64_t>(g.n), static_cast<cuuint64_t>(g.k),
                                static_cast<cuuint64_t>(g.groups)};
  const cuuint64_t b_strides[2] = {static_cast<cuuint64_t>(g.n) * 2, static_cast<cuuint64_t>(g.k) * g.n * 2};
  const cuuint32_t b_box[3] = {64, static_cast<cuuint32_t>(Cfg::BK), 1};
  if (!tma_host::make_tmap(&ta, g.a, rows, g.k, Cfg::BM, g.dtype) ||
      !tma_host::make_tmap_16bit_sw128<3>(&tb, g.b, b_dims, b_strides, b_box, g.dtype) ||
      !tma_host::make_tmap(&tc, g.d, rows, g.n, Cfg::BM, g.dtype))
    return cudaErrorInvalidValue;
  auto kernel = gemm_wgmma_tma_kernel<Cfg, T>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  int ctas = 0;
  if ((err = resident_ctas<Cfg, T>(&ctas)) != cudaSuccess) return err;
  const int items = (rows / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(items < ctas ? items : ctas);
  cfg.blockDim = dim3(k_threads);
  cfg.dynamicSmemBytes = Cfg::smem_bytes;
  cfg.stream = stream;
  err = cudaLaunchKernelEx(&cfg, kernel, ta, tb, tc, rows, g.n, g.k, g.m / Cfg::BM);
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

template <class Cfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  if (p.grouped_gemm.masked_m != nullptr) return launch_masked<Cfg::BN, Cfg::Stages>(p.grouped_gemm, stream);
  return launch_typed<Cfg, __nv_bfloat16>(p.grouped_gemm, stream);
}

template <class Cfg>
std::string config_json() {
  return "{\"bm\":" + std::to_string(Cfg::BM) + ",\"bn\":" + std::to_string(Cfg::BN) +
         ",\"bk\":" + std::to_string(Cfg::BK) + ",\"stages\":" + std::to_string(Cfg::Stages) +
         ",\"consumer_warpgroups\":" + std::to_string(k_consumers) + ",\"threads\":" + std::to_string(k_threads) +
         ",\"group_m_align\":" + std::to_string(Cfg::BM) + ",\"persistent\":true," + tma_host::k_gemm_run_align_config +
         "}";
}

using Cfg128x256 = Config<128, 256, 64, 4, 1, 1, true>;
using Cfg128x128 = Config<128, 128, 64, 6, 1, 1, true>;

template <class Cfg>
Instance make_instance(const char* name) {
  return Instance{Family::grouped_gemm, "wgmma_tma",        name,           {"wgmma", "tma", "mbarrier", "setmaxnreg"},
                  {DType::bf16},        config_json<Cfg>(), &supports<Cfg>, &launch<Cfg>};
}

const Instance k_inst_128x256 = make_instance<Cfg128x256>("grouped_gemm.wgmma_tma.128x256x64_s4");
const Instance k_inst_128x128 = make_instance<Cfg128x128>("grouped_gemm.wgmma_tma.128x128x64_s6");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x256);
KPORT_REGISTER_KERNEL(k_inst_128x128);

}  // namespace kport::kernels::grouped_gemm_wgmma_tma
