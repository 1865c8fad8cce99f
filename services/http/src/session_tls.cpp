// The HTTPS start of a Session. The first-request deadline set in start() covers the
// handshake too, so a client that stalls mid-handshake is closed by the sweeper like one
// that never sends its request; a failed handshake ends this connection alone.

#include "kport/common/log.h"
#include "session.h"

namespace kport::http {
namespace {

// Every TLS connection opens with a handshake record (RFC 8446 5.1: content type 22).
// Anything else is a client speaking another protocol, most likely plain HTTP.
constexpr unsigned char k_tls_handshake_record = 0x16;

}  // namespace

void Session::start_tls() {
  // Read the first bytes off the bare socket: they decide between a handshake and a
  // plain-HTTP answer. Handshake bytes are not "speaking" for the reserve's eviction.
  m_socket.async_read_some(m_buf.prepare(8192), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
    self->on_first_bytes(ec, n);
  });
}

void Session::on_first_bytes(beast::error_code ec, std::size_t n) {
  if (ec || n == 0) return close();
  m_buf.commit(n);
  const auto* bytes = static_cast<const unsigned char*>(m_buf.data().data());
  if (bytes[0] != k_tls_handshake_record) {
    // A plain request to the HTTPS port: answer in plain text why, then close. The
    // answer goes out through m_stream, which is still the bare socket.
    m_server->metrics.tls_plain_requests.fetch_add(1, std::memory_order_relaxed);
    m_spoke.store(true, std::memory_order_relaxed);
    m_phase = Phase::reading;
    return send_error(
        400, "invalid_argument",
        "this port serves HTTPS; use an https:// URL (and --ca-file when its CA is not in the system store)", true);
  }
  m_tls = std::make_unique<ssl::stream<tcp::socket&>>(m_socket, *m_server->tls);
  // The bytes already read are the start of the ClientHello: the handshake takes them
  // as its first input. m_buf is left alone until it completes.
  m_tls->async_handshake(ssl::stream_base::server, m_buf.data(),
                         [self = shared_from_this()](beast::error_code e, std::size_t) { self->on_handshake(e); });
}

void Session::on_handshake(beast::error_code ec) {
  if (ec) {
    m_server->metrics.tls_handshakes_failed.fetch_add(1, std::memory_order_relaxed);
    if (m_phase != Phase::closing) log::debug("TLS handshake failed", {{"remote", m_remote}, {"error", ec.message()}});
    return close();
  }
  if (m_phase == Phase::closing) return;
  m_buf.consume(m_buf.size());
  m_stream.secure(m_tls.get());
  read_more();
}

}  // namespace kport::http
