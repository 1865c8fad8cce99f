// softmax for long rows (over 32 KB), sm_90 and later: a thread-block cluster per row, each
// CTA staging its slice of the row in shared memory (bulk copies), so the row is read from HBM
// once and written once; the CTAs' (max, sum of exp) pairs meet through distributed shared
// memory. Rows that are not whole 16-byte vectors, unaligned buffers, rows of at most 32 KB
// (the vec16 instances' own) and rows over what 16 CTAs hold are refused with the reason.
// See common/rowwise_cluster_sm90.cuh and NOTES.md.
#include <string>

#include "common/rowwise_cluster_sm90.cuh"
#include "kport/kernels/registry.h"

namespace {

using namespace kport::kernels;

// k_threads threads a CTA, a slice of at most k_slice_bytes a CTA.
template <int k_threads, int k_slice_bytes>
std::string supports(const Problem& p) {
  if (p.family != Family::softmax) return "not a softmax problem";
  const ClusterPlan plan = plan_rowwise_cluster(p.rowwise, k_slice_bytes / 16);
  if (!plan.refusal.empty()) return plan.refusal;
  if (p.rowwise.x == nullptr) return "";  // no buffers yet: the device is asked at the launch's problem
  return rowwise_cluster::rowwise_cluster_fit_refusal<k_threads, k_slice_bytes / 16, true>(p.rowwise, plan);
}

template <int k_threads, int k_slice_bytes>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  const ClusterPlan plan = plan_rowwise_cluster(p.rowwise, k_slice_bytes / 16);
  if (!plan.refusal.empty()) return cudaErrorInvalidValue;  // supports() says why
  return rowwise_cluster::launch_rowwise_cluster<k_threads, k_slice_bytes / 16, true>(p.rowwise, plan, stream);
}

// The config's bounds are plan_rowwise_cluster's.
static_assert(k_cluster_min_row_bytes == 32768 && k_cluster_row_align_bytes == 16 && k_cluster_max_ctas == 16);

#define KPORT_SOFTMAX_CLUSTER(threads, slice_kb, max_row_bytes)                                            \
  static_assert(cluster_max_row_bytes(slice_kb * 1024 / 16) == max_row_bytes);                             \
  const Instance k_softmax_cluster_b##threads##_s##slice_kb{                                               \
      Family::softmax,                                                                                     \
      "cluster",                                                                                           \
      "softmax.cluster.b" #threads "_s" #slice_kb "k",                                                     \
      {"cluster", "dsmem", "tma", "mbarrier"},                                                             \
      {DType::bf16, DType::f16, DType::f32},                                                               \
      R"({"load_bytes":16,"threads_per_cta":)" #threads R"(,"max_slice_kb":)" #slice_kb                    \
      R"(,"staging":"shared memory, cp.async.bulk","max_cluster_ctas":16,"passes":1)"                      \
      R"(,"max_row_bytes":)" #max_row_bytes R"(,"row_align_bytes":16,"refuses_row_bytes_at_most":32768})", \
      &supports<threads, slice_kb * 1024>,                                                                 \
      &launch<threads, slice_kb * 1024>};                                                                  \
  KPORT_REGISTER_KERNEL(k_softmax_cluster_b##threads##_s##slice_kb)

// Slices of 32 KB (a 64 KB row: 2 CTAs, 256 KB: 8; 6 CTAs a SM by shared memory) and of 64 KB
// (half the CTAs, 3 a SM; rows up to 1 MB). 16 KB slices (128 threads, 13 CTAs a SM) were slower
// on the H200 at every bench row (rmsnorm 0.80-0.86 of the copy against 0.90).
KPORT_SOFTMAX_CLUSTER(256, 32, 524288);
KPORT_SOFTMAX_CLUSTER(512, 64, 1048576);

}  // namespace
