#include <algorithm>
#include <charconv>
#include <exception>

#include "kport/common/log.h"
#include "session.h"

namespace kport::http {
namespace {

std::string printable_name(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  return out;
}

}  // namespace

// The Reply given to async handlers. It holds the session alive and names the request it
// answers, so a second call, or a call after the connection moved on, is detectable.
struct ReplyFn {
  std::shared_ptr<Session> session;
  std::uint64_t seq;

  void operator()(Response r) const {
    if (session->m_server->closed.load(std::memory_order_acquire)) {
      log::warn("reply after the server stopped was dropped", {{"status", r.status}});
      return;
    }
    net::dispatch(session->m_socket.get_executor(),
                  [s = session, id = seq, resp = std::move(r)]() mutable { s->complete(id, std::move(resp)); });
  }
};

void Session::run_async(const Route& route, Request&& req) {
  const std::uint64_t seq = m_seq;
  m_awaiting = seq;
  try {
    route.handler(std::move(req), Reply(ReplyFn{shared_from_this(), seq}));
    return;
  } catch (const std::exception& e) {
    log::error("handler threw", {{"route", route.name}, {"what", e.what()}});
  } catch (...) {
    log::error("handler threw a non-exception", {{"route", route.name}});
  }
  if (m_awaiting == seq) complete(seq, error_response(500, "internal", "internal error; the server log has details"));
}

void Session::complete(std::uint64_t seq, Response&& r) {
  if (seq != m_awaiting) {
    log::warn("reply ignored: Reply was called twice for one request", {{"remote", m_remote}});
    return;
  }
  m_awaiting = 0;
  if (m_phase != Phase::handling) return;  // the connection was force-closed meanwhile
  send(std::move(r));
}

void Session::send_error(int status, std::string_view code, std::string_view message, bool close_after) {
  Response r = error_response(status, code, message);
  if (close_after) r.keep_alive = false;
  if (!m_counted) m_started = Clock::now();  // failed before a request was complete
  send(std::move(r));
}

void Session::send(Response&& r) {
  if (!m_stats) m_stats = &m_server->unmatched_stats();
  // RFC 9110 15.5.2: a 401 must say how to authenticate. Added here, once, so that no
  // route's answer can lack it.
  if (r.status == 401 && std::none_of(r.headers.begin(), r.headers.end(),
                                      [](const auto& h) { return beast::iequals(h.first, "WWW-Authenticate"); })) {
    std::string challenge = "Bearer realm=\"" + m_server->options.auth_realm + "\"";
    if (m_sent_bearer) challenge += ", error=\"invalid_token\"";
    r.headers.emplace_back("WWW-Authenticate", std::move(challenge));
  }
  m_stats->record(r.status, Clock::now() - m_started);
  // A 5xx is the server's fault and must be explainable from the log alone.
  if (r.status >= 500)
    log::error("request failed", {{"route", m_stats->route()},
                                  {"status", r.status},
                                  {"remote", m_remote},
                                  {"body", r.events ? std::string() : r.body.substr(0, 1024)}});
  if (m_server->options.log_requests)
    log::debug("request", {{"route", m_stats->route()}, {"status", r.status}, {"remote", m_remote}});
  m_response = std::move(r);
  if (m_response.events && m_response.status == 200) return start_stream();

  m_keep_alive = m_keep_alive && m_response.keep_alive && !m_stopping && !m_server->stop_signal->stopping();
  serialize_head(m_response, m_keep_alive, false);
  std::array<net::const_buffer, 2> bufs{net::buffer(m_head),
                                        m_head_request ? net::const_buffer{} : net::buffer(m_response.body)};
  m_phase = Phase::writing;
  set_deadline(m_server->options.write_timeout);
  net::async_write(m_stream, bufs,
                   [self = shared_from_this()](beast::error_code ec, std::size_t n) { self->on_write(ec, n); });
}

void Session::serialize_head(const Response& r, bool keep_alive, bool streaming) {
  auto append_int = [this](std::uint64_t v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    m_head.append(buf, res.ptr);
  };
  m_head.clear();
  m_head += "HTTP/1.1 ";
  append_int(static_cast<std::uint64_t>(r.status));
  m_head.push_back(' ');
  m_head += bhttp::obsolete_reason(bhttp::int_to_status(static_cast<unsigned>(r.status)));
  m_head += "\r\nServer: kport\r\n";
  if (!r.content_type.empty() && r.content_type.find_first_of("\r\n") == std::string::npos) {
    m_head += "Content-Type: ";
    m_head += r.content_type;
    m_head += "\r\n";
  }
  if (!streaming) {
    m_head += "Content-Length: ";
    append_int(r.body.size());
    m_head += "\r\n";
  }
  for (const auto& [name, value] : r.headers) {
    // Handlers must not split the response or contradict the framing we write.
    if (name.empty() || name.find_first_of("\r\n: ") != std::string::npos ||
        value.find_first_of("\r\n") != std::string::npos || beast::iequals(name, "Content-Length") ||
        beast::iequals(name, "Transfer-Encoding") || beast::iequals(name, "Connection")) {
      log::warn("response header dropped", {{"name", printable_name(name)}});
      continue;
    }
    m_head += name;
    m_head += ": ";
    m_head += value;
    m_head += "\r\n";
  }
  if (!keep_alive)
    m_head += "Connection: close\r\n";
  else if (m_http10)
    m_head += "Connection: keep-alive\r\n";
  m_head += "\r\n";
}

void Session::on_write(beast::error_code ec, std::size_t) {
  clear_deadline();
  if (m_counted) {
    m_counted = false;
    m_server->in_flight.fetch_sub(1, std::memory_order_relaxed);
  }
  m_response.body = std::string();
  m_response.headers.clear();
  m_response.events.reset();  // a stream refused with a non-200 status must not linger
  if (ec) return close();
  if (!m_keep_alive) return linger();
  wait_request();
}

// Closing right after an early answer (413, 400) while the client still sends its body
// makes the kernel reset the connection, and the client may never read our answer. So
// half-close and discard input until the client closes too, or a short deadline.
void Session::linger() {
  beast::error_code ignored;
  m_socket.shutdown(tcp::socket::shutdown_send, ignored);
  m_phase = Phase::lingering;
  set_deadline(std::chrono::milliseconds{1000});
  discard_input();
}

void Session::discard_input() {
  m_stream.async_read_some(net::buffer(m_discard), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (self->m_phase != Phase::lingering && self->m_phase != Phase::streaming) return;
    if (ec) return self->close();
    self->discard_input();
  });
}

}  // namespace kport::http
