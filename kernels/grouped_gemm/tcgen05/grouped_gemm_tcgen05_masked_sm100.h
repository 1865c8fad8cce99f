// grouped_gemm.tcgen05's masked layout, built in its own unit
// (grouped_gemm_tcgen05_masked_sm100.cu) so the contiguous instance's unit keeps its code.
#pragma once

#include <cuda_runtime.h>

#include "kport/kernels/registry.h"

namespace kport::kernels::grouped_gemm_tcgen05 {

// Launches the masked kernel at a 128 x BN tile of `Stages` stages: A as a 3-D map
// [groups][m][k], B as the contiguous layout's [groups][k][n], D [groups][m][n]; bf16.
// Asynchronous; grouped_gemm_masked_supports() must have passed.
template <int BN, int Stages>
cudaError_t launch_masked(const GroupedGemmArgs& g, cudaStream_t stream);

}  // namespace kport::kernels::grouped_gemm_tcgen05
