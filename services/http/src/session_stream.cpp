// The event-stream half of Session: after the head, the connection carries only frames
// from one Subscription, written in batches, with a heartbeat comment when idle.

#include "session.h"

namespace kport::http {
namespace {

const EventFrame& heartbeat_frame() {
  static const EventFrame k_frame = std::make_shared<const std::string>(": ping\n\n");
  return k_frame;
}

}  // namespace

void Session::start_stream() {
  if (m_counted) {  // a stream is not an in-flight request: stop() closes it at once
    m_counted = false;
    m_server->in_flight.fetch_sub(1, std::memory_order_relaxed);
  }
  if (m_stopping || m_server->stop_signal->stopping()) return close();
  m_phase = Phase::streaming;
  if (m_response.content_type == "application/json") m_response.content_type = "text/event-stream";
  bool has_cache_control = false;
  for (const auto& h : m_response.headers)
    if (beast::iequals(h.first, "Cache-Control")) has_cache_control = true;
  if (!has_cache_control) m_response.headers.emplace_back("Cache-Control", "no-cache");
  // The body of a stream ends when the connection does, so it cannot be kept alive.
  serialize_head(m_response, false, true);
  m_head += m_response.body;

  std::weak_ptr<Session> weak = weak_from_this();
  m_response.events->set_notify([weak] {
    auto self = weak.lock();
    if (!self || self->m_pump_posted.exchange(true)) return;
    net::post(self->m_socket.get_executor(), [self] {
      self->m_pump_posted.store(false);
      self->pump_events();
    });
  });
  m_stream_writing = true;
  set_deadline(m_server->options.write_timeout);
  net::async_write(m_stream, net::buffer(m_head),
                   [self = shared_from_this()](beast::error_code ec, std::size_t n) { self->on_stream_write(ec, n); });
  discard_input();  // notices the client going away
}

void Session::pump_events() {
  if (m_phase != Phase::streaming || m_stream_writing) return;
  m_frames.clear();
  if (!m_response.events->drain(m_frames)) return close();
  if (m_frames.empty()) {
    if (m_deadline.load(std::memory_order_relaxed) != INT64_MAX) return;
    m_frames.push_back(heartbeat_frame());  // on_timeout cleared the deadline: idle
  }
  m_out.clear();
  for (const auto& f : m_frames) m_out.push_back(net::buffer(*f));
  m_stream_writing = true;
  set_deadline(m_server->options.write_timeout);
  net::async_write(m_stream, m_out,
                   [self = shared_from_this()](beast::error_code ec, std::size_t n) { self->on_stream_write(ec, n); });
}

void Session::on_stream_write(beast::error_code ec, std::size_t) {
  m_stream_writing = false;
  m_frames.clear();
  if (ec || m_phase != Phase::streaming) return close();
  set_deadline(m_server->options.sse_heartbeat);
  pump_events();
}

}  // namespace kport::http
