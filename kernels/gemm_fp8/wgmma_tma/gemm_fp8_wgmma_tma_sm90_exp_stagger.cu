// Experimental gemm_fp8.wgmma_tma instance, built only with KPORT_KERNEL_EXPERIMENTS (NOTES.md
// "Open"): the library's 256x128x128_s4_sf_sd with its two consumer warpgroups offset by one
// 64-row slice at the start of every tile (Config::Stagger). The kernel and its contract are in
// gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg256x128SfSdSt = Config<128, 4, 1, false, true, 2, true, true, true>;

const Instance k_inst_256x128_sf_sd_st = make_instance<Cfg256x128SfSdSt>("gemm_fp8.wgmma_tma.256x128x128_s4_sf_sd_st");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_256x128_sf_sd_st);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
