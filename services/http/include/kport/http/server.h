// Server: a multi-threaded HTTP/1.1 server (Boost.Beast) that dispatches to a Router.
//
// Behaviour every kport service relies on:
//  - keep-alive and pipelining; `Server: kport` and Content-Length on every response;
//  - 404 / 405 (with Allow) / 413 (before the body is read) / 400 (malformed, then close)
//    / 408 (headers or body not received within read_timeout, then close), all as
//    {"error":{"code":..,"message":..}};
//  - a handler's exception becomes a JSON 500 and is logged;
//  - a path parameter or query value that is not UTF-8 or holds NUL is a 400;
//  - graceful stop in two phases (see stop());
//  - HTTPS when ServerOptions names a certificate and key: every connection then starts
//    with a TLS handshake, bounded by the first-request deadline like the request after
//    it; a handshake that fails ends that connection alone, and a connection that sends
//    plain HTTP instead gets a 400 that says to use https://, then is closed.
//
// Thread-safety: start() and stop() from one controlling thread, never from a handler
// (stop() joins the I/O threads); port(), metrics(), stop_signal() and running() from
// any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <string>
#include <vector>

#include "kport/common/result.h"
#include "kport/http/metrics.h"
#include "kport/http/router.h"
#include "kport/http/stop_signal.h"

namespace kport::http {

struct ServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  // 0 picks a free port; see Server::port()
  // I/O threads, each with its own event loop; a connection stays on one thread, so a
  // handler that blocks stalls every connection of that thread. Run blocking work
  // elsewhere and Reply later.
  int threads = 4;
  std::size_t body_limit = 8u << 20;                // bytes; larger bodies get 413
  std::size_t header_limit = 16u << 10;             // bytes; larger header blocks get 431
  std::chrono::milliseconds read_timeout{30'000};   // to receive one request once begun
  std::chrono::milliseconds idle_timeout{60'000};   // between keep-alive requests
  std::chrono::milliseconds write_timeout{30'000};  // to send one response
  std::chrono::milliseconds sse_heartbeat{15'000};  // comment line on idle event streams
  std::size_t max_connections = 10'000;             // beyond this new connections get 503 and close
  // Fairness. A connection must send its first request within first_request_timeout.
  // One client address holds at most max_connections_per_address ordinary connections,
  // and all addresses together at most max_connections - reserved_connections. Past
  // either limit a connection is taken into the reserve: it must send its first request
  // within reserve_timeout and that request must be privileged (a path in
  // privileged_paths, or an Authorization header that `authorized` accepts), else it
  // gets 503 and is closed. When the
  // reserve (at most half of max_connections) is full, its oldest connection that has sent nothing yet is closed to make
  // room, so idle connections can never keep runners and health checks out.
  std::size_t max_connections_per_address = 256;
  std::size_t reserved_connections = 1'000;
  std::chrono::milliseconds first_request_timeout{5'000};
  std::chrono::milliseconds reserve_timeout{1'000};
  std::vector<std::string> privileged_paths{"/healthz", "/readyz"};
  // Whether a reserve connection's Authorization header value earns it the reserve.
  // Called on an I/O thread, so it must answer from memory (never a database or the
  // network); empty: any Authorization header does.
  std::function<bool(std::string_view authorization)> authorized;
  bool log_requests = false;  // one debug line per request
  // Every 401 answer carries `WWW-Authenticate: Bearer realm="<auth_realm>"` (RFC 6750),
  // with `error="invalid_token"` when the request sent a Bearer token (so it was wrong),
  // unless the handler set that header itself.
  std::string auth_realm = "kport";
  // HTTPS: a PEM certificate (chain, leaf first) and its PEM private key. Both or
  // neither; neither serves plain HTTP. start() fails (invalid_argument, naming the file)
  // when one cannot be read, is not PEM, or the key does not belong to the certificate.
  // TLS 1.2 and later.
  std::string tls_cert_file;
  std::string tls_key_file;
};

class Server {
 public:
  Server(ServerOptions options, std::shared_ptr<const Router> router);
  ~Server();  // stops with a zero drain if still running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts the I/O threads. Errors: unavailable when the address is in use or
  // cannot be bound (the message names it), invalid_argument for a bad host or a TLS
  // certificate or key that cannot be used (the message names the file).
  Status start();
  // The bound port (the chosen one when options.port was 0); 0 before start().
  std::uint16_t port() const noexcept;
  bool running() const noexcept;
  // Whether connections speak TLS (a certificate and key were given): "https" or "http".
  const char* scheme() const noexcept;

  // Two-phase stop: (1) stop accepting, trigger stop_signal() so long-poll handlers reply
  // early, close idle keep-alive connections and event streams; (2) wait up to `drain`
  // for in-flight requests to finish, then force-close the rest and join the threads.
  // Idempotent; blocks until the threads are joined.
  void stop(std::chrono::milliseconds drain = std::chrono::milliseconds{5000});

  Metrics& metrics() noexcept;
  const std::shared_ptr<StopSignal>& stop_signal() const noexcept;
  // Requests currently being handled (read complete, response not yet written).
  std::size_t in_flight() const noexcept;

  class Impl;

 private:
  std::shared_ptr<Impl> m_impl;
};

}  // namespace kport::http
