// gemm_fp8.wgmma_tma instances: the 128x128 tiles with one K block in flight, alone or in 2x1
// clusters. The kernel and its contract are in gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg128x128 = Config<128, 6, 1>;
using Cfg128x128C2 = Config<128, 6, 2>;

const Instance k_inst_128x128 = make_instance<Cfg128x128>("gemm_fp8.wgmma_tma.128x128x128_s6");
const Instance k_inst_128x128_c2 = make_instance<Cfg128x128C2>("gemm_fp8.wgmma_tma.128x128x128_s6_c2x1");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x128);
KPORT_REGISTER_KERNEL(k_inst_128x128_c2);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
