// StopSignal: tells long-running handlers (long-poll, event streams) that the server is
// stopping, so they reply early instead of being cut off at the drain deadline.
//
// Thread-safe. Owned by the Server and shared with every Request (Request::stop).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace kport::http {

class StopSignal {
 public:
  using Callback = std::function<void()>;

  bool stopping() const noexcept { return m_stopping.load(std::memory_order_acquire); }
  // Runs `fn` once when the stop begins (on the stopping thread), or right now on the
  // caller's thread when it has already begun. Returns an id for remove(); 0 when it ran
  // immediately. Callbacks must not block for long: stop() waits for them.
  std::uint64_t on_stop(Callback fn) const;
  // Forgets a callback that has not run yet (for a long-poll that replied normally).
  void remove(std::uint64_t id) const;
  // Starts the stop: sets stopping() and runs the callbacks. Idempotent.
  void trigger();

 private:
  std::atomic<bool> m_stopping{false};
  mutable std::mutex m_mu;
  mutable std::map<std::uint64_t, Callback> m_callbacks;
  mutable std::uint64_t m_next_id = 1;
};

}  // namespace kport::http
