#include "kport/http/certificate_problem.h"

namespace kport::http {

std::string describe_certificate_problem(CertificateProblem problem, std::string_view where, std::string_view host,
                                         std::string_view ca_file, std::string_view detail) {
  std::string out = "TLS certificate of " + std::string(where) + " refused: ";
  const std::string trust =
      ca_file.empty() ? std::string("the system trust store") : "the CA file " + std::string(ca_file);
  switch (problem) {
    case CertificateProblem::unknown_ca:
      out += "it is not signed by a CA in " + trust;
      if (!detail.empty()) out += " (" + std::string(detail) + ")";
      out += ca_file.empty() ? "; pass --ca-file with the CA certificate (PEM) that signed the server's certificate"
                             : "; pass --ca-file with the CA certificate (PEM) that signed the server's certificate, "
                               "or ask the server's operator which CA that is";
      return out;
    case CertificateProblem::expired:
      out += "it has expired";
      if (!detail.empty()) out += " (" + std::string(detail) + ")";
      out += "; the server's operator must renew it (or this machine's clock is wrong)";
      return out;
    case CertificateProblem::not_yet_valid:
      out += "it is not valid yet";
      if (!detail.empty()) out += " (" + std::string(detail) + ")";
      out += "; check this machine's clock, or wait until the certificate's start date";
      return out;
    case CertificateProblem::wrong_host:
      out += "it is not issued for the host name '" + std::string(host) +
             "'; use a server URL with a name the certificate lists, or have the certificate reissued for '" +
             std::string(host) + "'";
      return out;
    case CertificateProblem::other: break;
  }
  out += detail.empty() ? std::string("verification failed") : std::string(detail);
  out += "; check the server's certificate chain (openssl s_client -connect " + std::string(where) + ")";
  return out;
}

}  // namespace kport::http
