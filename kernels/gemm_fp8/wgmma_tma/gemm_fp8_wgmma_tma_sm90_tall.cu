// gemm_fp8.wgmma_tma instances: the 256x128 tiles (two 64-row slices per consumer warpgroup,
// promoted in turn), alone or in 2x1 clusters. The kernel and its contract are in
// gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg256x128 = Config<128, 4, 1, false, true, 2>;
using Cfg256x128C2 = Config<128, 4, 2, false, true, 2>;

const Instance k_inst_256x128 = make_instance<Cfg256x128>("gemm_fp8.wgmma_tma.256x128x128_s4");
const Instance k_inst_256x128_c2 = make_instance<Cfg256x128C2>("gemm_fp8.wgmma_tma.256x128x128_s4_c2x1");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_256x128);
KPORT_REGISTER_KERNEL(k_inst_256x128_c2);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
