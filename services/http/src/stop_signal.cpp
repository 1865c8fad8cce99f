#include "kport/http/stop_signal.h"

#include <vector>

namespace kport::http {

std::uint64_t StopSignal::on_stop(Callback fn) const {
  {
    std::lock_guard lock(m_mu);
    if (!m_stopping.load(std::memory_order_acquire)) {
      std::uint64_t id = m_next_id++;
      m_callbacks.emplace(id, std::move(fn));
      return id;
    }
  }
  // Already stopping: run outside the lock so the callback may register or remove.
  fn();
  return 0;
}

void StopSignal::remove(std::uint64_t id) const {
  std::lock_guard lock(m_mu);
  m_callbacks.erase(id);
}

// Callbacks run outside the lock, since they typically reply to a request and a reply
// may register or remove other callbacks.
void StopSignal::trigger() {
  std::map<std::uint64_t, Callback> callbacks;
  {
    std::lock_guard lock(m_mu);
    if (m_stopping.exchange(true, std::memory_order_acq_rel)) return;
    callbacks.swap(m_callbacks);
  }
  for (auto& [id, fn] : callbacks) fn();
}

}  // namespace kport::http
