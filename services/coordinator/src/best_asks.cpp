#include "best_asks.h"

#include <algorithm>

namespace kport::coordinator {

void BestAsks::key_text(const AskView& a, std::string& s) {
  s.clear();
  s.reserve(a.gpu_model.size() + a.family.size() + a.dtype.size() + a.shape.size() + a.repo.size() + 4);
  s.append(a.gpu_model).push_back('\0');
  s.append(a.family).push_back('\0');
  s.append(a.dtype).push_back('\0');
  s.append(a.shape).push_back('\0');
  s.append(a.repo);
}

std::string BestAsks::key_text(const db::BestKey& k, const std::string& repo) {
  std::string s;
  key_text(AskView{k.gpu_model, k.family, k.dtype, k.shape, repo}, s);
  return s;
}

std::shared_ptr<BestAsks::Counter> BestAsks::counter(const UnmeasuredAsk& ask) {
  std::string k = key_text(ask.key, ask.repo);
  std::lock_guard lock(m_mu);
  auto it = m_counters.find(k);
  if (it != m_counters.end()) return it->second;
  if (m_counters.size() >= k_max_keys) {
    m_dropped.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  auto c = std::make_shared<Counter>(ask);
  m_counters.emplace(std::move(k), c);
  return c;
}

void BestAsks::record(const AskView& ask, std::int64_t now_ms) {
  // The key's text in a buffer of the thread's, kept between questions.
  thread_local std::string k;
  key_text(ask, k);
  std::lock_guard lock(m_mu);
  auto it = m_counters.find(std::string_view(k));
  if (it == m_counters.end()) {
    if (m_counters.size() >= k_max_keys) {
      m_dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    it = m_counters.emplace(k, std::make_shared<Counter>(owned(ask))).first;
  }
  // Under the mutex: flush() forgets only a counter no one holds, and this one is held.
  it->second->add(now_ms);
}

std::int64_t BestAsks::pending(const db::BestKey& key, const std::string& repo) const {
  const std::string k = key_text(key, repo);
  std::lock_guard lock(m_mu);
  std::int64_t n = 0;
  if (auto it = m_counters.find(k); it != m_counters.end()) n += it->second->m_asks.load(std::memory_order_relaxed);
  if (auto it = m_in_flight.find(k); it != m_in_flight.end()) n += it->second.asks;
  return n;
}

std::vector<db::BestAsk> BestAsks::pending_for(const std::string& gpu_model,
                                               const std::optional<std::string>& repo) const {
  auto wanted = [&](const db::BestKey& key, const std::string& of) {
    return (gpu_model.empty() || key.gpu_model == gpu_model) && (!repo || of == *repo);
  };
  std::vector<db::BestAsk> out;
  std::lock_guard lock(m_mu);
  for (const auto& [k, c] : m_counters) {
    const std::int64_t n = c->m_asks.load(std::memory_order_relaxed);
    if (n > 0 && wanted(c->m_ask.key, c->m_ask.repo))
      out.push_back(db::BestAsk{c->m_ask.key, n, c->m_first_ms.load(std::memory_order_relaxed),
                                c->m_last_ms.load(std::memory_order_relaxed), c->m_ask.repo});
  }
  for (const auto& [k, a] : m_in_flight)
    if (wanted(a.key, a.repo)) out.push_back(a);
  return out;
}

Status BestAsks::flush(db::Store& store) {
  std::vector<db::BestAsk> asks;
  {
    std::lock_guard lock(m_mu);
    for (auto it = m_counters.begin(); it != m_counters.end();) {
      Counter& c = *it->second;
      const std::int64_t first = c.m_first_ms.load(std::memory_order_relaxed);
      const std::int64_t last = c.m_last_ms.load(std::memory_order_relaxed);
      const std::int64_t n = c.m_asks.exchange(0, std::memory_order_relaxed);
      if (n > 0) {
        // Still counted by pending() while the write is under way.
        db::BestAsk a{c.m_ask.key, n, first, last, c.m_ask.repo};
        m_in_flight.emplace(it->first, a);
        asks.push_back(std::move(a));
        ++it;
      } else if (it->second.use_count() == 1) {
        it = m_counters.erase(it);  // idle and no cached answer holds it: room for another key
      } else {
        ++it;
      }
    }
  }
  if (asks.empty()) return {};
  auto st = store.record_best_asks(asks);
  std::lock_guard lock(m_mu);
  std::unordered_map<std::string, db::BestAsk> batch;
  batch.swap(m_in_flight);
  if (st.ok()) return st;
  // Keep the counts for the next flush, on top of what arrived meanwhile.
  for (auto& [k, a] : batch) {
    auto it = m_counters.find(k);
    if (it == m_counters.end())
      it = m_counters.emplace(k, std::make_shared<Counter>(UnmeasuredAsk{a.key, a.repo})).first;
    Counter& c = *it->second;
    if (c.m_asks.fetch_add(a.asks, std::memory_order_relaxed) == 0 ||
        a.first_ms < c.m_first_ms.load(std::memory_order_relaxed))
      c.m_first_ms.store(a.first_ms, std::memory_order_relaxed);
    if (c.m_last_ms.load(std::memory_order_relaxed) < a.last_ms)
      c.m_last_ms.store(a.last_ms, std::memory_order_relaxed);
  }
  return st;
}

}  // namespace kport::coordinator
