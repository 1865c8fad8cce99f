// A synchronous HTTP/1.1 client for runners, the CLI and tests, over http:// and https://.
//
// https verifies the server: its certificate must chain to a CA of ClientOptions::ca_file
// (else the system trust store) and name the URL's host (DNS name or IP address), and
// be valid now. A refused certificate is an unavailable Error that says what failed
// (unknown CA, wrong host name, expired) and what to do (e.g. pass --ca-file).
//
// Client keeps one keep-alive connection per (host, port) it last talked to and reuses
// it; a reused connection that the server closed meanwhile is reopened once,
// transparently, for idempotent methods and for requests that never reached the server.
// Not thread-safe: use one Client per thread. fetch() is a one-shot convenience.
//
// Errors: invalid_argument for a bad URL, unavailable when the connection fails,
// request_timeout when `timeout` passes, internal for a malformed response. An HTTP
// error status is not an Error: it is a ClientResponse with that status.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kport/common/result.h"
#include "kport/http/message.h"

namespace kport::http {

struct Url {
  std::string scheme = "http";
  std::string host;  // without brackets for IPv6
  std::uint16_t port = 80;
  std::string target = "/";  // path and query, as given ("/a/b?x=1")
};
// Parses "http[s]://host[:port][/path][?query]" (port 80 for http, 443 for https; the
// scheme is kept lowercase). Other schemes and userinfo are rejected.
Result<Url> parse_url(std::string_view url);

struct ClientResponse {
  int status = 0;
  std::string body;
  HeaderList headers;
  // Case-insensitive; "" when absent.
  std::string_view header(std::string_view name) const noexcept;
  // Parses the body as JSON; bad_json when it is not.
  Result<boost::json::value> json() const;
};

struct ClientOptions {
  std::chrono::milliseconds timeout{30'000};  // default per request
  std::size_t body_limit = 256u << 20;        // bytes accepted in a response
  std::string user_agent = "kport";
  // https: the PEM CA certificate(s) a server's certificate must chain to; empty: the
  // system trust store. A file that cannot be read fails the first https request.
  std::string ca_file = "";
};

class Client {
 public:
  explicit Client(ClientOptions options = {});
  ~Client();
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;

  // Sends one request and reads the whole response. `timeout` of zero means the
  // options' default. Content-Type defaults to application/json when a body is given.
  Result<ClientResponse> fetch(std::string_view method, std::string_view url, std::string_view body = {},
                               const HeaderList& headers = {},
                               std::chrono::milliseconds timeout = std::chrono::milliseconds{0});
  // Closes the kept connection.
  void close();

 private:
  class Impl;
  std::unique_ptr<Impl> m_impl;
};

// One request on a fresh connection.
Result<ClientResponse> fetch(std::string_view method, std::string_view url, std::string_view body = {},
                             const HeaderList& headers = {},
                             std::chrono::milliseconds timeout = std::chrono::milliseconds{30'000});

}  // namespace kport::http
