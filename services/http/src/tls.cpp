// TLS contexts. OpenSSL is reached only through Asio's ssl, except for what Asio leaves
// to the native handle: the verdict of a certificate check (X509_STORE_CTX_get_error),
// SNI, and turning session tickets off.
#include "tls.h"

#include <fstream>

namespace kport::http {
namespace {

// Whether `path` can be opened for reading; names why not.
Status readable(const std::string& path, std::string_view what, std::string_view flag) {
  if (path.empty()) return make_error(Errc::invalid_argument, std::string(flag) + " names no file");
  std::ifstream in(path);
  if (!in)
    return make_error(Errc::invalid_argument, "cannot read the " + std::string(what) + " '" + path + "' (" +
                                                  std::string(flag) + "): no such file or not readable");
  return {};
}

std::string reason(const boost::system::error_code& ec) {
  // OpenSSL's messages read "error:0A00008B:SSL routines::...": the last part says it.
  std::string m = ec.message();
  if (auto colon = m.rfind("::"); colon != std::string::npos && colon + 2 < m.size()) return m.substr(colon + 2);
  return m;
}

}  // namespace

Result<std::unique_ptr<ssl::context>> make_server_tls(const std::string& cert_file, const std::string& key_file) {
  KPORT_TRY(readable(cert_file, "TLS certificate", "--tls-cert"));
  KPORT_TRY(readable(key_file, "TLS key", "--tls-key"));
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  // Clients never resume (a Client opens a fresh session per connection): tickets would
  // be bytes sent for nothing.
  SSL_CTX_set_num_tickets(ctx->native_handle(), 0);
  boost::system::error_code ec;
  if (ctx->use_certificate_chain_file(cert_file, ec); ec)
    return make_error(Errc::invalid_argument, "cannot use the TLS certificate '" + cert_file + "' (--tls-cert): " +
                                                  reason(ec) + "; it must hold a PEM certificate (chain, leaf first)");
  if (ctx->use_private_key_file(key_file, ssl::context::pem, ec); ec) {
    std::string why = reason(ec);
    if (why.find("mismatch") != std::string::npos)
      return make_error(Errc::invalid_argument,
                        "the TLS key '" + key_file + "' (--tls-key) does not belong to the certificate '" + cert_file +
                            "' (--tls-cert): " + why + "; give the key the certificate was issued for");
    return make_error(Errc::invalid_argument, "cannot use the TLS key '" + key_file + "' (--tls-key): " + why +
                                                  "; it must hold the certificate's private key in PEM, unencrypted");
  }
  return ctx;
}

Result<std::unique_ptr<ssl::context>> make_client_tls(const std::string& ca_file) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  ctx->set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  if (ca_file.empty()) {
    if (ctx->set_default_verify_paths(ec); ec)
      return make_error(Errc::unavailable, "cannot load the system's trusted CA certificates: " + reason(ec) +
                                               "; install ca-certificates or pass --ca-file");
    return ctx;
  }
  KPORT_TRY(readable(ca_file, "CA file", "--ca-file"));
  if (ctx->load_verify_file(ca_file, ec); ec)
    return make_error(Errc::invalid_argument, "cannot use the CA file '" + ca_file + "' (--ca-file): " + reason(ec) +
                                                  "; it must hold one or more PEM CA certificates");
  return ctx;
}

void verify_peer(ssl::stream<boost::beast::tcp_stream&>& stream, const std::string& host, VerifyOutcome& out) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  const bool is_address = !ec;
  // RFC 6066: SNI carries host names only, never an address literal.
  if (!is_address) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"  // the OpenSSL macro casts
    SSL_set_tlsext_host_name(stream.native_handle(), host.c_str());
#pragma GCC diagnostic pop
  }
  stream.set_verify_callback([host, &out](bool preverified, ssl::verify_context& vctx) {
    X509_STORE_CTX* store = vctx.native_handle();
    if (!preverified) {
      const int err = X509_STORE_CTX_get_error(store);
      if (!out.failed) {
        out.failed = true;
        out.detail = X509_verify_cert_error_string(err);
        switch (err) {
          case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
          case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
          case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
          case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
          case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
          case X509_V_ERR_CERT_UNTRUSTED: out.problem = CertificateProblem::unknown_ca; break;
          case X509_V_ERR_CERT_HAS_EXPIRED: out.problem = CertificateProblem::expired; break;
          case X509_V_ERR_CERT_NOT_YET_VALID: out.problem = CertificateProblem::not_yet_valid; break;
          default: out.problem = CertificateProblem::other; break;
        }
      }
      return false;
    }
    // The chain is good; the leaf (depth 0) must also name the host.
    if (X509_STORE_CTX_get_error_depth(store) > 0) return true;
    if (ssl::host_name_verification(host)(preverified, vctx)) return true;
    if (!out.failed) {
      out.failed = true;
      out.problem = CertificateProblem::wrong_host;
    }
    return false;
  });
}

}  // namespace kport::http
