// softmax, portable SIMT variant: one 256-thread block per row, three passes over the row
// (max, sum of exp, write), fp32 math, any dtype, row length and alignment. Builds for
// every target; the reference point the vec16 variant is measured against.
#include <string>

#include "common/rowwise_simt.cuh"
#include "kport/kernels/registry.h"

namespace {

using namespace kport::kernels;

std::string supports(const Problem& p) {
  if (p.family != Family::softmax) return "not a softmax problem";
  return rowwise_simt_supports(p.rowwise);
}

cudaError_t launch(const Problem& p, cudaStream_t stream) { return launch_rowwise_simt_any(p.rowwise, true, stream); }

const Instance k_softmax_simt{Family::softmax,
                              "simt",
                              "softmax.simt.block256",
                              {"simt"},
                              {DType::bf16, DType::f16, DType::f32},
                              R"({"threads_per_row":256,"passes":3})",
                              &supports,
                              &launch};
KPORT_REGISTER_KERNEL(k_softmax_simt);

}  // namespace
