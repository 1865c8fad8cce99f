#include "claim_broker.h"

#include "codec.h"
#include "kport/common/log.h"

namespace kport::coordinator {
namespace json = boost::json;

ClaimBroker::ClaimBroker(db::Store& store, std::int64_t lease_ms)
    : m_store(store), m_lease_ms(lease_ms), m_thread([this] { run(); }) {}

ClaimBroker::~ClaimBroker() {
  stop();
  if (m_thread.joinable()) m_thread.join();
}

http::Response ClaimBroker::job_response(const db::Claim& claim, std::int64_t lease_ms) {
  // Runners heartbeat three times per lease, so one lost heartbeat never costs the job.
  api::ClaimAnswer a;
  a.job = to_job_info(claim.job);
  a.lease_expires_ms = claim.lease_expires_ms;
  a.heartbeat_interval_ms = std::max<std::int64_t>(lease_ms / 3, 100);
  return http::json_ok(api::to_json(a));
}

http::Response ClaimBroker::empty_response(std::chrono::milliseconds retry_after) {
  api::ClaimAnswer none;
  none.retry_after_ms = retry_after.count();
  return http::json_ok(api::to_json(none));
}

std::optional<http::Response> ClaimBroker::attempt(std::int64_t runner_id) {
  auto c = m_store.claim(runner_id, m_lease_ms);
  if (!c.ok()) return http::error_response(c.error());
  if (!c->has_value()) return std::nullopt;
  auto res = job_response(**c, m_lease_ms);
  if ((*c)->held)  // a duplicate claim of a token that holds a lease: same attempt, nothing changed
    log::debug("claim answered with the held lease", {{"job", (*c)->job.id}, {"runner", runner_id}});
  else
    log::info("job claimed", {{"job", (*c)->job.id}, {"runner", runner_id}, {"attempt", (*c)->job.attempt}});
  return res;
}

void ClaimBroker::claim(std::int64_t runner_id, std::chrono::milliseconds wait, Reply reply) {
  if (auto res = attempt(runner_id)) return reply(std::move(*res));
  std::unique_lock lock(m_mu);
  if (wait.count() <= 0 || m_stopping) {
    lock.unlock();
    return reply(empty_response(std::chrono::milliseconds(1000)));
  }
  m_waiters.push_back(Waiter{runner_id, std::chrono::steady_clock::now() + wait, std::move(reply)});
  // A job may have arrived between the attempt above and parking: look once more.
  m_dirty = true;
  m_cv.notify_one();
}

void ClaimBroker::notify() {
  std::lock_guard lock(m_mu);
  m_dirty = true;
  m_cv.notify_one();
}

void ClaimBroker::notify_in(std::chrono::milliseconds delay) {
  if (delay.count() <= 0) return notify();
  std::lock_guard lock(m_mu);
  // Few retries are pending at once; a vector scanned per wake is enough.
  m_wakes.push_back(std::chrono::steady_clock::now() + delay);
  m_cv.notify_one();
}

void ClaimBroker::stop() {
  std::deque<Waiter> waiters;
  {
    std::lock_guard lock(m_mu);
    if (m_stopping && m_waiters.empty()) return;
    m_stopping = true;
    waiters.swap(m_waiters);
    m_cv.notify_one();
  }
  for (auto& w : waiters) w.reply(empty_response(std::chrono::milliseconds(1000)));
}

std::size_t ClaimBroker::waiting() const {
  std::lock_guard lock(m_mu);
  return m_waiters.size();
}

void ClaimBroker::run() {
  std::unique_lock lock(m_mu);
  while (!m_stopping) {
    auto next = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (const auto& w : m_waiters) next = std::min(next, w.deadline);
    for (const auto& t : m_wakes) next = std::min(next, t);
    m_cv.wait_until(lock, next, [this] { return m_dirty || m_stopping; });
    if (m_stopping) break;
    const auto woke = std::chrono::steady_clock::now();
    if (std::erase_if(m_wakes, [woke](auto t) { return t <= woke; }) > 0) m_dirty = true;
    bool dirty = std::exchange(m_dirty, false);
    std::deque<Waiter> batch;
    batch.swap(m_waiters);
    lock.unlock();
    // Work outside the lock: claims touch the database, replies touch sockets.
    std::deque<Waiter> keep;
    auto now = std::chrono::steady_clock::now();
    for (auto& w : batch) {
      if (dirty) {
        if (auto res = attempt(w.runner_id)) {
          w.reply(std::move(*res));
          continue;
        }
      }
      if (w.deadline <= now) {
        w.reply(empty_response(std::chrono::milliseconds(0)));
        continue;
      }
      keep.push_back(std::move(w));
    }
    lock.lock();
    // Waiters that arrived meanwhile go after the older ones.
    for (auto& w : m_waiters) keep.push_back(std::move(w));
    m_waiters.swap(keep);
  }
}

}  // namespace kport::coordinator
