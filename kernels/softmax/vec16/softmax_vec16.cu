// softmax, vectorized memory-bound variant: the row lives in registers (16-byte loads, read
// once from HBM; 16-byte streaming stores, written once); max and sum of exp reduced across the
// row's threads, fp32 math. Rows that are not a whole number of 16-byte vectors, unaligned
// buffers and rows over 64 KB run the simt kernels instead (reported in the config).
// Portable: builds for every target (FEATURES simt). See common/rowwise_vec16.cuh.
#include <string>

#include "common/rowwise_long.cuh"
#include "common/rowwise_simt.cuh"
#include "common/rowwise_vec16.cuh"
#include "kport/kernels/registry.h"

namespace {

using namespace kport::kernels;

std::string supports(const Problem& p) {
  if (p.family != Family::softmax) return "not a softmax problem";
  return rowwise_simt_supports(p.rowwise);
}

// k_target_vecs: 16-byte vectors per thread the plan aims at (threads per row follow).
template <int k_target_vecs>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  const Vec16Plan plan = plan_rowwise_vec16(p.rowwise, k_target_vecs, k_vec16_block_softmax);
  if (!plan.ok) return launch_rowwise_simt_any(p.rowwise, true, stream);
  return launch_rowwise_vec16<true>(p.rowwise, plan, stream);
}

// The config's path bounds are plan_rowwise_vec16's.
static_assert(k_vec16_max_row_bytes == 65536 && k_vec16_row_align_bytes == 16);

#define KPORT_SOFTMAX_VEC16(vecs)                                                      \
  const Instance k_softmax_vec16_v##vecs{                                              \
      Family::softmax,                                                                 \
      "vec16",                                                                         \
      "softmax.vec16.regs_v" #vecs,                                                    \
      {"simt"},                                                                        \
      {DType::bf16, DType::f16, DType::f32},                                           \
      R"({"load_bytes":16,"target_vectors_per_thread":)" #vecs                         \
      R"(,"max_threads_per_row":1024,"max_row_bytes":65536,"row_align_bytes":16)"      \
      R"(,"fallback":"simt when row bytes % 16 != 0, unaligned, or row over 64 KB"})", \
      &supports,                                                                       \
      &launch<vecs>};                                                                  \
  KPORT_REGISTER_KERNEL(k_softmax_vec16_v##vecs)

KPORT_SOFTMAX_VEC16(2);
KPORT_SOFTMAX_VEC16(4);
KPORT_SOFTMAX_VEC16(8);

// Rows of any length (vocabulary-sized ones above all): a block per row, the row read twice
// (see common/rowwise_long.cuh).
cudaError_t launch_long(const Problem& p, cudaStream_t stream) {
  return launch_rowwise_long_or_simt<true>(p.rowwise, stream);
}

const Instance k_softmax_vec16_long{Family::softmax,
                                    "vec16",
                                    "softmax.vec16.long_b1024",
                                    {"simt"},
                                    {DType::bf16, DType::f16, DType::f32},
                                    k_rowwise_long_config,
                                    &supports,
                                    &launch_long};
KPORT_REGISTER_KERNEL(k_softmax_vec16_long);

}  // namespace
