// Private: the state a Server shares with its sessions. Sessions hold a shared_ptr to it,
// so the io_contexts outlive every socket even when a late Reply keeps a session alive.
//
// One io_context per thread, each connection pinned to one of them: a connection's
// handlers then run on one thread without a strand, and threads never wake each other
// through a shared queue (that wake-up cost dominated the profile of a shared context).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tls.h"

#include "kport/http/server.h"

namespace kport::http {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

class Session;

class Server::Impl : public std::enable_shared_from_this<Server::Impl> {
 public:
  Impl(ServerOptions options, std::shared_ptr<const Router> router);
  ~Impl();

  Status start();
  void stop(std::chrono::milliseconds drain);

  // Called by sessions.
  void add_session(const std::shared_ptr<Session>& s);
  // True when `path` may use a reserve connection without an Authorization header.
  bool privileged_path(std::string_view path) const;
  // Whether a reserve connection's Authorization header earns it the reserve: present,
  // and accepted by options.authorized when one is set.
  bool authorized(std::string_view authorization) const;
  void remove_session(Session* s);
  RouteStats& stats_for(const Route* route) noexcept;
  RouteStats& unmatched_stats() noexcept { return *m_unmatched; }

  const ServerOptions options;
  const std::shared_ptr<const Router> router;
  Metrics metrics;
  std::shared_ptr<StopSignal> stop_signal = std::make_shared<StopSignal>();
  std::atomic<std::size_t> in_flight{0};
  std::atomic<bool> running{false};
  std::atomic<bool> closed{false};  // threads joined; late replies are dropped
  std::atomic<std::uint16_t> port{0};
  std::vector<std::unique_ptr<net::io_context>> iocs;  // one per thread; [0] also accepts
  // Set by start() when options name a certificate and key; sessions then speak TLS.
  std::unique_ptr<net::ssl::context> tls;

 private:
  void do_accept();
  void on_accept(boost::system::error_code ec, tcp::socket socket);
  void reject(tcp::socket& socket);
  // Where a new connection from `addr` goes: false for an ordinary slot, true for the
  // reserve; nullopt when there is no room even after evicting an idle reserve connection.
  std::optional<bool> admit(const net::ip::address& addr);
  bool evict_idle_reserved();
  void arm_sweeper();
  void sweep();
  std::vector<std::shared_ptr<Session>> snapshot();

  std::vector<net::executor_work_guard<net::io_context::executor_type>> m_work;
  net::io_context::executor_type m_accept_exec;
  std::size_t m_next_ioc = 0;  // round-robin, touched on the accept thread only
  tcp::acceptor m_acceptor;
  net::steady_timer m_sweeper;
  net::steady_timer m_accept_retry;
  std::chrono::milliseconds m_tick{};
  std::vector<std::thread> m_threads;
  std::vector<RouteStats*> m_route_stats;  // by Route::id; fixed after start()
  RouteStats* m_unmatched = nullptr;

  // Reserve connections in the order they came, for eviction; accept thread only.
  std::deque<std::weak_ptr<Session>> m_reserve_order;
  // Connections refused at the door since the last log line, and when that was (ms).
  std::atomic<std::int64_t> m_refused_unlogged{0};
  std::atomic<std::int64_t> m_refused_logged_ms{-1'000'000};

  std::mutex m_mu;  // guards m_sessions and m_per_address
  std::condition_variable m_sessions_cv;
  std::unordered_map<Session*, std::weak_ptr<Session>> m_sessions;
  std::map<net::ip::address, std::size_t> m_per_address;  // ordinary connections per address
  bool m_stopped = false;
};

}  // namespace kport::http
