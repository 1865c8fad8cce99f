// Private: the TLS contexts of the server and the client, over Boost.Asio's ssl.
#pragma once

#include <memory>
#include <string>

#include "asio.h"

#include "kport/common/result.h"
#include "kport/http/certificate_problem.h"

namespace kport::http {

namespace ssl = boost::asio::ssl;

// A server context holding `cert_file` (PEM chain, leaf first) and `key_file` (PEM),
// TLS 1.2 and later. invalid_argument naming the file that cannot be read or used, or
// both when the key does not belong to the certificate.
Result<std::unique_ptr<ssl::context>> make_server_tls(const std::string& cert_file, const std::string& key_file);

// A client context that verifies peers against `ca_file` (PEM, one or more CA
// certificates), or the system trust store when it is empty. invalid_argument naming a
// CA file that cannot be read.
Result<std::unique_ptr<ssl::context>> make_client_tls(const std::string& ca_file);

// What the client's certificate check found, filled by the verify callback that
// verify_peer() installs.
struct VerifyOutcome {
  bool failed = false;
  CertificateProblem problem = CertificateProblem::other;
  std::string detail;  // OpenSSL's words for it
};

// Verifies the chain (the context's trust) and that the leaf names `host` (a DNS name or
// an IP address), and sends `host` as SNI when it is a name. `out` must outlive the
// handshake.
void verify_peer(ssl::stream<boost::beast::tcp_stream&>& stream, const std::string& host, VerifyOutcome& out);

}  // namespace kport::http
