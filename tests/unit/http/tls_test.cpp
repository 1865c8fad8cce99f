// HTTPS: the server with a certificate and key, the client verifying it, and what each
// says when something is wrong. Certificates come from a PKI made at run time
// (tests/support/test_pki.h); without the openssl command line these tests are skipped.
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "kport/http/certificate_problem.h"
#include "raw_socket.h"
#include "test_pki.h"
#include "test_server.h"

namespace kport::http::test {
namespace {
using namespace std::chrono_literals;

class TlsTest : public ServerFixture {
 protected:
  void SetUp() override {
    if (!kport::testing::openssl_available()) GTEST_SKIP() << "the openssl command line is not installed";
    dir = std::filesystem::temp_directory_path() / ("kport-tls-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    pki = std::make_unique<kport::testing::TestPki>(dir);
    ASSERT_TRUE(pki->ok()) << pki->error();
    router->add_sync("GET", "/who",
                     [](const Request& r) { return text_response(200, "hello " + r.remote.substr(0, 9)); });
  }
  void TearDown() override {
    ServerFixture::TearDown();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  void start_tls(const std::string& leaf = "server") {
    options.tls_cert_file = pki->cert(leaf);
    options.tls_key_file = pki->key(leaf);
    start();
  }
  std::string https(std::string_view host, std::string_view target) const {
    return "https://" + std::string(host) + ":" + std::to_string(server->port()) + std::string(target);
  }
  Result<ClientResponse> fetch_with_ca(const std::string& ca, const std::string& url) {
    ClientOptions o;
    o.timeout = 5s;
    o.ca_file = ca;
    Client c(o);
    return c.fetch("GET", url);
  }

  std::filesystem::path dir;
  std::unique_ptr<kport::testing::TestPki> pki;
};

TEST_F(TlsTest, ServesHttpsToAClientThatTrustsItsCaByAddressAndByName) {
  start_tls();
  EXPECT_STREQ(server->scheme(), "https");
  ClientOptions o;
  o.ca_file = pki->ca();
  Client c(o);
  for (const char* host : {"127.0.0.1", "localhost"}) {
    auto r = c.fetch("GET", https(host, "/who"));
    ASSERT_TRUE(r.ok()) << host << ": " << r.error().message;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "hello 127.0.0.1");
  }
  // Keep-alive holds over TLS: the second request to the same host reuses the connection.
  const auto before = server->metrics().connections_total.load();
  ASSERT_TRUE(c.fetch("GET", https("localhost", "/who")).ok());
  EXPECT_EQ(server->metrics().connections_total.load(), before);
}

TEST_F(TlsTest, AServerCertificateFromAnUnknownCaIsRefusedWithWhatToDo) {
  start_tls();
  for (const std::string& ca : {pki->stranger_ca(), std::string()}) {
    auto r = fetch_with_ca(ca, https("127.0.0.1", "/who"));
    ASSERT_FALSE(r.ok()) << "trusting '" << ca << "'";
    EXPECT_EQ(r.error().code, Errc::unavailable);
    EXPECT_NE(r.error().message.find("not signed by a CA in"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("pass --ca-file"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(ca.empty() ? "the system trust store" : ca), std::string::npos)
        << r.error().message;
  }
}

TEST_F(TlsTest, ACertificateForAnotherHostNameIsRefusedNamingTheHost) {
  start_tls("other-host");
  auto r = fetch_with_ca(pki->ca(), https("127.0.0.1", "/who"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not issued for the host name '127.0.0.1'"), std::string::npos) << r.error().message;
}

TEST_F(TlsTest, AnExpiredCertificateIsRefusedAsExpired) {
  start_tls("expired");
  auto r = fetch_with_ca(pki->ca(), https("localhost", "/who"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("it has expired"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("renew"), std::string::npos) << r.error().message;
}

TEST_F(TlsTest, PlainHttpToTheHttpsPortGetsA400ThatSaysHttpsAndTheServerGoesOn) {
  start_tls();
  auto plain = fetch("GET", "http://127.0.0.1:" + std::to_string(server->port()) + "/who", {}, {}, 3s);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->status, 400);
  EXPECT_NE(plain->body.find("serves HTTPS"), std::string::npos) << plain->body;
  EXPECT_EQ(server->metrics().tls_plain_requests.load(), 1u);
  auto r = fetch_with_ca(pki->ca(), https("127.0.0.1", "/who"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
}

TEST_F(TlsTest, AStalledOrBrokenHandshakeIsClosedAtTheFirstRequestDeadline) {
  options.first_request_timeout = 300ms;
  start_tls();
  // A ClientHello that never finishes: the sweeper closes it at the deadline.
  RawSocket stalled(server->port());
  ASSERT_TRUE(stalled.connected());
  ASSERT_TRUE(stalled.send(std::string_view("\x16\x03\x01", 3)));
  const auto t0 = std::chrono::steady_clock::now();
  stalled.read();
  EXPECT_TRUE(stalled.peer_closed());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  // A handshake record of garbage fails at once and ends only that connection.
  RawSocket garbage(server->port());
  ASSERT_TRUE(garbage.send(std::string("\x16\x03\x01\x00\x05", 5) + "junk!" + std::string(64, '\xff')));
  garbage.read();
  EXPECT_TRUE(garbage.peer_closed());
  // A connection that sends nothing at all is closed at the deadline too.
  RawSocket silent(server->port());
  silent.read();
  EXPECT_TRUE(silent.peer_closed());
  EXPECT_GE(server->metrics().tls_handshakes_failed.load(), 2u);
  auto r = fetch_with_ca(pki->ca(), https("127.0.0.1", "/who"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  // Nothing is left open once the last client went away (its close takes a moment to be seen).
  for (int i = 0; i < 100 && server->metrics().connections_open.load() != 0; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(server->metrics().connections_open.load(), 0);
}

TEST_F(TlsTest, AMissingUnreadableOrMismatchedCertificateOrKeyFailsStartNamingTheFile) {
  auto start_error = [&](const std::string& cert, const std::string& key) {
    ServerOptions o;
    o.tls_cert_file = cert;
    o.tls_key_file = key;
    Server s(o, router);
    auto st = s.start();
    EXPECT_FALSE(st.ok());
    return st.ok() ? std::string() : st.error().message;
  };
  const std::string missing = (dir / "absent.pem").string();
  auto m = start_error(missing, pki->key());
  EXPECT_NE(m.find("cannot read the TLS certificate '" + missing + "'"), std::string::npos) << m;
  m = start_error(pki->cert(), missing);
  EXPECT_NE(m.find("cannot read the TLS key '" + missing + "'"), std::string::npos) << m;
  m = start_error(pki->key(), pki->key());  // a key where the certificate belongs
  EXPECT_NE(m.find("cannot use the TLS certificate '" + pki->key() + "'"), std::string::npos) << m;
  m = start_error(pki->cert(), pki->cert());  // a certificate where the key belongs
  EXPECT_NE(m.find("TLS key '" + pki->cert() + "'"), std::string::npos) << m;
  m = start_error(pki->cert(), pki->key("other-host"));
  EXPECT_NE(m.find("does not belong to the certificate '" + pki->cert() + "'"), std::string::npos) << m;
  EXPECT_NE(m.find(pki->key("other-host")), std::string::npos) << m;
  m = start_error(pki->cert(), "");
  EXPECT_NE(m.find("needs both --tls-cert and --tls-key"), std::string::npos) << m;
}

TEST_F(TlsTest, AnUnreadableCaFileIsAClearClientError) {
  start_tls();
  auto r = fetch_with_ca((dir / "no-such-ca.pem").string(), https("127.0.0.1", "/who"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_NE(r.error().message.find("cannot read the CA file"), std::string::npos) << r.error().message;
}

TEST_F(TlsTest, HttpsToAPlainServerSaysToCheckTheScheme) {
  start();
  auto r = fetch_with_ca(pki->ca(), https("127.0.0.1", "/who"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("TLS handshake with 127.0.0.1:"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("http:// URL"), std::string::npos) << r.error().message;
}

TEST_F(TlsTest, GracefulStopDrainsAnInFlightHttpsRequest) {
  std::promise<void> entered;
  router->add("GET", "/slow", [&](Request&&, Reply reply) {
    entered.set_value();
    std::thread([reply = std::move(reply)] {
      std::this_thread::sleep_for(300ms);
      reply(text_response(200, "done"));
    }).detach();
  });
  start_tls();
  auto pending =
      std::async(std::launch::async, [this] { return fetch_with_ca(pki->ca(), https("127.0.0.1", "/slow")); });
  entered.get_future().wait();
  EXPECT_EQ(server->in_flight(), 1u);
  server->stop(5s);
  auto r = pending.get();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->body, "done");
  EXPECT_EQ(r->header("Connection"), "close");
}

TEST_F(TlsTest, LimitsHoldOverHttpsAsOverHttp) {
  options.body_limit = 1024;
  router->add_sync("POST", "/echo", [](const Request& r) { return text_response(200, r.body); });
  start_tls();
  ClientOptions o;
  o.ca_file = pki->ca();
  Client c(o);
  auto big = c.fetch("POST", https("127.0.0.1", "/echo"), std::string(4096, 'x'));
  ASSERT_TRUE(big.ok()) << big.error().message;
  EXPECT_EQ(big->status, 413);
  auto missing = c.fetch("GET", https("127.0.0.1", "/nowhere"));
  ASSERT_TRUE(missing.ok()) << missing.error().message;
  EXPECT_EQ(missing->status, 404);
  auto small = c.fetch("POST", https("127.0.0.1", "/echo"), "ping");
  ASSERT_TRUE(small.ok()) << small.error().message;
  EXPECT_EQ(small->body, "ping");
}

TEST(CertificateProblem, EachProblemSaysWhatFailedAndWhatToDo) {
  auto unknown = describe_certificate_problem(CertificateProblem::unknown_ca, "ci:8443", "ci", "",
                                              "unable to get local issuer certificate");
  EXPECT_EQ(unknown,
            "TLS certificate of ci:8443 refused: it is not signed by a CA in the system trust store "
            "(unable to get local issuer certificate); pass --ca-file with the CA certificate (PEM) that "
            "signed the server's certificate");
  auto with_file =
      describe_certificate_problem(CertificateProblem::unknown_ca, "ci:8443", "ci", "/etc/kport/ca.pem", "");
  EXPECT_NE(with_file.find("not signed by a CA in the CA file /etc/kport/ca.pem; pass --ca-file"), std::string::npos)
      << with_file;
  auto host = describe_certificate_problem(CertificateProblem::wrong_host, "10.0.0.1:443", "10.0.0.1", "", "");
  EXPECT_NE(host.find("not issued for the host name '10.0.0.1'"), std::string::npos) << host;
  auto expired =
      describe_certificate_problem(CertificateProblem::expired, "ci:443", "ci", "", "certificate has expired");
  EXPECT_NE(expired.find("it has expired (certificate has expired); the server's operator must renew it"),
            std::string::npos);
  auto early = describe_certificate_problem(CertificateProblem::not_yet_valid, "ci:443", "ci", "", "");
  EXPECT_NE(early.find("not valid yet; check this machine's clock"), std::string::npos) << early;
  auto other = describe_certificate_problem(CertificateProblem::other, "ci:443", "ci", "", "certificate revoked");
  EXPECT_NE(other.find("refused: certificate revoked; check the server's certificate chain"), std::string::npos)
      << other;
}

}  // namespace
}  // namespace kport::http::test
