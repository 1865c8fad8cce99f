// Server's public face and its two-phase stop.
#include <thread>

#include "kport/common/log.h"
#include "session.h"

namespace kport::http {

void Server::Impl::stop(std::chrono::milliseconds drain) {
  if (!running.exchange(false)) return;
  const auto deadline = Clock::now() + drain;
  // Phase 1: no new connections; long-polls are told to answer; idle connections close.
  stop_signal->trigger();
  net::post(m_accept_exec, [self = shared_from_this()] {
    beast::error_code ec;
    self->m_acceptor.close(ec);
    self->m_sweeper.cancel();
    self->m_accept_retry.cancel();
  });
  for (auto& s : snapshot()) s->post_stop();
  {
    std::unique_lock lock(m_mu);
    m_sessions_cv.wait_until(lock, deadline, [this] { return m_sessions.empty(); });
  }
  // Phase 2: whatever is left past the deadline is cut off.
  auto left = snapshot();
  if (!left.empty()) log::warn("drain deadline passed; closing connections", {{"connections", left.size()}});
  for (auto& s : left) s->post_close();
  left.clear();
  {
    std::unique_lock lock(m_mu);
    m_sessions_cv.wait_for(lock, std::chrono::seconds{1}, [this] { return m_sessions.empty(); });
  }
  m_work.clear();
  // Threads leave run() once no operation is pending; a stuck one is stopped outright.
  auto all_stopped = [this] {
    for (auto& ioc : iocs)
      if (!ioc->stopped()) return false;
    return true;
  };
  for (int i = 0; i < 100 && !all_stopped(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds{10});
  for (auto& ioc : iocs) ioc->stop();
  for (auto& t : m_threads) t.join();
  m_threads.clear();
  closed.store(true, std::memory_order_release);
  // Handlers still queued hold sessions, and sessions hold this object: run them (every
  // socket is closed, so they finish at once) to break that cycle.
  for (auto& ioc : iocs) ioc->restart();
  for (int pass = 0; pass < 100; ++pass) {  // a handler may post to another context
    std::size_t ran = 0;
    for (auto& ioc : iocs) ran += ioc->poll();
    if (ran == 0) break;
  }
}

Server::Server(ServerOptions options, std::shared_ptr<const Router> router)
    : m_impl(std::make_shared<Impl>(std::move(options), std::move(router))) {}

Server::~Server() { m_impl->stop(std::chrono::milliseconds{0}); }

Status Server::start() { return m_impl->start(); }
std::uint16_t Server::port() const noexcept { return m_impl->port.load(); }
bool Server::running() const noexcept { return m_impl->running.load(); }
const char* Server::scheme() const noexcept { return m_impl->options.tls_cert_file.empty() ? "http" : "https"; }
void Server::stop(std::chrono::milliseconds drain) { m_impl->stop(drain); }
Metrics& Server::metrics() noexcept { return m_impl->metrics; }
const std::shared_ptr<StopSignal>& Server::stop_signal() const noexcept { return m_impl->stop_signal; }
std::size_t Server::in_flight() const noexcept { return m_impl->in_flight.load(); }

}  // namespace kport::http
