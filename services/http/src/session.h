// Private: one client connection. All of its state is touched only on its strand;
// the deadline and the timeout flag are atomics because the server's sweeper reads them.
// On an HTTPS server a connection first tells a TLS handshake from plain HTTP by its first
// byte, then handshakes (session_tls.cpp) before its first request is read.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kport/http/events.h"
#include "kport/http/message.h"
#include "server_impl.h"

namespace kport::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

// The bytes of a connection: the TCP socket itself, or TLS over it once the handshake is
// done. An asynchronous read and write stream, so net::async_write takes it as it took
// the socket; only the socket is ever shut down or closed.
class SessionStream {
 public:
  using executor_type = tcp::socket::executor_type;
  explicit SessionStream(tcp::socket& socket) : m_socket(socket) {}
  executor_type get_executor() { return m_socket.get_executor(); }
  void secure(ssl::stream<tcp::socket&>* tls) { m_tls = tls; }

  template <class Buffers, class Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    if (m_tls)
      m_tls->async_read_some(buffers, std::forward<Handler>(handler));
    else
      m_socket.async_read_some(buffers, std::forward<Handler>(handler));
  }
  template <class Buffers, class Handler>
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    if (m_tls)
      m_tls->async_write_some(buffers, std::forward<Handler>(handler));
    else
      m_socket.async_write_some(buffers, std::forward<Handler>(handler));
  }

 private:
  tcp::socket& m_socket;
  ssl::stream<tcp::socket&>* m_tls = nullptr;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `reserved`: admitted into the reserve (see ServerOptions): its first request must come
  // within reserve_timeout and be privileged.
  Session(std::shared_ptr<Server::Impl> server, tcp::socket socket, bool reserved);
  ~Session();
  void start();

  // Called by the server (from any thread); each posts onto the strand.
  void post_stop();     // graceful: finish the request in progress, then close
  void post_close();    // forced
  void post_timeout();  // the sweeper saw the deadline pass
  std::int64_t deadline_ns() const noexcept { return m_deadline.load(std::memory_order_relaxed); }
  std::atomic<bool> timeout_posted{false};
  bool reserved() const noexcept { return m_reserved; }
  const net::ip::address& address() const noexcept { return m_address; }
  // True once the client sent any byte; read by the accept thread for eviction.
  bool spoke() const noexcept { return m_spoke.load(std::memory_order_relaxed); }

 private:
  enum class Phase { idle, reading, handling, writing, streaming, lingering, closing };

  // HTTPS (session_tls.cpp): the first bytes, then the handshake.
  void start_tls();
  void on_first_bytes(beast::error_code ec, std::size_t n);
  void on_handshake(beast::error_code ec);

  // Reading (session.cpp).
  void wait_request();
  void read_more();
  void on_read(beast::error_code ec, std::size_t n);
  void parse_buffered();
  void on_header_done();
  void on_read_error(beast::error_code ec);
  void on_request();
  void dispatch(Request& req);
  void run_async(const Route& route, Request&& req);
  void on_timeout();
  void close();
  void set_deadline(std::chrono::milliseconds d);
  void clear_deadline();

  // Writing and event streams (session_send.cpp).
  friend struct ReplyFn;
  void complete(std::uint64_t seq, Response&& r);
  void send(Response&& r);
  void send_error(int status, std::string_view code, std::string_view message, bool close_after);
  void serialize_head(const Response& r, bool keep_alive, bool streaming);
  void on_write(beast::error_code ec, std::size_t n);
  void linger();
  void discard_input();  // reads and drops input until error (lingering, event streams)
  void start_stream();
  void pump_events();
  void on_stream_write(beast::error_code ec, std::size_t n);

  std::shared_ptr<Server::Impl> m_server;
  tcp::socket m_socket;
  std::unique_ptr<ssl::stream<tcp::socket&>> m_tls;  // HTTPS, once the first bytes were a ClientHello
  SessionStream m_stream{m_socket};                  // what requests and answers go through
  beast::flat_buffer m_buf;
  std::optional<bhttp::request_parser<bhttp::string_body>> m_parser;
  std::string m_remote;
  net::ip::address m_address;
  const bool m_reserved;
  std::atomic<bool> m_spoke{false};
  std::string m_head;   // serialized status line and headers, reused
  Response m_response;  // the response being written (owns the body)
  Phase m_phase = Phase::idle;
  bool m_header_checked = false;
  bool m_head_request = false;
  bool m_keep_alive = true;
  bool m_http10 = false;
  bool m_sent_bearer = false;  // the request being answered has "Authorization: Bearer ..."
  bool m_stopping = false;
  bool m_timed_out = false;
  bool m_counted = false;        // this request is counted in Impl::in_flight
  std::uint64_t m_seq = 0;       // id of the latest request
  std::uint64_t m_awaiting = 0;  // id of the request whose reply is due, 0 when none
  RouteStats* m_stats = nullptr;
  Clock::time_point m_started;
  std::atomic<std::int64_t> m_deadline{INT64_MAX};

  // Event stream state.
  std::vector<EventFrame> m_frames;
  std::vector<net::const_buffer> m_out;
  std::atomic<bool> m_pump_posted{false};
  bool m_stream_writing = false;
  std::array<char, 256> m_discard{};
};

}  // namespace kport::http
