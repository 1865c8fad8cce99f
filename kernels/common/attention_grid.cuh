// How the attention variants lay a problem's (batch, head) pairs over the grid: x the tiles of
// query rows, y the heads, z the batch. Each of b and h may then be up to 65535 (a grid's y and
// z), where b x h on one axis capped their product at 65535 (b = 512, h = 128 did not run). The
// blocks run in the order they did on one axis (x fastest, then head, then batch): the linear
// block index is x + X * (b * H + h), and head_index() is that b * H + h.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <string>

#include "kport/kernels/registry.h"

namespace kport::kernels::attention_grid {

inline constexpr int k_max_batch = 65535;  // the grid's z
inline constexpr int k_max_heads = 65535;  // the grid's y

// The config keys the selection reads as the largest b and h an instance runs at all
// (kernels/kport.json's attention geometry); every variant publishes them.
inline constexpr const char* k_limits_config = R"("max_b":65535,"max_h":65535)";

// This block's (batch, head) pair as one index, b * H + h.
__device__ __forceinline__ int head_index() { return static_cast<int>(blockIdx.z * gridDim.y + blockIdx.y); }

inline dim3 grid(unsigned row_tiles, const AttentionArgs& a) {
  return dim3(row_tiles, static_cast<unsigned>(a.heads), static_cast<unsigned>(a.batch));
}

// Why the grid does not hold `a`'s pairs, or "" (b and h already checked positive).
inline std::string refusal(const AttentionArgs& a) {
  if (a.batch > k_max_batch || a.heads > k_max_heads)
    return "batch and heads must each be at most 65535, the grid's z and y (b=" + std::to_string(a.batch) +
           ", h=" + std::to_string(a.heads) + ")";
  if (static_cast<long long>(a.batch) * a.heads > INT_MAX) return "batch * heads must fit an int";
  return "";
}

}  // namespace kport::kernels::attention_grid
