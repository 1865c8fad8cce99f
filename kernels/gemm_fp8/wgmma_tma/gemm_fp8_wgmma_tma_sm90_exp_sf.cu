// Experimental gemm_fp8.wgmma_tma instances, built only with KPORT_KERNEL_EXPERIMENTS (NOTES.md
// "Open"): the 256x128 tile with each K block's A scales read before its wgmma are issued,
// alone and with D stored by TMA. The kernel and its contract are in gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg256x128Sf = Config<128, 4, 1, false, true, 2, true>;
using Cfg256x128SfSd = Config<128, 4, 1, false, true, 2, true, true>;

const Instance k_inst_256x128_sf = make_instance<Cfg256x128Sf>("gemm_fp8.wgmma_tma.256x128x128_s4_sf");
const Instance k_inst_256x128_sf_sd = make_instance<Cfg256x128SfSd>("gemm_fp8.wgmma_tma.256x128x128_s4_sf_sd");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_256x128_sf);
KPORT_REGISTER_KERNEL(k_inst_256x128_sf_sd);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
