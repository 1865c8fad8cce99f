#include "best_asks.h"

#include <algorithm>

namespace kport::coordinator {

std::string BestAsks::key_text(const db::BestKey& k) {
  // NUL cannot appear in any of the four (the request readers refuse it).
  std::string s;
  s.reserve(k.gpu_model.size() + k.family.size() + k.dtype.size() + k.shape.size() + 3);
  s.append(k.gpu_model).push_back('\0');
  s.append(k.family).push_back('\0');
  s.append(k.dtype).push_back('\0');
  s.append(k.shape);
  return s;
}

void BestAsks::record(const db::BestKey& key, std::int64_t now_ms) {
  std::string k = key_text(key);
  std::lock_guard lock(m_mu);
  auto it = m_pending.find(k);
  if (it == m_pending.end()) {
    if (m_pending.size() >= k_max_pending) {
      ++m_dropped;
      return;
    }
    it = m_pending.emplace(std::move(k), db::BestAsk{key, 0, now_ms, now_ms}).first;
  }
  ++it->second.asks;
  it->second.last_ms = now_ms;
}

std::int64_t BestAsks::pending(const db::BestKey& key) const {
  const std::string k = key_text(key);
  std::lock_guard lock(m_mu);
  std::int64_t n = 0;
  if (auto it = m_pending.find(k); it != m_pending.end()) n += it->second.asks;
  if (auto it = m_in_flight.find(k); it != m_in_flight.end()) n += it->second.asks;
  return n;
}

std::vector<db::BestAsk> BestAsks::pending_for(const std::string& gpu_model) const {
  std::vector<db::BestAsk> out;
  std::lock_guard lock(m_mu);
  for (const auto* m : {&m_pending, &m_in_flight})
    for (const auto& [k, a] : *m)
      if (gpu_model.empty() || a.key.gpu_model == gpu_model) out.push_back(a);
  return out;
}

std::int64_t BestAsks::dropped() const {
  std::lock_guard lock(m_mu);
  return m_dropped;
}

Status BestAsks::flush(db::Store& store) {
  std::vector<db::BestAsk> asks;
  {
    std::lock_guard lock(m_mu);
    if (m_pending.empty()) return {};
    // Still counted by pending() while the write is under way.
    m_in_flight.swap(m_pending);
    asks.reserve(m_in_flight.size());
    for (const auto& [k, a] : m_in_flight) asks.push_back(a);
  }
  auto st = store.record_best_asks(asks);
  std::lock_guard lock(m_mu);
  std::unordered_map<std::string, db::BestAsk> batch;
  batch.swap(m_in_flight);
  if (st.ok()) return st;
  // Keep the counts for the next flush, merged with what arrived meanwhile.
  for (auto& [k, a] : batch) {
    auto [it, fresh] = m_pending.try_emplace(k, a);
    if (!fresh) {
      it->second.asks += a.asks;
      it->second.first_ms = std::min(it->second.first_ms, a.first_ms);
    }
  }
  return st;
}

}  // namespace kport::coordinator
