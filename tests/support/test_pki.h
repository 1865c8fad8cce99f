// Test support: a throwaway PKI made at run time with the openssl command line, so TLS
// tests need no network and no checked-in keys. Header-only; shared by the http unit
// tests and the integration tests.
//
//   ca.pem / ca.key               the test CA (the one clients are told to trust)
//   stranger-ca.pem               another CA, trusted by nobody
//   server.pem / server.key       signed by ca, for 127.0.0.1, ::1 and localhost, valid now
//   expired.pem / expired.key     signed by ca, for the same names, expired in 2020
//   other-host.pem / other-host.key  signed by ca, valid now, for other-host.example only
//
// make_rsa_key writes a GitHub App's key pair the same way.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace kport::testing {

// Whether the openssl command line is on PATH (a test without it is skipped, not passed).
inline bool openssl_available() { return std::system("command -v openssl > /dev/null 2>&1") == 0; }

class TestPki {
 public:
  // Writes every file into `dir` (created). ok() says whether all went well; error()
  // names the step that did not.
  explicit TestPki(std::filesystem::path dir) : m_dir(std::move(dir)) {
    namespace fs = std::filesystem;
    fs::create_directories(m_dir / "newcerts");
    std::ofstream(m_dir / "index.txt").flush();
    std::ofstream(m_dir / "serial") << "1000\n";
    std::ofstream(m_dir / "ca.cnf") << "[ca]\ndefault_ca = test_ca\n"
                                       "[test_ca]\ndatabase = "
                                    << (m_dir / "index.txt").string()
                                    << "\n"
                                       "new_certs_dir = "
                                    << (m_dir / "newcerts").string()
                                    << "\n"
                                       "serial = "
                                    << (m_dir / "serial").string()
                                    << "\n"
                                       "default_md = sha256\npolicy = policy_any\nunique_subject = no\n"
                                       "[policy_any]\ncommonName = supplied\n"
                                       "[local]\nbasicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth\n"
                                       "subjectAltName = IP:127.0.0.1,IP:::1,DNS:localhost\n"
                                       "[other]\nbasicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth\n"
                                       "subjectAltName = DNS:other-host.example\n";
    m_ok = make_ca("ca", "kport test CA") && make_ca("stranger-ca", "kport stranger CA") &&
           make_leaf("server", "localhost", "local", "-days 2") &&
           make_leaf("expired", "localhost", "local", "-startdate 20200101000000Z -enddate 20200102000000Z") &&
           make_leaf("other-host", "other-host.example", "other", "-days 2");
  }

  bool ok() const { return m_ok; }
  const std::string& error() const { return m_error; }
  std::string file(const std::string& name) const { return (m_dir / name).string(); }
  std::string ca() const { return file("ca.pem"); }
  std::string stranger_ca() const { return file("stranger-ca.pem"); }
  std::string cert(const std::string& leaf = "server") const { return file(leaf + ".pem"); }
  std::string key(const std::string& leaf = "server") const { return file(leaf + ".key"); }

 private:
  bool run(const std::string& what, const std::string& args) {
    const std::string cmd = "cd '" + m_dir.string() + "' && openssl " + args + " > openssl.log 2>&1";
    if (std::system(cmd.c_str()) == 0) return true;
    std::ifstream log(m_dir / "openssl.log");
    m_error = what + " failed: openssl " + args;
    for (std::string line; std::getline(log, line);) m_error += "\n" + line;
    return false;
  }
  bool make_ca(const std::string& name, const std::string& cn) {
    return run("making " + name,
               "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + name + ".key -out " +
                   name + ".pem -days 2 -subj '/CN=" + cn +
                   "'"
                   " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign");
  }
  bool make_leaf(const std::string& name, const std::string& cn, const std::string& section,
                 const std::string& validity) {
    return run("making " + name + "'s request", "req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " +
                                                    name + ".key -out " + name + ".csr -subj '/CN=" + cn + "'") &&
           run("signing " + name, "ca -batch -notext -config ca.cnf -cert ca.pem -keyfile ca.key -in " + name +
                                      ".csr -out " + name + ".pem -extensions " + section + " " + validity);
  }

  std::filesystem::path m_dir;
  bool m_ok = false;
  std::string m_error;
};

// An RSA key pair as a GitHub App's settings page hands it out, made with the openssl
// command line: `<dir>/<name>.pem` (the private key, PKCS#1 "RSA PRIVATE KEY", mode 0600)
// and `<dir>/<name>.pub.pem` (its public key, for the fake forge to verify signatures
// with). Empty when all went well, else what failed.
inline std::string make_rsa_key(const std::filesystem::path& dir, const std::string& name, int bits = 2048) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  const std::string d = "'" + dir.string() + "'";
  const std::string cmd = "cd " + d + " && (umask 077 && openssl genrsa -traditional -out " + name + ".pem " +
                          std::to_string(bits) + ") > " + name + ".log 2>&1 && openssl rsa -in " + name +
                          ".pem -pubout -out " + name + ".pub.pem >> " + name + ".log 2>&1";
  if (std::system(cmd.c_str()) == 0) return "";
  std::ifstream log(dir / (name + ".log"));
  std::string error = "making the RSA key " + name + " failed";
  for (std::string line; std::getline(log, line);) error += "\n" + line;
  return error;
}

}  // namespace kport::testing
