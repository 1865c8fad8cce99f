// grouped_gemm_fp8.tcgen05's masked layout, built in its own unit
// (grouped_gemm_fp8_tcgen05_masked_sm100.cu) so the contiguous instance's unit keeps its code.
#pragma once

#include <cuda_runtime.h>

#include "kport/kernels/registry.h"

namespace kport::kernels::grouped_gemm_fp8_tcgen05 {

// Launches the masked kernel at a 128 x BN tile of `Stages` stages in the dtype and scale mode
// of `g` (masked_m set, supports() passed: scales 0, 1 or 3, and with 3 m a multiple of 128): A
// as a 3-D map [groups][m][k], B, D and the scales as the contiguous layout's. Asynchronous.
template <int BN, int Stages>
cudaError_t launch_masked(const GroupedGemmFp8Args& g, cudaStream_t stream);

}  // namespace kport::kernels::grouped_gemm_fp8_tcgen05
