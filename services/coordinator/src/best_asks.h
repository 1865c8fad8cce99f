// How often /api/v1/best answered a question without a measurement at its exact shape,
// per library (the repository the answer's evidence is of: the one a measure request of
// the shape would measure, migration 0025), counted in memory on the request path and written to the store in batches
// (best_asks, migration 0010) by flush(), which the coordinator's reaper calls once a
// second (less often while a flush takes over a twentieth of that) and once at stop. No
// database write happens on an I/O thread: an answer takes its key's Counter (a mutex and
// a hash lookup) and counts with one atomic add.
//
// Bounded: at most k_max_keys keys are counted at once; asks of further keys are
// counted as dropped until a flush forgets the idle ones. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kport/db/store.h"

namespace kport::coordinator {

// What an answer without a measurement counts: the key asked, in the library the answer
// was of ("" for an answer of no library).
struct UnmeasuredAsk {
  db::BestKey key;
  std::string repo = {};
};

// The same, as the request path names it: views into the question and the evidence it
// was answered from, which outlive the count (nothing is copied unless the key is new).
struct AskView {
  std::string_view gpu_model, family, dtype, shape, repo;
};
inline AskView view_of(const UnmeasuredAsk& a) {
  return AskView{a.key.gpu_model, a.key.family, a.key.dtype, a.key.shape, a.repo};
}
inline UnmeasuredAsk owned(const AskView& a) {
  return UnmeasuredAsk{
      db::BestKey{std::string(a.gpu_model), std::string(a.family), std::string(a.dtype), std::string(a.shape)},
      std::string(a.repo)};
}

class BestAsks {
 public:
  static constexpr std::size_t k_max_keys = 10'000;

  // One (key, library)'s asks since the last flush.
  class Counter {
   public:
    explicit Counter(UnmeasuredAsk ask) : m_ask(std::move(ask)) {}
    const db::BestKey& key() const { return m_ask.key; }
    const std::string& repo() const { return m_ask.repo; }
    void add(std::int64_t now_ms) {
      if (m_asks.fetch_add(1, std::memory_order_relaxed) == 0) m_first_ms.store(now_ms, std::memory_order_relaxed);
      m_last_ms.store(now_ms, std::memory_order_relaxed);
    }

   private:
    friend class BestAsks;
    UnmeasuredAsk m_ask;
    std::atomic<std::int64_t> m_asks{0}, m_first_ms{0}, m_last_ms{0};
  };

  // The counter of `ask`; nullptr (and one ask counted as dropped) when k_max_keys
  // other (key, library) pairs are being counted.
  std::shared_ptr<Counter> counter(const UnmeasuredAsk& ask);
  // counter(ask)->add(now_ms), without a copy of the key when it is counted already (the
  // request path's: a hash lookup of the key's text under the mutex and an atomic add).
  void record(const AskView& ask, std::int64_t now_ms);
  void record(const UnmeasuredAsk& ask, std::int64_t now_ms) { record(view_of(ask), now_ms); }
  // Asks of `key` in library `repo` not yet written to the store.
  std::int64_t pending(const db::BestKey& key, const std::string& repo) const;
  // Pending asks of one GPU model (empty: all) and of one library (nullopt: every
  // library's), to add to what the store holds.
  std::vector<db::BestAsk> pending_for(const std::string& gpu_model,
                                       const std::optional<std::string>& repo = std::nullopt) const;
  // Writes the pending counts in one store call; on failure they are kept for the next.
  // One caller at a time (the reaper thread).
  Status flush(db::Store& store);
  std::int64_t dropped() const { return m_dropped.load(std::memory_order_relaxed); }

 private:
  // The five joined by NUL (which none of them holds: the request readers refuse it),
  // into `out`.
  static void key_text(const AskView& ask, std::string& out);
  static std::string key_text(const db::BestKey& key, const std::string& repo);
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex m_mu;  // guards the two maps
  std::unordered_map<std::string, std::shared_ptr<Counter>, Hash, std::equal_to<>> m_counters;
  std::unordered_map<std::string, db::BestAsk> m_in_flight;  // being written by flush()
  std::atomic<std::int64_t> m_dropped{0};
};

}  // namespace kport::coordinator
