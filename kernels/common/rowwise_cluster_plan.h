// How the cluster row-wise kernels (common/rowwise_cluster_sm90.cuh) split a long row: a row of
// `cols` elements is `vecs = cols * sizeof(T) / 16` 16-byte vectors, cut into `ctas` slices of
// `cta_vecs` consecutive vectors (the last may be shorter), one slice per CTA of a thread-block
// cluster, each CTA holding at most `slice_vecs` vectors in shared memory. The
// cluster is the fewest CTAs that hold the row, at most k_cluster_max_ctas (16 needs the
// non-portable cluster size, which the launch allows).
//
// Plain C++ (host only): the instances' supports() and launches plan with it, and its refusals
// are the reasons they give. Rows of at most k_cluster_min_row_bytes are refused: one block
// keeps such a row in registers (the vec16 instances), at 0.96-0.98 of a copy's bandwidth on an
// H200, with no cluster barrier to wait on.
#pragma once

#include <climits>
#include <cstdint>
#include <string>

#include "kport/kernels/registry.h"

namespace kport::kernels {

inline constexpr int k_cluster_max_ctas = 16;
inline constexpr int k_cluster_max_portable_ctas = 8;
inline constexpr long k_cluster_min_row_bytes = 32768;  // refused at or below
inline constexpr long k_cluster_row_align_bytes = 16;
// The shortest row taken, 32 KB and one vector: the instances publish it as their
// run_min_row_bytes (with run_max_row_bytes and run_row_align_bytes, the bounds outside
// which they take no row at all).
inline constexpr long k_cluster_shortest_row_bytes = k_cluster_min_row_bytes + k_cluster_row_align_bytes;

struct ClusterPlan {
  std::string refusal;  // empty when the kernel takes the rows
  int ctas = 0;         // CTAs per row (the cluster size)
  int cta_vecs = 0;     // 16-byte vectors of a CTA's slice
};

// The most bytes of a row a cluster of CTAs holding `slice_vecs` vectors each takes: the
// instances publish it as their run_max_row_bytes.
constexpr long cluster_max_row_bytes(int slice_vecs) { return 16L * slice_vecs * k_cluster_max_ctas; }

inline bool cluster_aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// The split of `a`'s rows, or why they are not taken. Buffers are checked only when set.
inline ClusterPlan plan_rowwise_cluster(const RowwiseArgs& a, int slice_vecs) {
  ClusterPlan plan;
  const std::string shape = "rows=" + std::to_string(a.rows) + ",cols=" + std::to_string(a.cols);
  if (a.dtype != DType::f32 && a.dtype != DType::f16 && a.dtype != DType::bf16) {
    plan.refusal = std::string("dtype ") + dtype_name(a.dtype) + " is not fp32, fp16 or bf16";
    return plan;
  }
  if (a.rows <= 0 || a.cols <= 0) {
    plan.refusal = "rows and cols must be positive (" + shape + ")";
    return plan;
  }
  const long row_bytes = static_cast<long>(a.cols) * dtype_size(a.dtype);
  const std::string bytes = " (" + shape + ", " + std::to_string(row_bytes) + " bytes a row)";
  if (row_bytes % k_cluster_row_align_bytes != 0) {
    plan.refusal = "row is not a whole number of 16-byte vectors" + bytes + "; the vec16 and simt instances take it";
    return plan;
  }
  if (row_bytes <= k_cluster_min_row_bytes) {
    plan.refusal = "row of at most 32 KB" + bytes + ": one block holds it, use the rmsnorm/softmax vec16 instances";
    return plan;
  }
  const long per_cta = slice_vecs;
  const long vecs = row_bytes / 16;
  const long ctas = (vecs + per_cta - 1) / per_cta;
  if (ctas > k_cluster_max_ctas) {
    plan.refusal = "row over " + std::to_string(cluster_max_row_bytes(slice_vecs) / 1024) + " KB, what 16 CTAs hold" +
                   bytes + "; the vec16 long_b1024 instance takes it";
    return plan;
  }
  if (static_cast<long>(a.rows) * ctas > INT_MAX) {
    plan.refusal = "rows x CTAs a row exceeds the grid" + bytes;
    return plan;
  }
  if (!cluster_aligned16(a.x) || !cluster_aligned16(a.y) || (a.w != nullptr && !cluster_aligned16(a.w))) {
    plan.refusal = "x, y and w must be 16-byte aligned" + bytes;
    return plan;
  }
  plan.ctas = static_cast<int>(ctas);
  // Slices as even as whole vectors allow, so no CTA idles on a nearly empty one.
  plan.cta_vecs = static_cast<int>((vecs + ctas - 1) / ctas);
  return plan;
}

}  // namespace kport::kernels
