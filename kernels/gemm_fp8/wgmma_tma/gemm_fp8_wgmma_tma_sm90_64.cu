// gemm_fp8.wgmma_tma instances: the 128x64 tiles, for few output tiles (decode shapes). The kernel and its
// contract are in gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg128x64 = Config<64, 8, 1>;
using Cfg128x64Ov = Config<64, 8, 1, true>;

const Instance k_inst_128x64 = make_instance<Cfg128x64>("gemm_fp8.wgmma_tma.128x64x128_s8");
const Instance k_inst_128x64_ov = make_instance<Cfg128x64Ov>("gemm_fp8.wgmma_tma.128x64x128_s8_ov");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x64);
KPORT_REGISTER_KERNEL(k_inst_128x64_ov);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
