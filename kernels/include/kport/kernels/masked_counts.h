// The valid rows of each group of a masked grouped gemm case (grouped_gemm and
// grouped_gemm_fp8 with a shape's `valid`): one deterministic function of (g, m, valid), so
// the harness, its tests and the GPU tests agree on what a case is. Plain C++.
//
// The counts sum to exactly g * valid (the case's work is 2 * g * valid * n * k), each lies in
// 0 .. m, and they spread as a decode step's experts do: group 0 gets nothing (an idle
// expert), the last group as many rows as there are up to m (a hot one, full when g * valid
// >= m), and the groups between a ramp from few to many rows over what is left, none above m.
// Only when the others are all full does group 0 take the rest.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kport::kernels {

// The most groups a masked case may have (the harness refuses more): experts of one MoE layer.
constexpr int k_masked_max_groups = 4096;

// masked_m of the case: `groups` counts (1 .. k_masked_max_groups groups, 0 <= valid <= m).
inline std::vector<int> masked_counts(int groups, int m, int valid) {
  std::vector<int> c(static_cast<std::size_t>(std::max(groups, 0)), 0);
  if (groups <= 0 || m <= 0 || valid <= 0) return c;
  const std::int64_t total = std::int64_t{groups} * std::min(valid, m);
  if (groups == 1) {
    c[0] = static_cast<int>(total);
    return c;
  }
  c[groups - 1] = static_cast<int>(std::min<std::int64_t>(m, total));
  // The middle groups 1 .. h take a ramp: group j gets min(m, floor(j * top / h)) for the
  // largest `top` whose ramp fits what is left, then one row more each for the highest groups
  // below m until the sum is exact.
  const int h = groups - 2;
  const std::int64_t left = total - c[groups - 1];
  const std::int64_t middle = std::min<std::int64_t>(left, std::int64_t{h} * m);
  const auto ramp = [&](std::int64_t top, int j) { return std::min<std::int64_t>(m, j * top / h); };
  const auto ramp_sum = [&](std::int64_t top) {
    std::int64_t sum = 0;
    for (int j = 1; j <= h; ++j) sum += ramp(top, j);
    return sum;
  };
  if (h > 0) {
    std::int64_t lo = 0, hi = std::int64_t{h} * m;  // ramp_sum(hi) = h * m >= middle
    while (lo < hi) {
      const std::int64_t mid = (lo + hi + 1) / 2;
      if (ramp_sum(mid) <= middle)
        lo = mid;
      else
        hi = mid - 1;
    }
    std::int64_t short_by = middle - ramp_sum(lo);
    for (int j = 1; j <= h; ++j) c[j] = static_cast<int>(ramp(lo, j));
    for (int j = h; j >= 1 && short_by > 0; --j)
      if (c[j] < m) ++c[j], --short_by;
  }
  c[0] = static_cast<int>(left - middle);  // 0 unless every other group is full
  return c;
}

}  // namespace kport::kernels
