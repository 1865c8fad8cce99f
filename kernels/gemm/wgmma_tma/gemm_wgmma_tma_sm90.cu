// gemm.wgmma_tma's instances: the Hopper kernel (gemm_wgmma_tma_sm90.cuh) at ten tile, cluster
// and copy configurations, with gemm's supports() and launch.
#include "gemm/wgmma_tma/gemm_wgmma_tma_sm90.cuh"

#include <string>
#include <vector>

namespace kport::kernels::gemm_wgmma_tma {
namespace {

using tma_host::make_tmap;

std::string supports(const Problem& p) { return tma_host::gemm_supports(p, "wgmma_tma"); }

// The CpAsync instances: rows of whole 8-byte pieces, 8-byte aligned matrices.
std::string supports_cp_async(const Problem& p) {
  if (p.family != Family::gemm) return "not a gemm problem";
  const GemmArgs& g = p.gemm;
  if (g.dtype != DType::bf16 && g.dtype != DType::f16)
    return std::string("dtype ") + dtype_name(g.dtype) + " not supported: wgmma_tma takes bf16 or f16";
  if (g.m < 0 || g.n < 0 || g.k < 0) return "negative dimension";
  if (g.k % 4 != 0 || g.n % 4 != 0)
    return "K and N must be multiples of 4: this instance copies rows in 8-byte pieces (K=" + std::to_string(g.k) +
           ", N=" + std::to_string(g.n) + "); use the mma_sync variant";
  auto misaligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 8 != 0; };
  if (misaligned(g.a) || misaligned(g.b) || misaligned(g.c)) return "A, B and C must be 8-byte aligned";
  return "";
}

// Launches one of the kernels on a persistent grid: one CTA per resident slot, at most one per
// work item (a cluster's tile). The shared-memory attribute is set first: the occupancy query
// of a cluster kernel counts no cluster without it.
template <class Cfg, class T, class Kernel, class... Args>
cudaError_t launch_persistent(Kernel kernel, const GemmArgs& g, cudaStream_t stream, Args... args) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  int ctas = 0;
  if ((err = resident_ctas<Cfg, T>(&ctas)) != cudaSuccess) return err;
  constexpr int CM = Cfg::ClusterM, CS = Cfg::ClusterSize;
  const int items = ((g.m + Cfg::BM * CM - 1) / (Cfg::BM * CM)) * ((g.n + Cfg::BN - 1) / Cfg::BN);
  const int grid = (items < ctas / CS ? items : ctas / CS) * CS;
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = CS;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(Cfg::Threads);
  cfg.dynamicSmemBytes = Cfg::smem_bytes;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = CS > 1 ? 1 : 0;
  if ((err = cudaLaunchKernelEx(&cfg, kernel, args...)) != cudaSuccess) return err;
  return cudaGetLastError();
}

template <class Cfg, class T>
cudaError_t launch_typed(const GemmArgs& g, cudaStream_t stream) {
  if (g.m == 0 || g.n == 0) return cudaSuccess;
  if (g.k == 0)  // empty sum: C is zero
    return cudaMemsetAsync(g.c, 0, static_cast<size_t>(g.m) * g.n * sizeof(T), stream);
  if constexpr (Cfg::CpAsync) {
    return launch_persistent<Cfg, T>(gemm_wgmma_cp_async_kernel<Cfg, T>, g, stream, static_cast<const T*>(g.a),
                                     static_cast<const T*>(g.b), static_cast<T*>(g.c), g.m, g.n, g.k);
  } else {
    CUtensorMap ta, tb, tc;
    // ShortA: A's box only as tall as the rows there are (a whole 8-row swizzle atom), passed on.
    const int a_rows = Cfg::ShortA && g.m < Cfg::BM ? (g.m + 7) / 8 * 8 : Cfg::BM;
    if (!make_tmap(&ta, g.a, g.m, g.k, a_rows, g.dtype) || !make_tmap(&tb, g.b, g.k, g.n, Cfg::BK, g.dtype))
      return cudaErrorInvalidValue;
    if (!make_tmap(&tc, g.c, g.m, g.n, Cfg::BM, g.dtype)) return cudaErrorInvalidValue;
    return launch_persistent<Cfg, T>(gemm_wgmma_tma_kernel<Cfg, T>, g, stream, ta, tb, tc, g.m, g.n, g.k,
                                     Cfg::ShortA ? a_rows : 0);
  }
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
         ",\"consumer_warpgroups\":" + std::to_string(Cfg::Consumers) + ",\"threads\":" + std::to_string(Cfg::Threads) +
         ",\"cluster_m\":" + std::to_string(Cfg::ClusterM) + ",\"split_k\":" + std::to_string(Cfg::SplitK) +
         ",\"persistent\":true," +
         (Cfg::CpAsync ? std::string(R"("run_n_align_bytes":8,"run_k_align_bytes":8)")
                       : std::string(tma_host::k_gemm_run_align_config)) +
         "}";
}

using Cfg128x256 = Config<128, 256, 64, 4, 1>;
using Cfg128x256C2 = Config<128, 256, 64, 4, 2>;
using Cfg128x128 = Config<128, 128, 64, 6, 1>;
using Cfg128x128K2 = Config<128, 128, 64, 4, 1, 2>;  // 4 stages leave room for the 64 KiB partial tile
// Skinny M: a 64-row tile of one consumer warpgroup, K split over two CTAs, A's box only as tall
// as M (_sa); 7 x 24 KiB stages and a 32 KiB partial tile.
using Cfg64x128K2Sa = Config<64, 128, 64, 7, 1, 2, false, true>;
// 64-column tiles: twice the split-K CTAs of the 128-column ones where N is 4096 (64 rows: 128
// CTAs where 64x128 gives 64); 8 x 16 KiB stages and a 16 KiB partial tile, or 6 x 24 KiB and 32 KiB.
using Cfg64x64K2Sa = Config<64, 64, 64, 8, 1, 2, false, true>;
using Cfg128x64K2Sa = Config<128, 64, 64, 6, 1, 2, false, true>;

template <class Cfg>
Instance make_instance(const char* name) {
  std::vector<std::string> features{"wgmma", Cfg::CpAsync ? "cp_async" : "tma", "mbarrier", "setmaxnreg"};
  if (Cfg::SplitK > 1) features.insert(features.end(), {"cluster", "dsmem"});  // partial tiles meet in a peer's smem
  return Instance{Family::gemm,
                  "wgmma_tma",
                  name,
                  std::move(features),
                  {DType::bf16, DType::f16},
                  config_json<Cfg>(),
                  Cfg::CpAsync ? &supports_cp_async : &supports,
                  &launch<Cfg>};
}

const Instance k_inst_128x256 = make_instance<Cfg128x256>("gemm.wgmma_tma.128x256x64_s4");
const Instance k_inst_128x256_c2 = make_instance<Cfg128x256C2>("gemm.wgmma_tma.128x256x64_s4_c2x1");
const Instance k_inst_128x128 = make_instance<Cfg128x128>("gemm.wgmma_tma.128x128x64_s6");
const Instance k_inst_128x128_k2 = make_instance<Cfg128x128K2>("gemm.wgmma_tma.128x128x64_s4_k2");
const Instance k_inst_64x128_k2_sa = make_instance<Cfg64x128K2Sa>("gemm.wgmma_tma.64x128x64_s7_k2_sa");
const Instance k_inst_64x64_k2_sa = make_instance<Cfg64x64K2Sa>("gemm.wgmma_tma.64x64x64_s8_k2_sa");
const Instance k_inst_128x64_k2_sa = make_instance<Cfg128x64K2Sa>("gemm.wgmma_tma.128x64x64_s6_k2_sa");
// Tiles whose counts fill the 132 SMs where the others leave part of a wave empty (NOTES.md
// "Wave quantization"): 128x64 unsplit, 128 tiles at 1024^3 and 256x4096 (8 x 24 KiB stages);
// 128x192, 384 tiles at 3072^3 (4 x 40 KiB stages).
using Cfg128x64 = Config<128, 64, 64, 8, 1>;
using Cfg128x192 = Config<128, 192, 64, 4, 1>;
const Instance k_inst_128x64 = make_instance<Cfg128x64>("gemm.wgmma_tma.128x64x64_s8");
const Instance k_inst_128x192 = make_instance<Cfg128x192>("gemm.wgmma_tma.128x192x64_s4");
// Rows TMA cannot describe (K or N a multiple of 4 but not of 8: 2500 columns are 5000 bytes):
// the stages and C copied in 8-byte pieces by the threads (Config::CpAsync), 200 tiles at
// 2500^3. It runs aligned shapes too, at a third of the TMA tiles' speed (NOTES.md "Rows of
// 8-byte pieces").
using Cfg128x256Ca8 = Config<128, 256, 64, 4, 1, 1, false, false, true>;
const Instance k_inst_128x256_ca8 = make_instance<Cfg128x256Ca8>("gemm.wgmma_tma.128x256x64_s4_ca8");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x256);
KPORT_REGISTER_KERNEL(k_inst_128x256_c2);
KPORT_REGISTER_KERNEL(k_inst_128x128);
KPORT_REGISTER_KERNEL(k_inst_128x128_k2);
KPORT_REGISTER_KERNEL(k_inst_64x128_k2_sa);
KPORT_REGISTER_KERNEL(k_inst_64x64_k2_sa);
KPORT_REGISTER_KERNEL(k_inst_128x64_k2_sa);
KPORT_REGISTER_KERNEL(k_inst_128x64);
KPORT_REGISTER_KERNEL(k_inst_128x192);
KPORT_REGISTER_KERNEL(k_inst_128x256_ca8);

}  // namespace kport::kernels::gemm_wgmma_tma
