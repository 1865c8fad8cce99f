// ClaimBroker: long-poll claims. A runner asks for a job and, when none matches, its
// request waits here (no thread held) until a job may have appeared, its wait ends, or
// the coordinator stops. One broker thread retries parked claims when notify() says
// the queue changed, in arrival order, so the longest-waiting runner is served first.
//
// Thread-safe. Every parked request gets exactly one reply.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "kport/db/store.h"
#include "kport/http/message.h"

namespace kport::coordinator {

class ClaimBroker {
 public:
  using Reply = std::function<void(http::Response)>;

  ClaimBroker(db::Store& store, std::int64_t lease_ms);
  ~ClaimBroker();
  ClaimBroker(const ClaimBroker&) = delete;
  ClaimBroker& operator=(const ClaimBroker&) = delete;

  // Claims now; with nothing to claim and wait > 0, parks until one of the above.
  // Runs the first attempt on the calling thread (a worker: it touches the database).
  void claim(std::int64_t runner_id, std::chrono::milliseconds wait, Reply reply);
  // The queue may hold new claimable work (enqueue, retry, expiry, build success).
  void notify();
  // A job becomes claimable after `delay` (its retry backoff ends): look again then.
  void notify_in(std::chrono::milliseconds delay);
  // Answers every parked claim with "no job" and refuses new waits. Idempotent.
  void stop();
  std::size_t waiting() const;

  // The JSON answers, shared with tests.
  static http::Response job_response(const db::Claim& claim, std::int64_t lease_ms);
  static http::Response empty_response(std::chrono::milliseconds retry_after);

 private:
  struct Waiter {
    std::int64_t runner_id;
    std::chrono::steady_clock::time_point deadline;
    Reply reply;
  };
  void run();
  // One claim attempt: a response when it ends the request (a job, or an error).
  std::optional<http::Response> attempt(std::int64_t runner_id);

  db::Store& m_store;
  std::int64_t m_lease_ms;
  mutable std::mutex m_mu;
  std::condition_variable m_cv;
  std::deque<Waiter> m_waiters;
  std::vector<std::chrono::steady_clock::time_point> m_wakes;  // pending notify_in times
  bool m_dirty = false;
  bool m_stopping = false;
  std::thread m_thread;
};

}  // namespace kport::coordinator
