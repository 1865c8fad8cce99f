#include "kport/http/client.h"

#include <sys/socket.h>

#include <cerrno>

#include "tls.h"

namespace kport::http {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

// Each blocking call runs asynchronous operations on a private io_context, because only
// the asynchronous operations of tcp_stream honour a deadline.
class Client::Impl {
 public:
  explicit Impl(ClientOptions o) : opts(std::move(o)) {}

  // Runs `op(stream, handler)` on the kept connection's stream: TLS over the TCP stream
  // for https, the TCP stream itself for http.
  template <typename Op>
  beast::error_code io(Clock::time_point deadline, Op&& op) {
    return run(deadline, [&](auto handler) {
      if (tls)
        op(*tls, handler);
      else
        op(stream, handler);
    });
  }

  template <typename Start>
  beast::error_code run(Clock::time_point deadline, Start&& start) {
    beast::error_code result = net::error::would_block;
    stream.expires_at(deadline);
    start([&result](beast::error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  Status connect(const Url& url, Clock::time_point deadline) {
    close();
    tcp::resolver resolver(ioc);
    beast::error_code ec;
    tcp::resolver::results_type endpoints;
    resolver.async_resolve(url.host, std::to_string(url.port), [&](beast::error_code e, tcp::resolver::results_type r) {
      ec = e;
      endpoints = std::move(r);
    });
    ioc.restart();
    ioc.run();
    if (ec) return make_error(Errc::unavailable, "cannot resolve " + url.host + ": " + ec.message());
    ec = run(deadline, [&](auto handler) { stream.async_connect(endpoints, handler); });
    const std::string where = url.host + ":" + std::to_string(url.port);
    if (ec == beast::error::timeout) return make_error(Errc::request_timeout, "connecting to " + where + " timed out");
    if (ec) return make_error(Errc::unavailable, "cannot connect to " + where + ": " + ec.message());
    beast::error_code ignored;
    stream.socket().set_option(tcp::no_delay(true), ignored);
    if (url.scheme == "https") KPORT_TRY(handshake(url, where, deadline));
    host = url.host;
    port = url.port;
    scheme = url.scheme;
    connected = true;
    buffer.clear();
    return {};
  }

  // TLS on the connected stream: the server's certificate must chain to the trusted CAs
  // (opts.ca_file, else the system store) and name the URL's host.
  Status handshake(const Url& url, const std::string& where, Clock::time_point deadline) {
    if (!tls_context) {
      auto ctx = make_client_tls(opts.ca_file);
      if (!ctx) {
        close();
        return std::move(ctx).error();
      }
      tls_context = std::move(*ctx);
    }
    tls = std::make_unique<ssl::stream<beast::tcp_stream&>>(stream, *tls_context);
    VerifyOutcome verdict;
    verify_peer(*tls, url.host, verdict);
    auto ec = run(deadline, [&](auto handler) { tls->async_handshake(ssl::stream_base::client, handler); });
    if (!ec) return {};
    close();
    if (verdict.failed)
      return make_error(Errc::unavailable,
                        describe_certificate_problem(verdict.problem, where, url.host, opts.ca_file, verdict.detail));
    if (ec == beast::error::timeout)
      return make_error(Errc::request_timeout, "TLS handshake with " + where + " timed out");
    return make_error(Errc::unavailable,
                      "TLS handshake with " + where + " failed: " + ec.message() +
                          "; check that the server serves HTTPS there (an http:// URL for a plain server)");
  }

  // Whether the kept connection is unusable: the server closed it while it sat idle (its
  // FIN is already here) or sent bytes nobody asked for. Checked before reuse, so even a
  // POST, which is never retried, does not fail on a connection that was already dead.
  bool stale() {
    char c = 0;
    ssize_t n = ::recv(stream.socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
  }

  // No TLS close_notify: every answer is framed by Content-Length, so the server loses
  // nothing, and a close never waits on the network.
  void close() {
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream.close();
    tls.reset();
    connected = false;
  }

  ClientOptions opts;
  net::io_context ioc;
  beast::tcp_stream stream{ioc};
  std::unique_ptr<ssl::context> tls_context;             // made at the first https URL, then kept
  std::unique_ptr<ssl::stream<beast::tcp_stream&>> tls;  // over `stream` while an https connection is open
  beast::flat_buffer buffer;
  std::string scheme;
  std::string host;
  std::uint16_t port = 0;
  bool connected = false;
};

namespace {

// Only these may be sent twice when a kept connection turns out to be dead mid-request.
bool idempotent(std::string_view m) {
  return m == "GET" || m == "HEAD" || m == "PUT" || m == "DELETE" || m == "OPTIONS";
}

}  // namespace

Client::Client(ClientOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {}
Client::~Client() = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

void Client::close() { m_impl->close(); }

Result<ClientResponse> Client::fetch(std::string_view method, std::string_view url_text, std::string_view body,
                                     const HeaderList& headers, std::chrono::milliseconds timeout) {
  auto url = parse_url(url_text);
  if (!url) return std::move(url).error();
  auto& im = *m_impl;
  const auto deadline = Clock::now() + (timeout.count() > 0 ? timeout : im.opts.timeout);

  bhttp::request<bhttp::string_body> req;
  req.method_string(method);
  req.target(url->target);
  req.version(11);
  req.set(bhttp::field::host, url->host + ":" + std::to_string(url->port));
  req.set(bhttp::field::user_agent, im.opts.user_agent);
  for (const auto& [name, value] : headers) req.set(name, value);
  if (!body.empty() && req[bhttp::field::content_type].empty()) req.set(bhttp::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();

  // At most two attempts: the second only when the first hit a connection that died idle.
  for (int attempt = 0;; ++attempt) {
    bool reused =
        im.connected && im.scheme == url->scheme && im.host == url->host && im.port == url->port && !im.stale();
    if (!reused) KPORT_TRY(im.connect(*url, deadline));
    auto ec = im.io(deadline, [&](auto& s, auto handler) { bhttp::async_write(s, req, handler); });
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(im.opts.body_limit);
    if (method == "HEAD") parser.skip(true);
    if (!ec) ec = im.io(deadline, [&](auto& s, auto handler) { bhttp::async_read(s, im.buffer, parser, handler); });
    if (ec) {
      im.close();
      // A kept connection the server closed while idle fails before any byte comes back.
      bool stale = reused && attempt == 0 && !parser.got_some() && ec != beast::error::timeout && idempotent(method);
      if (stale) continue;
      if (ec == beast::error::timeout)
        return make_error(Errc::request_timeout, std::string(method) + " " + std::string(url_text) + " timed out");
      if (ec == bhttp::error::body_limit)
        return make_error(Errc::payload_too_large,
                          "response from " + std::string(url_text) + " exceeds the client's body limit");
      if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category())
        return make_error(Errc::internal, "malformed response from " + std::string(url_text) + ": " + ec.message());
      return make_error(Errc::unavailable,
                        std::string(method) + " " + std::string(url_text) + " failed: " + ec.message());
    }
    auto msg = parser.release();
    ClientResponse out;
    out.status = static_cast<int>(msg.result_int());
    out.body = std::move(msg.body());
    for (const auto& f : msg) out.headers.emplace_back(f.name_string(), f.value());
    if (!msg.keep_alive()) im.close();
    return out;
  }
}

Result<ClientResponse> fetch(std::string_view method, std::string_view url, std::string_view body,
                             const HeaderList& headers, std::chrono::milliseconds timeout) {
  Client client;
  return client.fetch(method, url, body, headers, timeout);
}

}  // namespace kport::http
