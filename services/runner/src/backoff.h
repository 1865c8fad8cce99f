// How long the runner waits before it tries the coordinator again after a failure: the
// delay doubles with each failure in a row, up to a cap, and each wait is drawn at random
// from its upper half ("equal jitter"), so runners that lost the coordinator together do
// not come back in step. A success resets it. Not thread-safe: one per loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace kport::runner {

class Backoff {
 public:
  // `seed` fixes the jitter (tests); 0 draws one from std::random_device.
  Backoff(std::chrono::milliseconds first, std::chrono::milliseconds cap, std::uint64_t seed = 0);

  // The wait before the next try, in [d/2, d] where d = min(cap, first * 2^(failures so far)).
  std::chrono::milliseconds next();
  void reset() { m_failures = 0; }
  int failures() const { return m_failures; }

 private:
  std::chrono::milliseconds m_first;
  std::chrono::milliseconds m_cap;
  int m_failures = 0;
  std::mt19937_64 m_rng;
};

}  // namespace kport::runner
