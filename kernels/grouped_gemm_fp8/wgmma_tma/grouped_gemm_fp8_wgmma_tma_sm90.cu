// grouped_gemm_fp8, Hopper: gemm_fp8.wgmma_tma's persistent, warp-specialized kernel
// (kernels/gemm_fp8/wgmma_tma/gemm_fp8_wgmma_tma_sm90.cuh) with GroupedConfig. Target sm_90a
// only.
//
// The contiguous layout makes a grouped problem one tall fp8 gemm over G*M rows of A and D
// whose B changes every M rows: each group's M is a multiple of the 128-row tile, so every
// tile row lies in one group, the persistent scheduler walks the tiles of all groups in the
// dense kernel's order (L2-grouped over G*M / 128 tile rows), and a tile's group is its tile
// row divided by M / 128. B is read through a 3-D tensor map [G][N][K]: a tile loads group g's
// slice, and an N or K edge is zero-filled at the slice's end instead of read from the next
// group. The tile's scales of B are its group's (gemm_fp8's layout once per group); A's are
// the tall A's. Per tensor: one scale for A, one per group for B; row-wise and block128 as
// gemm_fp8's, per group for B; block128_ue8m0 through block128's code, on its fp32 copy of the
// scales (as gemm_fp8.wgmma_tma runs it).
//
// Constraints: e4m3 or e5m2; M (per group) a multiple of the tile's rows (128, or 256 for the
// 256x128 tile, whose D is stored by TMA: N a multiple of 8 there); K a multiple of 16 (TMA's
// 16-byte row strides), of 128 with block scales; A, B (and a block mode's scale_a) 16-byte
// aligned. N is free: TMA zero-fills B's rows past N and the epilogue masks D. The masked
// layout (masked_m set) runs the masked kernel of grouped_gemm_fp8_wgmma_tma_masked_sm90.cu at
// the same tile, M free.
#include "gemm_fp8/wgmma_tma/gemm_fp8_wgmma_tma_sm90.cuh"
#include "grouped_gemm_fp8/wgmma_tma/grouped_gemm_fp8_wgmma_tma_masked_sm90.h"

#include <climits>
#include <string>

namespace kport::kernels::grouped_gemm_fp8_wgmma_tma {
namespace {

using gemm_fp8_wgmma_tma::Config;
using gemm_fp8_wgmma_tma::dense_or_staged_kernel;
using gemm_fp8_wgmma_tma::GroupedConfig;
using gemm_fp8_wgmma_tma::k_threads;
using gemm_fp8_wgmma_tma::make_scale_a_map;
using gemm_fp8_wgmma_tma::make_staged_d_map;
using gemm_fp8_wgmma_tma::resident_ctas;
using gemm_fp8_wgmma_tma::staged_d_refusal;

// Row-wise scales on the 256-row staged tile: its grouped kernel spills under the launch bound
// (ptxas 13.0: 140 bytes, where the dense one fits 168 registers exactly), so it takes per-tensor
// and block scales only, and says so.
template <class Cfg>
constexpr bool k_takes_row_scales = Cfg::Waves == 1;

template <class Cfg>
std::string supports(const Problem& p) {
  if (p.family != Family::grouped_gemm_fp8) return "not a grouped_gemm_fp8 problem";
  const GroupedGemmFp8Args& g = p.grouped_gemm_fp8;
  if (g.dtype != DType::e4m3 && g.dtype != DType::e5m2)
    return std::string("dtype ") + dtype_name(g.dtype) +
           " not supported: grouped_gemm_fp8.wgmma_tma takes e4m3 or e5m2";
  if (g.groups <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0) return "g, m, n and k must be positive";
  // The masked layout runs promoting 128-row tiles of its own (launch_masked), so a taller or
  // unpromoted tile has no masked kernel to stand for.
  if ((Cfg::BM != 128 || !Cfg::Promote) && g.masked_m != nullptr)
    return "the masked layout (valid < m) runs the promoting 128-row tiles: use "
           "grouped_gemm_fp8.wgmma_tma.128x128x128_s6 or 128x160x128_s6";
  if (g.m % Cfg::BM != 0 && g.masked_m == nullptr)
    return "m (the rows of each group) must be a multiple of " + std::to_string(Cfg::BM) +
           ", the tile's rows, so that no tile holds two groups (m=" + std::to_string(g.m) +
           "); pad each group's rows to it";
  if (static_cast<long long>(g.groups) * g.m > INT_MAX) return "g*m (the rows of A and D) must fit an int";
  if (g.masked_m != nullptr &&
      static_cast<long long>(g.groups) * ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN) > INT_MAX)
    return "the masked layout's tiles (g * ceil(m/128) * ceil(n/" + std::to_string(Cfg::BN) + ")) must fit an int";
  if (g.k % 16 != 0)
    return "K=" + std::to_string(g.k) +
           " is not a multiple of 16: TMA needs 16-byte row strides of A and B; pad K with zeros to a multiple of 16";
  if (!Cfg::Promote && fp8_scale_is_block(g.scale))
    return "block scales need the promoting instances (this one accumulates over all of K in the tensor cores); "
           "use grouped_gemm_fp8.wgmma_tma.256x128x128_s4_sf_sd or 128x128x128_s6";
  if (!k_takes_row_scales<Cfg> && g.scale == Fp8Scale::row)
    return "row-wise scales (scale=1) are not taken by this instance (its kernel would spill registers): use "
           "grouped_gemm_fp8.wgmma_tma.128x128x128_s6 or 128x160x128_s6";
  // block128_ue8m0 hands its power-of-two scales over in fp32 too (block128's layout, the same
  // values exactly): this kernel reads those, so the two block modes run the same code.
  const bool block = fp8_scale_is_block(g.scale);
  if (block && g.k % k_fp8_block != 0)
    return "K=" + std::to_string(g.k) +
           " is not a multiple of 128: block scales cover whole 128-wide K blocks; pad K with zeros (scale 1) to "
           "a multiple of 128";
  auto misaligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 != 0; };
  if (misaligned(g.a) || misaligned(g.b)) return "A and B must be 16-byte aligned for TMA";
  if (block && misaligned(g.scale_a)) return "block scale_a must be 16-byte aligned for TMA";
  // Each group's block scales of A start g*m scales in; on the H200 a start off 16 bytes
  // stopped the kernel (an illegal instruction at g=5, m=65), one on them ran right.
  if (g.masked_m != nullptr && block && g.m % 4 != 0)
    return "the masked layout with block scales needs m (each group's rows) a multiple of 4, so that every "
           "group's scales of A start 16-byte aligned (m=" +
           std::to_string(g.m) + "); pad m to a multiple of 4";
  if (reinterpret_cast<uintptr_t>(g.masked_m) % alignof(int) != 0) return "masked_m must be int-aligned";
  return g.masked_m == nullptr ? staged_d_refusal<Cfg>(g.n, g.d) : "";
}

template <class Cfg, class T, Fp8Scale Mode>
cudaError_t launch_typed(const GroupedGemmFp8Args& g, cudaStream_t stream) {
  const int rows = g.groups * g.m;  // supports() keeps it within int
  CUtensorMap ta, tb, tsa;
  if (!tma_host::make_tmap_8bit_sw128(&ta, g.a, rows, g.k, Cfg::BM) ||
      !tma_host::make_tmap_8bit_sw128_3d(&tb, g.b, g.groups, g.n, g.k, Cfg::BN))
    return cudaErrorInvalidValue;
  tsa = ta;                                  // unused unless block128
  if constexpr (Mode == Fp8Scale::block128)  // the tall A's scales, as gemm_fp8's
    if (!make_scale_a_map<Cfg>(&tsa, g.scale_a, rows, g.k)) return cudaErrorInvalidValue;
  CUtensorMap td;  // StagedD: D [G*M, N]
  if (!make_staged_d_map<Cfg>(&td, g.d, rows, g.n)) return cudaErrorInvalidValue;
  auto kernel = dense_or_staged_kernel<Cfg, T, Mode>();
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (err != cudaSuccess) return err;
  int ctas = 0;
  if ((err = resident_ctas<Cfg>(&ctas)) != cudaSuccess) return err;
  const long long items = static_cast<long long>(rows / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(items < ctas ? items : ctas));
  cfg.blockDim = dim3(k_threads);
  cfg.dynamicSmemBytes = Cfg::smem_bytes;
  cfg.stream = stream;
  // The kernel's last argument is the tile rows of one group when grouped.
  if constexpr (Cfg::StagedD)
    err = cudaLaunchKernelEx(&cfg, kernel, ta, tb, tsa, td, static_cast<__nv_bfloat16*>(g.d), g.scale_a, g.scale_b,
                             rows, g.n, g.k, g.m / Cfg::BM);
  else
    err = cudaLaunchKernelEx(&cfg, kernel, ta, tb, tsa, static_cast<__nv_bfloat16*>(g.d), g.scale_a, g.scale_b, rows,
                             g.n, g.k, g.m / Cfg::BM);
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

template <class Cfg, class T>
cudaError_t launch_mode(const GroupedGemmFp8Args& g, cudaStream_t stream) {
  switch (g.scale) {
    case Fp8Scale::tensor: return launch_typed<Cfg, T, Fp8Scale::tensor>(g, stream);
    case Fp8Scale::row:
      if constexpr (k_takes_row_scales<Cfg>)
        return launch_typed<Cfg, T, Fp8Scale::row>(g, stream);
      else
        return cudaErrorInvalidValue;  // supports() refuses it
    case Fp8Scale::block128:
    case Fp8Scale::block128_ue8m0:  // its fp32 scales, in block128's layout
      if constexpr (Cfg::Promote)
        return launch_typed<Cfg, T, Fp8Scale::block128>(g, stream);
      else
        return cudaErrorInvalidValue;  // supports() refuses it
  }
  return cudaErrorInvalidValue;
}

template <class Cfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  if constexpr (Cfg::BM == 128 && Cfg::Promote) {
    if (p.grouped_gemm_fp8.masked_m != nullptr) return launch_masked<Cfg::BN>(p.grouped_gemm_fp8, stream);
  } else if (p.grouped_gemm_fp8.masked_m != nullptr) {
    return cudaErrorInvalidValue;  // supports() refuses it
  }
  if (p.grouped_gemm_fp8.dtype == DType::e5m2) return launch_mode<Cfg, __nv_fp8_e5m2>(p.grouped_gemm_fp8, stream);
  return launch_mode<Cfg, __nv_fp8_e4m3>(p.grouped_gemm_fp8, stream);
}

// gemm_fp8's config and the row alignment each group needs in the contiguous layout (also as
// the limit run_m_multiple where it is more than 128 rows: the family's own rule asks for 128).
template <class Cfg>
std::string config_json() {
  std::string json = gemm_fp8_wgmma_tma::config_json<Cfg>();
  json.pop_back();  // the closing brace
  if constexpr (!k_takes_row_scales<Cfg>) {
    const std::string row = "\"row\",";
    if (const auto at = json.find(row); at != std::string::npos) json.erase(at, row.size());
  }
  json += ",\"group_m_align\":" + std::to_string(Cfg::BM);
  if (Cfg::BM > 128) json += ",\"run_m_multiple\":" + std::to_string(Cfg::BM);
  return json + "}";
}

template <class Cfg>
Instance make_instance(const char* name) {
  static_assert(Cfg::Grouped, "grouped");
  return Instance{
      Family::grouped_gemm_fp8,   "wgmma_tma",        name,           {"wgmma", "tma", "mbarrier", "setmaxnreg"},
      {DType::e4m3, DType::e5m2}, config_json<Cfg>(), &supports<Cfg>, &launch<Cfg>};
}

// gemm_fp8's 128x128 tile (6 stages) and its promoted 128x160 one (6 stages, up to two scale
// blocks of B per tile), both one K block in flight, no cluster; and its 256x128 tile with A's
// scales read before the wgmma and D stored by TMA (4 stages; each group's M a multiple of 256,
// N of 8; the contiguous layout, per-tensor and block scales); and gemm_fp8's unpromoted 128x256
// tile (per-tensor and row-wise scales, the tensor cores accumulating over all of K, the
// contiguous layout).
using Cfg128x128 = GroupedConfig<Config<128, 6, 1>>;
using Cfg128x160 = GroupedConfig<Config<160, 6, 1>>;
using Cfg256x128SfSd = GroupedConfig<Config<128, 4, 1, false, true, 2, true, true>>;
using Cfg128x256Fast = GroupedConfig<Config<256, 4, 1, false, false>>;

const Instance k_inst_128x128 = make_instance<Cfg128x128>("grouped_gemm_fp8.wgmma_tma.128x128x128_s6");
const Instance k_inst_128x160 = make_instance<Cfg128x160>("grouped_gemm_fp8.wgmma_tma.128x160x128_s6");
const Instance k_inst_256x128_sf_sd = make_instance<Cfg256x128SfSd>("grouped_gemm_fp8.wgmma_tma.256x128x128_s4_sf_sd");

const Instance k_inst_128x256_fast = make_instance<Cfg128x256Fast>("grouped_gemm_fp8.wgmma_tma.128x256x128_s4_fastacc");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x128);
KPORT_REGISTER_KERNEL(k_inst_128x160);
KPORT_REGISTER_KERNEL(k_inst_256x128_sf_sd);
KPORT_REGISTER_KERNEL(k_inst_128x256_fast);

}  // namespace kport::kernels::grouped_gemm_fp8_wgmma_tma
