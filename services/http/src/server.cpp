#include <algorithm>
#include <exception>

#include "kport/common/log.h"
#include "session.h"

namespace kport::http {
namespace {

std::vector<std::unique_ptr<net::io_context>> make_contexts(int threads) {
  std::vector<std::unique_ptr<net::io_context>> out;
  for (int i = 0; i < std::max(1, threads); ++i) out.push_back(std::make_unique<net::io_context>(1));
  return out;
}

}  // namespace

Server::Impl::Impl(ServerOptions opts, std::shared_ptr<const Router> r)
    : options(std::move(opts)),
      router(std::move(r)),
      iocs(make_contexts(options.threads)),
      m_accept_exec(iocs.front()->get_executor()),
      m_acceptor(m_accept_exec),
      m_sweeper(m_accept_exec),
      m_accept_retry(m_accept_exec) {
  // Stats slots are created up front so the request path only touches atomics.
  for (const auto& route : router->routes()) m_route_stats.push_back(&metrics.route(route->name, route->method));
  m_unmatched = &metrics.route("unmatched", "any");
}

Server::Impl::~Impl() = default;

RouteStats& Server::Impl::stats_for(const Route* route) noexcept {
  return route->id < m_route_stats.size() ? *m_route_stats[route->id] : *m_unmatched;
}

Status Server::Impl::start() {
  if (running.load() || closed.load())
    return make_error(Errc::conflict, "the server was already started; create a new one");
  if (!options.tls_cert_file.empty() || !options.tls_key_file.empty()) {
    if (options.tls_cert_file.empty() || options.tls_key_file.empty())
      return make_error(Errc::invalid_argument, std::string("HTTPS needs both --tls-cert and --tls-key; only ") +
                                                    (options.tls_cert_file.empty() ? "--tls-key" : "--tls-cert") +
                                                    " was given");
    auto ctx = make_server_tls(options.tls_cert_file, options.tls_key_file);
    if (!ctx) return std::move(ctx).error();
    tls = std::move(*ctx);
  }
  beast::error_code ec;
  std::string host = options.host == "localhost" ? "127.0.0.1" : options.host;
  auto address = net::ip::make_address(host, ec);
  if (ec)
    return make_error(Errc::invalid_argument,
                      "cannot listen on '" + options.host + "': not an IP address (" + ec.message() + ")");
  tcp::endpoint ep(address, options.port);
  const std::string where = options.host + ":" + std::to_string(options.port);
  if (m_acceptor.open(ep.protocol(), ec); ec)
    return make_error(Errc::unavailable, "cannot open a socket for " + where + ": " + ec.message());
  m_acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (m_acceptor.bind(ep, ec); ec)
    return make_error(Errc::unavailable, "cannot listen on " + where + ": " + ec.message() +
                                             "; choose another port or stop the other process");
  if (m_acceptor.listen(net::socket_base::max_listen_connections, ec); ec)
    return make_error(Errc::unavailable, "cannot listen on " + where + ": " + ec.message());
  port.store(m_acceptor.local_endpoint().port());

  auto shortest = std::min({options.read_timeout, options.idle_timeout, options.write_timeout, options.sse_heartbeat});
  m_tick = std::clamp(shortest / 4, std::chrono::milliseconds{5}, std::chrono::milliseconds{500});
  for (auto& ioc : iocs) m_work.push_back(net::make_work_guard(*ioc));
  running.store(true);
  net::post(m_accept_exec, [self = shared_from_this()] {
    self->do_accept();
    self->arm_sweeper();
  });
  for (auto& context : iocs) {
    m_threads.emplace_back([&ioc = *context] {
      // A handler that throws past its own catch is a bug; keep the thread serving.
      for (;;) {
        try {
          ioc.run();
          return;
        } catch (const std::exception& e) {
          log::error("exception escaped an I/O handler", {{"what", e.what()}});
        }
      }
    });
  }
  return {};
}

void Server::Impl::do_accept() {
  net::io_context& target = *iocs[m_next_ioc++ % iocs.size()];
  m_acceptor.async_accept(target.get_executor(), [self = shared_from_this()](beast::error_code ec, tcp::socket s) {
    self->on_accept(ec, std::move(s));
  });
}

void Server::Impl::on_accept(beast::error_code ec, tcp::socket socket) {
  if (!m_acceptor.is_open() || stop_signal->stopping()) return;
  if (ec) {
    if (ec == net::error::operation_aborted) return;
    log::warn("accept failed", {{"error", ec.message()}});
    // Out of descriptors: retrying at once would spin; give sessions time to close.
    m_accept_retry.expires_after(std::chrono::milliseconds{100});
    m_accept_retry.async_wait([self = shared_from_this()](beast::error_code e) {
      if (!e) self->do_accept();
    });
    return;
  }
  metrics.connections_total.fetch_add(1, std::memory_order_relaxed);
  beast::error_code addr_ec;
  auto remote = socket.remote_endpoint(addr_ec);
  std::optional<bool> reserved = addr_ec ? std::nullopt : admit(remote.address());
  if (!reserved) {
    metrics.connections_rejected.fetch_add(1, std::memory_order_relaxed);
    reject(socket);
  } else {
    socket.set_option(tcp::no_delay(true), ec);
    auto session = std::make_shared<Session>(shared_from_this(), std::move(socket), *reserved);
    if (*reserved) m_reserve_order.push_back(session);
    session->start();
  }
  do_accept();
}

// Runs on the accept thread. Counts are read without holding the lock across the
// decision: a session closing meanwhile only makes the answer conservative.
std::optional<bool> Server::Impl::admit(const net::ip::address& addr) {
  const auto open = static_cast<std::size_t>(std::max<std::int64_t>(0, metrics.connections_open.load()));
  const auto in_reserve = static_cast<std::size_t>(std::max<std::int64_t>(0, metrics.connections_reserved.load()));
  // The reserve never takes more than half of max_connections.
  const std::size_t reserve = std::min(options.reserved_connections, options.max_connections / 2);
  const std::size_t ordinary_cap = options.max_connections - reserve;
  std::size_t from_addr = 0;
  {
    std::lock_guard lock(m_mu);
    if (auto it = m_per_address.find(addr); it != m_per_address.end()) from_addr = it->second;
  }
  const std::size_t ordinary = open > in_reserve ? open - in_reserve : 0;
  if (ordinary < ordinary_cap && from_addr < options.max_connections_per_address) return false;
  if (reserve == 0) return std::nullopt;
  if (in_reserve < reserve || evict_idle_reserved()) return true;
  return std::nullopt;
}

// The oldest reserve connection that has not sent a byte is the cheapest to lose: it
// holds a slot and asks for nothing. Connections that spoke are no longer candidates.
bool Server::Impl::evict_idle_reserved() {
  while (!m_reserve_order.empty()) {
    auto s = m_reserve_order.front().lock();
    m_reserve_order.pop_front();
    if (!s || s->spoke()) continue;
    metrics.connections_evicted.fetch_add(1, std::memory_order_relaxed);
    s->post_close();
    return true;
  }
  return false;
}

bool Server::Impl::privileged_path(std::string_view path) const {
  return std::find(options.privileged_paths.begin(), options.privileged_paths.end(), path) !=
         options.privileged_paths.end();
}

bool Server::Impl::authorized(std::string_view authorization) const {
  if (authorization.empty()) return false;
  if (!options.authorized) return true;
  // A throwing callback must not take the I/O thread down: no reserve slot then.
  try {
    return options.authorized(authorization);
  } catch (...) {
    return false;
  }
}

void Server::Impl::reject(tcp::socket& socket) {
  static constexpr std::string_view k_body =
      R"({"error":{"code":"unavailable","message":"too many connections; retry later"}})";
  static const std::string k_reply =
      "HTTP/1.1 503 Service Unavailable\r\nServer: kport\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(k_body.size()) + "\r\nConnection: close\r\n\r\n" + std::string(k_body);
  // A 5xx must be explainable from the log, but a flood of refused connections must not
  // flood the log: one line a second at most, counting those refused since the last.
  m_refused_unlogged.fetch_add(1, std::memory_order_relaxed);
  const auto now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  auto last = m_refused_logged_ms.load(std::memory_order_relaxed);
  if (now_ms - last >= 1000 && m_refused_logged_ms.compare_exchange_strong(last, now_ms)) {
    beast::error_code addr_ec;
    auto remote = socket.remote_endpoint(addr_ec);
    log::error("connections refused with 503: too many connections",
               {{"status", 503},
                {"refused", m_refused_unlogged.exchange(0)},
                {"remote", addr_ec ? std::string("?") : remote.address().to_string()},
                {"max_connections", options.max_connections}});
  }
  // Best effort and never blocking: the reply fits in an empty socket buffer.
  beast::error_code ec;
  socket.non_blocking(true, ec);
  socket.write_some(net::buffer(k_reply), ec);
  socket.close(ec);
}

void Server::Impl::add_session(const std::shared_ptr<Session>& s) {
  std::lock_guard lock(m_mu);
  m_sessions.emplace(s.get(), s);
  metrics.connections_open.fetch_add(1, std::memory_order_relaxed);
  if (s->reserved())
    metrics.connections_reserved.fetch_add(1, std::memory_order_relaxed);
  else
    ++m_per_address[s->address()];
}

void Server::Impl::remove_session(Session* s) {
  std::lock_guard lock(m_mu);
  if (m_sessions.erase(s) == 0) return;
  metrics.connections_open.fetch_sub(1, std::memory_order_relaxed);
  if (s->reserved()) {
    metrics.connections_reserved.fetch_sub(1, std::memory_order_relaxed);
  } else if (auto it = m_per_address.find(s->address()); it != m_per_address.end() && --it->second == 0) {
    m_per_address.erase(it);
  }
  if (m_sessions.empty()) m_sessions_cv.notify_all();
}

std::vector<std::shared_ptr<Session>> Server::Impl::snapshot() {
  std::vector<std::shared_ptr<Session>> out;
  std::lock_guard lock(m_mu);
  out.reserve(m_sessions.size());
  for (auto& [ptr, weak] : m_sessions)
    if (auto s = weak.lock()) out.push_back(std::move(s));
  return out;
}

// One timer for all connections: sessions only store a deadline (an atomic), so the
// request path never touches the timer queue.
void Server::Impl::arm_sweeper() {
  m_sweeper.expires_after(m_tick);
  m_sweeper.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || !self->m_acceptor.is_open()) return;
    self->sweep();
    self->arm_sweeper();
  });
}

void Server::Impl::sweep() {
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  std::vector<std::shared_ptr<Session>> due;
  {
    std::lock_guard lock(m_mu);
    for (auto& [ptr, weak] : m_sessions) {
      if (ptr->deadline_ns() > now || ptr->timeout_posted.exchange(true)) continue;
      if (auto s = weak.lock()) due.push_back(std::move(s));
    }
  }
  // Posted outside the lock: dropping the last reference to a session takes the lock.
  for (auto& s : due) s->post_timeout();
}

}  // namespace kport::http
