// grouped_gemm.wgmma_tma's masked layout, built in its own unit
// (grouped_gemm_wgmma_tma_masked_sm90.cu) so the contiguous instances' unit keeps its code.
#pragma once

#include <cuda_runtime.h>

#include "kport/kernels/registry.h"

namespace kport::kernels::grouped_gemm_wgmma_tma {

// Launches the masked kernel at a 128 x BN tile of `Stages` stages: A and D as 3-D maps
// [groups][m][k] and [groups][m][n], B as the contiguous layout's; bf16. Asynchronous.
template <int BN, int Stages>
cudaError_t launch_masked(const GroupedGemmArgs& g, cudaStream_t stream);

}  // namespace kport::kernels::grouped_gemm_wgmma_tma
