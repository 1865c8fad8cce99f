#include "kport/db/retry.h"

#include <algorithm>

namespace kport::db {

RetryDelay retry_delay(const RetryPolicy& policy, int failed_attempt, double unit) noexcept {
  if (policy.base_ms <= 0) return {};
  const std::int64_t cap = std::max(policy.max_ms, policy.base_ms);
  // Doubling stops at the cap, so the shift never overflows whatever the attempt.
  std::int64_t full = policy.base_ms;
  for (int i = 1; i < failed_attempt && full < cap; ++i) full *= 2;
  full = std::min(full, cap);
  // "Equal jitter": half the delay is kept, so a retry is never immediate, and half is
  // drawn, so retries of jobs failed together spread out.
  const double u = std::clamp(unit, 0.0, 1.0);
  const auto others = static_cast<std::int64_t>(static_cast<double>(full) * (0.5 + 0.5 * u));
  return RetryDelay{std::max<std::int64_t>(others, 1), std::max<std::int64_t>(others, 1) * 2};
}

}  // namespace kport::db
