#include "session.h"

#include <exception>

#include "kport/common/log.h"
#include "kport/http/stop_signal.h"
#include "kport/http/uri.h"

namespace kport::http {
namespace {

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Echoing request bytes into a JSON message must not produce invalid UTF-8.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 200)) {
    auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : '?');
  }
  return out;
}

}  // namespace

Session::Session(std::shared_ptr<Server::Impl> server, tcp::socket socket, bool reserved)
    : m_server(std::move(server)), m_socket(std::move(socket)), m_reserved(reserved) {
  beast::error_code ec;
  auto ep = m_socket.remote_endpoint(ec);
  if (!ec) {
    m_address = ep.address();
    m_remote = ep.address().to_string() + ":" + std::to_string(ep.port());
  }
}

Session::~Session() { m_server->remove_session(this); }

void Session::start() {
  m_server->add_session(shared_from_this());
  // A fresh connection has not earned keep-alive: its whole first request must arrive
  // within the first-request deadline (shorter still in the reserve), and that deadline
  // is not extended when its first bytes come (see on_read), so a client that trickles
  // bytes is closed as surely as one that sends none.
  m_phase = Phase::idle;
  m_parser.emplace();
  m_parser->body_limit(m_server->options.body_limit);
  m_parser->header_limit(static_cast<std::uint32_t>(m_server->options.header_limit));
  m_parser->eager(true);
  const auto& o = m_server->options;
  set_deadline(std::min(o.read_timeout, m_reserved ? o.reserve_timeout : o.first_request_timeout));
  if (m_server->tls) return start_tls();  // the handshake counts against the same deadline
  read_more();
}

void Session::set_deadline(std::chrono::milliseconds d) {
  m_deadline.store(now_ns() + std::chrono::nanoseconds(d).count(), std::memory_order_relaxed);
}

void Session::clear_deadline() { m_deadline.store(INT64_MAX, std::memory_order_relaxed); }

void Session::wait_request() {
  if (m_stopping) return close();
  m_parser.emplace();
  m_parser->body_limit(m_server->options.body_limit);
  m_parser->header_limit(static_cast<std::uint32_t>(m_server->options.header_limit));
  m_parser->eager(true);
  m_header_checked = false;
  m_head_request = false;
  m_stats = nullptr;
  if (m_buf.size() > 0) {  // a pipelined request is already here
    m_phase = Phase::reading;
    set_deadline(m_server->options.read_timeout);
    return parse_buffered();
  }
  m_phase = Phase::idle;
  set_deadline(m_server->options.idle_timeout);
  read_more();
}

void Session::read_more() {
  if (m_timed_out) return on_read_error(net::error::operation_aborted);
  m_stream.async_read_some(m_buf.prepare(8192),
                           [self = shared_from_this()](beast::error_code ec, std::size_t n) { self->on_read(ec, n); });
}

void Session::on_read(beast::error_code ec, std::size_t n) {
  if (ec) return on_read_error(ec);
  m_buf.commit(n);
  m_spoke.store(true, std::memory_order_relaxed);
  if (m_phase == Phase::idle) {
    m_phase = Phase::reading;
    if (m_seq > 0) set_deadline(m_server->options.read_timeout);
  }
  parse_buffered();
}

// Feeds buffered bytes to the parser without another trip through the reactor: with
// keep-alive, the whole next request usually arrived in one read.
void Session::parse_buffered() {
  while (m_buf.size() > 0 && !m_parser->is_done()) {
    beast::error_code ec;
    std::size_t used = m_parser->put(m_buf.data(), ec);
    m_buf.consume(used);
    if (ec && ec != bhttp::error::need_more) return on_read_error(ec);
    if (m_parser->is_header_done() && !m_header_checked) on_header_done();
    if (ec == bhttp::error::need_more || used == 0) break;
  }
  if (m_parser->is_done()) return on_request();
  if (m_parser->is_header_done() && m_parser->get()[bhttp::field::expect] == "100-continue" && m_buf.size() == 0 &&
      !m_parser->get().body().size()) {
    static constexpr std::string_view k_continue = "HTTP/1.1 100 Continue\r\n\r\n";
    // Clear the header so the interim response goes out once.
    m_parser->get().erase(bhttp::field::expect);
    net::async_write(m_stream, net::buffer(k_continue.data(), k_continue.size()),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return self->close();
                       self->read_more();
                     });
    return;
  }
  read_more();
}

void Session::on_header_done() {
  m_header_checked = true;
  m_head_request = m_parser->get().method() == bhttp::verb::head;
}

void Session::on_read_error(beast::error_code ec) {
  if (m_phase == Phase::closing) return;
  const auto& opt = m_server->options;
  if (m_timed_out && m_phase == Phase::reading) {
    auto limit = m_seq > 0 ? opt.read_timeout
                           : std::min(opt.read_timeout, m_reserved ? opt.reserve_timeout : opt.first_request_timeout);
    return send_error(408, "request_timeout",
                      "the request was not received within " + std::to_string(limit.count()) + " ms; send it faster",
                      true);
  }
  if (ec == bhttp::error::body_limit)
    return send_error(413, "payload_too_large",
                      "request body exceeds the limit of " + std::to_string(opt.body_limit) + " bytes", true);
  if (ec == bhttp::error::header_limit)
    return send_error(431, "payload_too_large",
                      "request headers exceed the limit of " + std::to_string(opt.header_limit) + " bytes", true);
  // Any other parser error is the client's malformed request; socket errors and a peer
  // that hung up mid-request just end the connection.
  const auto& http_errors = bhttp::make_error_code(bhttp::error::bad_target).category();
  if (ec.category() == http_errors && ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message)
    return send_error(400, "invalid_argument", "malformed HTTP request: " + ec.message(), true);
  close();
}

void Session::on_request() {
  clear_deadline();
  m_phase = Phase::handling;
  m_started = Clock::now();
  m_counted = true;
  m_server->in_flight.fetch_add(1, std::memory_order_relaxed);
  // release() hands over the parsed message, so the body moves into the Request uncopied.
  auto msg = m_parser->release();
  m_keep_alive = msg.keep_alive();
  m_http10 = msg.version() == 10;
  // RFC 9112 section 3.2: a server must answer 400 to an HTTP/1.1 request without Host.
  if (msg.version() == 11 && msg.find(bhttp::field::host) == msg.end()) {
    m_keep_alive = false;
    return send_error(400, "invalid_argument", "HTTP/1.1 request without a Host header", true);
  }

  m_sent_bearer = false;
  if (auto auth = msg.find(bhttp::field::authorization); auth != msg.end())
    m_sent_bearer = auth->value().size() > 7 && beast::iequals(auth->value().substr(0, 7), "Bearer ");

  Request req;
  req.method = msg.method_string();
  req.target = msg.target();
  req.headers.reserve(8);
  for (const auto& f : msg) req.headers.emplace_back(f.name_string(), f.value());
  req.body = std::move(msg.body());
  req.remote = m_remote;
  req.keep_alive = m_keep_alive;
  req.stop = m_server->stop_signal;
  ++m_seq;  // names this request for its Reply (see ReplyFn)
  if (m_reserved && m_seq == 1 && !m_server->privileged_path(req.target.substr(0, req.target.find('?'))) &&
      !m_server->authorized(req.header("Authorization"))) {
    m_server->metrics.connections_unprivileged.fetch_add(1, std::memory_order_relaxed);
    return send_error(503, "unavailable",
                      "too many connections (from " + m_address.to_string() +
                          " or in all); only authorized requests and health checks are served "
                          "now; close idle connections and retry",
                      true);
  }
  dispatch(req);
}

void Session::dispatch(Request& req) {
  std::string_view target = req.target;
  std::size_t q = target.find('?');
  std::string_view raw_path = target.substr(0, q);
  Match m = m_server->router->match(req.method, raw_path, req.params);
  if (m.kind != Match::Kind::found) {
    m_stats = &m_server->unmatched_stats();
    if (m.kind == Match::Kind::not_found)
      return send_error(404, "not_found", "no route for " + printable(req.method) + " " + printable(raw_path), false);
    if (m.kind == Match::Kind::bad_parameter) return send_error(400, "invalid_argument", m.error, false);
    Response r = error_response(
        405, "method_not_allowed",
        "method " + printable(req.method) + " is not allowed on " + printable(raw_path) + "; allowed: " + m.allow);
    r.headers.emplace_back("Allow", std::move(m.allow));
    return send(std::move(r));
  }
  // Matching ran on the raw path so an encoded '/' stays inside its parameter; the
  // decoded copy is for handlers.
  const Route& route = *m.route;
  m_stats = &m_server->stats_for(&route);
  req.route = route.name;
  auto path = percent_decode(raw_path);
  if (!path) return send_error(400, "invalid_argument", "request path: " + path.error().message, false);
  req.path = std::move(*path);
  if (q != std::string_view::npos) {
    auto query = parse_query(target.substr(q + 1));
    if (!query) return send_error(400, "invalid_argument", query.error().message, false);
    req.query = std::move(*query);
  }
  if (!route.sync_handler) return run_async(route, std::move(req));

  // The response is built inside the try and sent outside it, so a failure while sending
  // can never turn into a second answer.
  std::optional<Response> r;
  try {
    r.emplace(route.sync_handler(req));
  } catch (const std::exception& e) {
    log::error("handler threw", {{"route", route.name}, {"what", e.what()}});
  } catch (...) {
    log::error("handler threw a non-exception", {{"route", route.name}});
  }
  if (!r) return send_error(500, "internal", "internal error; the server log has details", false);
  send(std::move(*r));
}

void Session::on_timeout() {
  if (m_deadline.load(std::memory_order_relaxed) > now_ns()) return;  // moved meanwhile
  clear_deadline();
  switch (m_phase) {
    case Phase::idle: return close();
    case Phase::reading:
      m_timed_out = true;
      m_socket.cancel();
      return;
    case Phase::writing:
    case Phase::lingering: return close();
    case Phase::streaming:
      if (m_stream_writing) return close();
      return pump_events();  // pump sends a heartbeat when nothing is queued
    case Phase::handling:
    case Phase::closing: return;
  }
}

void Session::post_stop() {
  net::post(m_socket.get_executor(), [self = shared_from_this()] {
    self->m_stopping = true;
    if (self->m_phase == Phase::idle || self->m_phase == Phase::streaming) self->close();
  });
}

void Session::post_close() {
  net::post(m_socket.get_executor(), [self = shared_from_this()] { self->close(); });
}

void Session::post_timeout() {
  net::post(m_socket.get_executor(), [self = shared_from_this()] {
    self->timeout_posted.store(false);
    self->on_timeout();
  });
}

void Session::close() {
  if (m_phase == Phase::closing) return;
  m_phase = Phase::closing;
  clear_deadline();
  beast::error_code ec;
  m_socket.shutdown(tcp::socket::shutdown_both, ec);
  m_socket.close(ec);
  if (m_counted) {
    m_counted = false;
    m_server->in_flight.fetch_sub(1, std::memory_order_relaxed);
  }
  if (m_response.events) m_response.events->close();
  m_server->remove_session(this);
}

}  // namespace kport::http
