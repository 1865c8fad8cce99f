#include "dashboard_cache.h"

#include <vector>

#include "kport/common/clock.h"

namespace kport::coordinator {

DashboardCache::DashboardCache(http::EventHub& events, std::int64_t max_age_ms, std::size_t max_entries)
    : m_events(events), m_max_age_ms(max_age_ms), m_max_entries(max_entries) {}

std::uint64_t DashboardCache::generation() {
  // Called with m_mu held. Draining on each lookup (rather than from the hub's notify
  // callback, which runs inside publish) keeps the subscription's queue short; if it
  // still overflowed, the hub closed it and every kept answer is suspect.
  if (!m_sub || m_sub->closed()) {
    m_sub = m_events.subscribe({"results", "jobs", "pipelines", "runners"});
    ++m_generation;
  }
  std::vector<http::EventFrame> frames;
  m_sub->drain(frames);
  if (!frames.empty()) ++m_generation;
  return m_generation;
}

http::Response DashboardCache::get(const std::string& key, const std::function<http::Response()>& compute) {
  std::uint64_t gen = 0;
  {
    std::lock_guard lock(m_mu);
    gen = generation();
    auto it = m_entries.find(key);
    if (it != m_entries.end() && it->second.generation == gen && now_unix_ms() - it->second.created_ms < m_max_age_ms)
      return it->second.response;
  }
  // Computed outside the lock: two readers may compute the same answer once each,
  // which is cheaper than making every reader wait behind one query.
  http::Response res = compute();
  if (res.status != 200 || res.events) return res;
  std::lock_guard lock(m_mu);
  if (m_entries.size() >= m_max_entries) m_entries.clear();
  m_entries[key] = Entry{gen, now_unix_ms(), res};
  return res;
}

}  // namespace kport::coordinator
