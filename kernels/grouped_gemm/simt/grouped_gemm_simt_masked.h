// grouped_gemm.simt's masked layout, built in its own unit (grouped_gemm_simt_masked.cu) so
// the contiguous instance's unit keeps its code.
#pragma once

#include <cuda_runtime.h>

#include "kport/kernels/registry.h"

namespace kport::kernels::grouped_gemm_simt {

// Launches gemm.simt's tile over the masked layout (masked_m set): grid z the group, a block
// whose tile row lies past its group's count leaves at once, and only a group's first
// masked_m[g] rows are computed and written. Any dtype gemm.simt takes. Asynchronous.
template <int BM, int BN, int BK, int TM, int TN>
cudaError_t launch_masked(const GroupedGemmArgs& g, cudaStream_t stream);

}  // namespace kport::kernels::grouped_gemm_simt
