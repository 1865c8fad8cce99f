// grouped_gemm_fp8.wgmma_tma's masked layout, built in its own unit
// (grouped_gemm_fp8_wgmma_tma_masked_sm90.cu) so the contiguous instances' unit keeps its code.
#pragma once

#include <cuda_runtime.h>

#include "kport/kernels/registry.h"

namespace kport::kernels::grouped_gemm_fp8_wgmma_tma {

// Launches the masked kernel at a 128 x BN tile (6 stages, promoting, one K block in flight)
// in the dtype and scale mode of `g` (masked_m set, supports() passed): A as a 3-D map
// [groups][m][k], B and the scales as the contiguous layout's. Asynchronous.
template <int BN>
cudaError_t launch_masked(const GroupedGemmFp8Args& g, cudaStream_t stream);

}  // namespace kport::kernels::grouped_gemm_fp8_wgmma_tma
