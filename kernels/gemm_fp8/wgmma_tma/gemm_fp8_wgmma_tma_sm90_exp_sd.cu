// Experimental gemm_fp8.wgmma_tma instances, built only with KPORT_KERNEL_EXPERIMENTS (NOTES.md
// "Open"): D stored by TMA through a shared-memory slab, on the 256x128 tile and on the 128x128
// tile with its scales read before the wgmma. The kernel and its contract are in
// gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg256x128Sd = Config<128, 4, 1, false, true, 2, false, true>;
using Cfg128x128SfSd = Config<128, 6, 1, false, true, 1, true, true>;

const Instance k_inst_256x128_sd = make_instance<Cfg256x128Sd>("gemm_fp8.wgmma_tma.256x128x128_s4_sd");
const Instance k_inst_128x128_sf_sd = make_instance<Cfg128x128SfSd>("gemm_fp8.wgmma_tma.128x128x128_s6_sf_sd");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_256x128_sd);
KPORT_REGISTER_KERNEL(k_inst_128x128_sf_sd);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
