// How often /api/v1/best answered a question without a measurement at its exact shape,
// counted in memory on the request path (a mutex and a hash map: no database write on
// an I/O thread) and written to the store in batches (best_asks, migration 0010) by
// flush(), which the coordinator's reaper calls once a second and once at stop.
//
// Bounded: at most k_max_pending distinct keys wait for a flush; asks of further keys
// are counted as dropped until the next flush. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kport/db/store.h"

namespace kport::coordinator {

class BestAsks {
 public:
  static constexpr std::size_t k_max_pending = 10'000;

  void record(const db::BestKey& key, std::int64_t now_ms);
  // Asks of `key` not yet written to the store.
  std::int64_t pending(const db::BestKey& key) const;
  // Pending asks of one GPU model (empty: all), to add to what the store holds.
  std::vector<db::BestAsk> pending_for(const std::string& gpu_model) const;
  // Writes the pending counts in one store call; on failure they are kept for the next.
  // One caller at a time (the reaper thread).
  Status flush(db::Store& store);
  std::int64_t dropped() const;

 private:
  static std::string key_text(const db::BestKey& key);
  mutable std::mutex m_mu;
  std::unordered_map<std::string, db::BestAsk> m_pending;
  std::unordered_map<std::string, db::BestAsk> m_in_flight;  // being written by flush()
  std::int64_t m_dropped = 0;
};

}  // namespace kport::coordinator
