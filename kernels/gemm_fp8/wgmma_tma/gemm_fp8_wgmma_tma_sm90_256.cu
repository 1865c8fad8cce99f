// gemm_fp8.wgmma_tma instances: the 128x256 tiles without promotion (per-tensor and row-wise scales only). The kernel and its
// contract are in gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg128x256Fast = Config<256, 4, 1, false, false>;
using Cfg128x256FastC2 = Config<256, 4, 2, false, false>;

const Instance k_inst_128x256_fast = make_instance<Cfg128x256Fast>("gemm_fp8.wgmma_tma.128x256x128_s4_fastacc");
const Instance k_inst_128x256_fast_c2 =
    make_instance<Cfg128x256FastC2>("gemm_fp8.wgmma_tma.128x256x128_s4_c2x1_fastacc");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x256_fast);
KPORT_REGISTER_KERNEL(k_inst_128x256_fast_c2);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
