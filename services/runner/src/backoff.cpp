#include "backoff.h"

#include <algorithm>

namespace kport::runner {

Backoff::Backoff(std::chrono::milliseconds first, std::chrono::milliseconds cap, std::uint64_t seed)
    : m_first(std::max(first, std::chrono::milliseconds(1))),
      m_cap(std::max(cap, m_first)),
      m_rng(seed != 0 ? seed : (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}()) {}

std::chrono::milliseconds Backoff::next() {
  // Doubling stops at the cap, so the shift never overflows however long the outage.
  std::int64_t d = m_first.count();
  for (int i = 0; i < m_failures && d < m_cap.count(); ++i) d *= 2;
  d = std::min(d, static_cast<std::int64_t>(m_cap.count()));
  ++m_failures;
  std::uniform_int_distribution<std::int64_t> pick(d / 2, d);
  return std::chrono::milliseconds(pick(m_rng));
}

}  // namespace kport::runner
