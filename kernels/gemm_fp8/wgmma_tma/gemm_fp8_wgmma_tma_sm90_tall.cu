// gemm_fp8.wgmma_tma instances: the 256x128 tiles (two 64-row slices per consumer warpgroup,
// promoted in turn): alone, with each K block's A scales read before its wgmma are issued and
// D stored by TMA through a shared-memory slab (_sf_sd; N a multiple of 8), or in 2x1 clusters.
// The kernel and its contract are in gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg256x128SfSd = Config<128, 4, 1, false, true, 2, true, true>;
using Cfg256x128C2 = Config<128, 4, 2, false, true, 2>;

const Instance k_inst_256x128_sf_sd = make_instance<Cfg256x128SfSd>("gemm_fp8.wgmma_tma.256x128x128_s4_sf_sd");
const Instance k_inst_256x128_c2 = make_instance<Cfg256x128C2>("gemm_fp8.wgmma_tma.256x128x128_s4_c2x1");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_256x128_sf_sd);
KPORT_REGISTER_KERNEL(k_inst_256x128_c2);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
