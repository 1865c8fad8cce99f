// gemm_fp8.wgmma_tma instances: the promoted 160- and 176-column tiles, whose columns span two
// scale blocks of B. The kernel and its contract are in gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg128x160 = Config<160, 6, 1>;
using Cfg128x176 = Config<176, 5, 1>;

const Instance k_inst_128x160 = make_instance<Cfg128x160>("gemm_fp8.wgmma_tma.128x160x128_s6");
const Instance k_inst_128x176 = make_instance<Cfg128x176>("gemm_fp8.wgmma_tma.128x176x128_s5");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x160);
KPORT_REGISTER_KERNEL(k_inst_128x176);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
