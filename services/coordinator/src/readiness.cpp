#include "readiness.h"

#include <atomic>

#include "kport/common/log.h"

namespace kport::coordinator {
namespace net = boost::asio;
using Clock = std::chrono::steady_clock;

struct Readiness::Waiter {
  explicit Waiter(net::io_context& ioc, http::Reply r) : timer(ioc), reply(std::move(r)) {}
  // Whoever flips this first (the check or the deadline) answers; the other does nothing.
  bool claim() { return !done.exchange(true); }
  net::steady_timer timer;
  http::Reply reply;
  std::atomic<bool> done{false};
};

Readiness::Readiness(db::Store& store, net::thread_pool& workers, std::chrono::milliseconds deadline)
    : m_store(store),
      m_workers(workers),
      m_deadline(deadline),
      m_guard(std::make_unique<net::executor_work_guard<net::io_context::executor_type>>(m_timers.get_executor())) {
  m_thread = std::thread([this] { m_timers.run(); });
}

Readiness::~Readiness() {
  m_guard.reset();
  m_timers.stop();
  if (m_thread.joinable()) m_thread.join();
  std::lock_guard lock(m_mu);
  for (auto& w : m_waiters)
    if (w->claim()) w->reply(http::error_response(make_error(Errc::unavailable, "the coordinator is stopping")));
}

void Readiness::check(http::Reply reply) {
  auto w = std::make_shared<Waiter>(m_timers, std::move(reply));
  const auto deadline = m_deadline;
  // Armed on the timer thread: a steady_timer must not be touched from two threads at once.
  net::post(m_timers, [w, deadline] {
    if (w->done.load()) return;
    w->timer.expires_after(deadline);
    w->timer.async_wait([w, deadline](boost::system::error_code ec) {
      if (ec || !w->claim()) return;
      log::warn("readiness check missed its deadline", {{"deadline_ms", static_cast<std::int64_t>(deadline.count())}});
      w->reply(http::error_response(
          make_error(Errc::unavailable, "the database did not answer within " + std::to_string(deadline.count()) +
                                            " ms (every worker busy, or the database locked or slow)")));
    });
  });
  std::lock_guard lock(m_mu);
  m_waiters.push_back(std::move(w));
  if (m_pending) return;
  m_pending = true;
  net::post(m_workers, [this] { run_check(); });
}

void Readiness::run_check() {
  const auto t0 = Clock::now();
  auto stats = m_store.queue_stats();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  http::Response ok;
  if (stats.ok())
    ok = http::json_ok(boost::json::object{{"status", "ready"}, {"database_ms", took}});
  else
    log::warn("readiness check failed", {{"error", stats.error().message}});
  std::vector<std::shared_ptr<Waiter>> waiters;
  {
    std::lock_guard lock(m_mu);
    m_pending = false;
    waiters.swap(m_waiters);
  }
  for (auto& w : waiters) {
    if (!w->claim()) continue;
    net::post(m_timers, [w] { w->timer.cancel(); });
    w->reply(stats.ok() ? ok
                        : http::error_response(
                              make_error(Errc::unavailable, "database check failed: " + stats.error().message)));
  }
}

}  // namespace kport::coordinator
