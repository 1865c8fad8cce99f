// gemm_fp8.wgmma_tma instances: the promoted 192-column tiles, whose columns span two scale
// blocks of B, alone or in 2x1 clusters. The kernel and its contract are in
// gemm_fp8_wgmma_tma_sm90.cuh.
#include "gemm_fp8_wgmma_tma_sm90.cuh"

namespace kport::kernels::gemm_fp8_wgmma_tma {
namespace {

using Cfg128x192 = Config<192, 5, 1>;
using Cfg128x192C2 = Config<192, 5, 2>;

const Instance k_inst_128x192 = make_instance<Cfg128x192>("gemm_fp8.wgmma_tma.128x192x128_s5");
const Instance k_inst_128x192_c2 = make_instance<Cfg128x192C2>("gemm_fp8.wgmma_tma.128x192x128_s5_c2x1");

}  // namespace

KPORT_REGISTER_KERNEL(k_inst_128x192);
KPORT_REGISTER_KERNEL(k_inst_128x192_c2);

}  // namespace kport::kernels::gemm_fp8_wgmma_tma
