// A blocking loopback socket for tests that must send bytes no well-behaved client would
// (malformed requests, half requests, pipelines) and read exactly what comes back.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace kport::http::test {

class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port) {
    m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    m_connected = ::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    set_timeout(std::chrono::milliseconds{5000});
  }
  ~RawSocket() {
    if (m_fd >= 0) ::close(m_fd);
  }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return m_connected; }
  void set_timeout(std::chrono::milliseconds t) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(t.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
    ::setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  bool send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(m_fd, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  // Reads until the peer closes, the timeout passes, or `until` appears.
  std::string read(std::string_view until = {}) {
    std::string out;
    char buf[4096];
    for (;;) {
      if (!until.empty() && out.find(until) != std::string::npos) return out;
      ssize_t n = ::recv(m_fd, buf, sizeof buf, 0);
      if (n <= 0) {
        m_peer_closed = n == 0;
        return out;
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  // True after read() saw the peer close the connection (not a timeout).
  bool peer_closed() const { return m_peer_closed; }

 private:
  int m_fd = -1;
  bool m_connected = false;
  bool m_peer_closed = false;
};

// Number of complete "HTTP/1.1 " status lines in a byte stream.
inline int count_responses(std::string_view s) {
  int n = 0;
  for (std::size_t p = s.find("HTTP/1.1 "); p != std::string_view::npos; p = s.find("HTTP/1.1 ", p + 1)) ++n;
  return n;
}

}  // namespace kport::http::test
