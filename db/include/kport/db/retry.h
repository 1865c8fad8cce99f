// When a job that failed for a passing reason (a clone that timed out, a lease that
// expired) may run again.
//
// Exponential backoff with jitter, per job, as the runners of GitHub and GitLab do it:
// after attempt n the job waits base * 2^(n-1), capped at max, scaled by a jitter
// factor in [1/2, 1] so that jobs failed by one outage do not all return at once. The
// runner that failed the attempt waits twice as long again before it may take the job
// back, so another runner gets the first chance. Pure and thread-safe.
#pragma once

#include <cstdint>

namespace kport::db {

struct RetryPolicy {
  std::int64_t base_ms = 10'000;  // delay after the first failed attempt, before jitter
  std::int64_t max_ms = 600'000;  // no delay grows beyond this
};

struct RetryDelay {
  std::int64_t others_ms = 0;  // any runner may claim the job after this
  std::int64_t same_ms = 0;    // the runner that failed it, after this (>= others_ms)
};

// `failed_attempt` >= 1 is the attempt that just ended; `unit` in [0, 1) is the jitter
// draw (values outside are clamped). A zero base gives no delay at all.
RetryDelay retry_delay(const RetryPolicy& policy, int failed_attempt, double unit) noexcept;

}  // namespace kport::db
