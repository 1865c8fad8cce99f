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

// k_target_vecs: 16-byte vectors per thread the plan aims at (threads per row follow);
// k_pipe: the persistent kernel that loads a row while it reduces the one before.
template <int k_target_vecs, bool k_pipe>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  const Vec16Plan plan = plan_rowwise_vec16(p.rowwise, k_target_vecs);
  if (!plan.ok) return launch_rowwise_simt_any(p.rowwise, true, stream);
  return launch_rowwise_vec16<true>(p.rowwise, plan, stream, k_pipe);
}

// The config's path bounds are plan_rowwise_vec16's.
static_assert(k_vec16_max_row_bytes == 65536 && k_vec16_row_align_bytes == 16);

#define KPORT_SOFTMAX_VEC16(kind, vecs, pipe)                                            \
  const Instance k_softmax_vec16_##kind##vecs{                                           \
      Family::softmax,                                                                   \
      "vec16",                                                                           \
      "softmax.vec16." #kind #vecs,                                                      \
      {"simt"},                                                                          \
      {DType::bf16, DType::f16, DType::f32},                                             \
      R"({"load_bytes":16,"persistent":)" #pipe R"(,"target_vectors_per_thread":)" #vecs \
      R"(,"max_threads_per_row":512,"max_row_bytes":65536,"row_align_bytes":16)"         \
      R"(,"fallback":"simt when row bytes % 16 != 0, unaligned, or row over 64 KB"})",   \
      &supports,                                                                         \
      &launch<vecs, pipe>};                                                              \
  KPORT_REGISTER_KERNEL(k_softmax_vec16_##kind##vecs)

KPORT_SOFTMAX_VEC16(regs_v, 2, false);
KPORT_SOFTMAX_VEC16(regs_v, 4, false);
KPORT_SOFTMAX_VEC16(regs_v, 8, false);
KPORT_SOFTMAX_VEC16(pipe_v, 2, true);

}  // namespace
