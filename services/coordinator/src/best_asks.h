// How often /api/v1/best answered a question without a measurement at its exact shape,
// counted in memory on the request path and written to the store in batches
// (best_asks, migration 0010) by flush(), which the coordinator's reaper calls once a
// second and once at stop. No database write happens on an I/O thread: an answer takes
// its key's Counter (a mutex and a hash lookup) and counts with one atomic add.
//
// Bounded: at most k_max_keys keys are counted at once; asks of further keys are
// counted as dropped until a flush forgets the idle ones. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kport/db/store.h"

namespace kport::coordinator {

class BestAsks {
 public:
  static constexpr std::size_t k_max_keys = 10'000;

  // One key's asks since the last flush.
  class Counter {
   public:
    explicit Counter(db::BestKey key) : m_key(std::move(key)) {}
    const db::BestKey& key() const { return m_key; }
    void add(std::int64_t now_ms) {
      if (m_asks.fetch_add(1, std::memory_order_relaxed) == 0) m_first_ms.store(now_ms, std::memory_order_relaxed);
      m_last_ms.store(now_ms, std::memory_order_relaxed);
    }

   private:
    friend class BestAsks;
    db::BestKey m_key;
    std::atomic<std::int64_t> m_asks{0}, m_first_ms{0}, m_last_ms{0};
  };

  // The counter of `key`; nullptr (and one ask counted as dropped) when k_max_keys
  // other keys are being counted.
  std::shared_ptr<Counter> counter(const db::BestKey& key);
  // counter(key)->add(now_ms).
  void record(const db::BestKey& key, std::int64_t now_ms);
  // Asks of `key` not yet written to the store.
  std::int64_t pending(const db::BestKey& key) const;
  // Pending asks of one GPU model (empty: all), to add to what the store holds.
  std::vector<db::BestAsk> pending_for(const std::string& gpu_model) const;
  // Writes the pending counts in one store call; on failure they are kept for the next.
  // One caller at a time (the reaper thread).
  Status flush(db::Store& store);
  std::int64_t dropped() const { return m_dropped.load(std::memory_order_relaxed); }

 private:
  static std::string key_text(const db::BestKey& key);
  mutable std::mutex m_mu;  // guards the two maps
  std::unordered_map<std::string, std::shared_ptr<Counter>> m_counters;
  std::unordered_map<std::string, db::BestAsk> m_in_flight;  // being written by flush()
  std::atomic<std::int64_t> m_dropped{0};
};

}  // namespace kport::coordinator
