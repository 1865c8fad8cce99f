// softmax, vectorized memory-bound variant: the row lives in registers (16-byte loads, read
// once from HBM; 16-byte streaming stores, written once); max and sum of exp reduced across the
// row's threads, fp32 math. Rows that are not a whole number of 16-byte vectors, unaligned
// buffers and rows over 64 KB run the simt kernels instead (reported in the config).
// Portable: builds for every target (FEATURES simt). See common/rowwise_vec16.cuh.
#include <string>

#include "common/rowwise_simt.cuh"
#include "common/rowwise_vec16.cuh"
#include "kport/kernels/registry.h"

namespace {

using namespace kport::kernels;

std::string supports(const Problem& p) {
  if (p.family != Family::softmax) return "not a softmax problem";
  return rowwise_simt_supports(p.rowwise);
}

cudaError_t launch(const Problem& p, cudaStream_t stream) {
  const Vec16Plan plan = plan_rowwise_vec16(p.rowwise);
  if (!plan.ok) return launch_rowwise_simt_any(p.rowwise, true, stream);
  return launch_rowwise_vec16<true>(p.rowwise, plan, stream);
}

const Instance k_softmax_vec16{
    Family::softmax, "vec16", "softmax.vec16.row_in_registers", {"simt"},
    {DType::bf16, DType::f16, DType::f32},
    R"({"load_bytes":16,"max_threads_per_row":512,"max_vectors_per_thread":8,)"
    R"("fallback":"simt when row bytes % 16 != 0, unaligned, or row > 64 KB"})",
    &supports, &launch};
KPORT_REGISTER_KERNEL(k_softmax_vec16);

}  // namespace
