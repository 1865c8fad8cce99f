// gemm_fp8.wgmma_tma instances: the 128x128 tiles with two K blocks in flight, alone or in 2x1
// clusters. The kernel and its contract are in gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg128x128Ov = Config<128, 6, 1, true>;
using Cfg128x128C2Ov = Config<128, 6, 2, true>;

const Instance k_inst_128x128_ov = make_instance<Cfg128x128Ov>("gemm_fp8.wgmma_tma.128x128x128_s6_ov");
const Instance k_inst_128x128_c2_ov = make_instance<Cfg128x128C2Ov>("gemm_fp8.wgmma_tma.128x128x128_s6_c2x1_ov");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x128_ov);
KPORT_REGISTER_KERNEL(k_inst_128x128_c2_ov);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
