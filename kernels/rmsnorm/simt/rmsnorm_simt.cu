// rmsnorm, portable SIMT variant: one 256-thread block per row, two passes over the row
// (sum of squares, then scale and write), fp32 math, any dtype, row length and alignment.
// Builds for every target; the reference point the vec16 variant is measured against.
#include <string>

#include "common/rowwise_simt.cuh"
#include "kport/kernels/registry.h"

namespace {

using namespace kport::kernels;

std::string supports(const Problem& p) {
  if (p.family != Family::rmsnorm) return "not an rmsnorm problem";
  if (p.rowwise.w == nullptr && p.rowwise.x != nullptr) return "rmsnorm needs a weight";
  return rowwise_simt_supports(p.rowwise);
}

cudaError_t launch(const Problem& p, cudaStream_t stream) { return launch_rowwise_simt_any(p.rowwise, false, stream); }

const Instance k_rmsnorm_simt{Family::rmsnorm,
                              "simt",
                              "rmsnorm.simt.block256",
                              {"simt"},
                              {DType::bf16, DType::f16, DType::f32},
                              R"({"threads_per_row":256,"passes":2})",
                              &supports,
                              &launch};
KPORT_REGISTER_KERNEL(k_rmsnorm_simt);

}  // namespace
