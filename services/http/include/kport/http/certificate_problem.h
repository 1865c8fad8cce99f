// What a client tells its user when a server's TLS certificate is refused: what failed
// and what to do about it. Pure; the client (client.cpp) classifies OpenSSL's verdict.
#pragma once

#include <string>
#include <string_view>

namespace kport::http {

enum class CertificateProblem {
  unknown_ca,     // the chain does not end at a CA the client trusts
  expired,        // a certificate of the chain is past its notAfter
  not_yet_valid,  // ... or before its notBefore
  wrong_host,     // the certificate does not name the host the URL names
  other,          // any other verification failure (revoked, bad signature, ...)
};

// One sentence for "the TLS certificate of <where> ...": the problem, OpenSSL's `detail`
// when it adds something, and the remedy. `ca_file` is the client's --ca-file ("" when it
// trusts the system store), named so the user knows which trust was applied.
std::string describe_certificate_problem(CertificateProblem problem, std::string_view where, std::string_view host,
                                         std::string_view ca_file, std::string_view detail);

}  // namespace kport::http
