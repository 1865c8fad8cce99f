// The coordinator over HTTPS, end to end: a real kport-coordinator with --tls-cert and
// --tls-key on 127.0.0.1, the real kport CLI and kport-runner --role gpu (with the
// stand-in harness) talking to it with --ca-file, and each certificate a client must
// refuse (unknown CA, another host name, expired) refused with its reason. The PKI is
// made at run time (tests/support/test_pki.h); without the openssl command line (or curl,
// for the event stream) the tests are skipped.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "build_runner/runner_fixture.h"
#include "kport/common/crypto.h"
#include "test_pki.h"

namespace kport::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

class TlsCoordinatorTest : public BuildRunnerTest {
 protected:
  TlsCoordinatorTest() { max_attempts = 2; }

  void SetUp() override {
    if (!openssl_available()) GTEST_SKIP() << "the openssl command line is not installed";
    pki = std::make_unique<TestPki>(dir.path() / "pki");
    ASSERT_TRUE(pki->ok()) << pki->error();
    tls = trusting_client();
    serve_with("server");
  }
  void TearDown() override { ::unsetenv("KPORT_STAND_IN_ONLY"); }

  // (Re)starts the coordinator serving the PKI's certificate `leaf`.
  void serve_with(const std::string& leaf) {
    proc.reset();
    extra_args = {"--tls-cert", pki->cert(leaf), "--tls-key", pki->key(leaf)};
    start();
  }
  std::string https(std::string_view path, std::string_view host = "127.0.0.1") const {
    return "https://" + std::string(host) + ":" + std::to_string(proc->port()) + std::string(path);
  }
  http::Client trusting_client() {
    http::ClientOptions o;
    o.ca_file = pki->ca();
    return http::Client(o);
  }
  int kport_cli(std::vector<std::string> args, std::string& output) { return run_to_exit(KPORT_CLI_BIN, args, output); }
  JsonReply sget(const std::string& path) { return call(tls, "GET", https(path)); }
  JsonReply ssend(std::string_view method, const std::string& path, const json::value& body, const std::string& token) {
    return call(tls, method, https(path), &body, token);
  }
  // Sends `bytes` on a fresh TCP connection and reads until the coordinator closes it.
  std::string raw_exchange(const std::string& bytes) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(proc->port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string out;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      char buf[4096];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
  }
  bool coordinator_alive() const {
    int status = 0;
    return ::waitpid(proc->pid(), &status, WNOHANG) == 0;
  }

  std::unique_ptr<TestPki> pki;
  http::Client tls;  // trusts the test CA (set in SetUp, once the PKI exists)
};

TEST_F(TlsCoordinatorTest, TheCliTalksHttpsWithItsCaFile) {
  std::string out;
  ASSERT_EQ(kport_cli({"--server", https(""), "--ca-file", pki->ca(), "runners"}, out), 0) << out;
  EXPECT_NE(out.find("0 runners"), std::string::npos) << out;
  // By name as well as by address, and with the CA file from the environment.
  ::setenv("KPORT_CA_FILE", pki->ca().c_str(), 1);
  int rc = kport_cli({"--server", https("", "localhost"), "runners", "--json"}, out);
  ::unsetenv("KPORT_CA_FILE");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out.rfind("[", 0), 0u) << out;  // the runners as a JSON array
}

TEST_F(TlsCoordinatorTest, TheCliRefusesAnUnknownCaAndSaysToPassCaFile) {
  std::string out;
  EXPECT_EQ(kport_cli({"--server", https(""), "runners"}, out), 3) << out;
  EXPECT_NE(out.find("not signed by a CA in the system trust store"), std::string::npos) << out;
  EXPECT_NE(out.find("pass --ca-file"), std::string::npos) << out;
  EXPECT_EQ(kport_cli({"--server", https(""), "--ca-file", pki->stranger_ca(), "runners"}, out), 3) << out;
  EXPECT_NE(out.find("not signed by a CA in the CA file " + pki->stranger_ca()), std::string::npos) << out;
}

TEST_F(TlsCoordinatorTest, TheCliRefusesACertificateForAnotherHostName) {
  serve_with("other-host");
  ASSERT_TRUE(proc->started());
  std::string out;
  EXPECT_EQ(kport_cli({"--server", https(""), "--ca-file", pki->ca(), "runners"}, out), 3) << out;
  EXPECT_NE(out.find("not issued for the host name '127.0.0.1'"), std::string::npos) << out;
}

TEST_F(TlsCoordinatorTest, TheCliRefusesAnExpiredCertificate) {
  serve_with("expired");
  ASSERT_TRUE(proc->started());
  std::string out;
  EXPECT_EQ(kport_cli({"--server", https("", "localhost"), "--ca-file", pki->ca(), "runners"}, out), 3) << out;
  EXPECT_NE(out.find("it has expired"), std::string::npos) << out;
}

TEST_F(TlsCoordinatorTest, ABadCertificateOrKeyIsAStartupErrorNamingTheFile) {
  proc.reset();
  std::string out;
  const std::string db = (dir.path() / "other.db").string();
  EXPECT_EQ(
      run_to_exit(
          KPORT_COORDINATOR_BIN,
          {"--listen", "127.0.0.1:0", "--db", db, "--tls-cert", pki->cert(), "--tls-key", pki->key("other-host")}, out),
      1)
      << out;
  EXPECT_NE(out.find("the TLS key '" + pki->key("other-host") + "' (--tls-key) does not belong to the certificate '" +
                     pki->cert() + "'"),
            std::string::npos)
      << out;
  const std::string absent = (dir.path() / "absent.pem").string();
  EXPECT_EQ(run_to_exit(KPORT_COORDINATOR_BIN,
                        {"--listen", "127.0.0.1:0", "--db", db, "--tls-cert", absent, "--tls-key", pki->key()}, out),
            1)
      << out;
  EXPECT_NE(out.find("cannot read the TLS certificate '" + absent + "'"), std::string::npos) << out;
  EXPECT_EQ(run_to_exit(KPORT_COORDINATOR_BIN, {"--listen", "127.0.0.1:0", "--db", db, "--tls-key", pki->key()}, out),
            2)
      << out;
  EXPECT_NE(out.find("--tls-cert is missing"), std::string::npos) << out;
}

TEST_F(TlsCoordinatorTest, PlainHttpToTheHttpsPortIsAnsweredAndTheCoordinatorKeepsServing) {
  auto plain = http::fetch("GET", url("/healthz"), {}, {}, 5s);  // http:// to the HTTPS port
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->status, 400);
  EXPECT_NE(plain->body.find("this port serves HTTPS"), std::string::npos) << plain->body;
  // A handshake record of garbage, bytes that are neither HTTP nor TLS, and a handshake
  // cut short (closed by the coordinator at its first-request deadline).
  const std::string alert = raw_exchange(std::string("\x16\x03\x01\x00\x05", 5) + "junk!" + std::string(100, '\xff'));
  EXPECT_TRUE(alert.empty() || alert[0] == '\x15') << "at most a TLS alert record, then the close";
  EXPECT_NE(raw_exchange(std::string(200, '\0')).find("400"), std::string::npos);
  EXPECT_EQ(raw_exchange(std::string("\x16\x03", 2)), "");
  EXPECT_TRUE(coordinator_alive()) << proc->log();
  auto health = sget("/healthz");
  EXPECT_EQ(health.status, 200) << health.raw;
  auto metrics = tls.fetch("GET", https("/metrics"));
  ASSERT_TRUE(metrics.ok()) << metrics.error().message;
  EXPECT_NE(metrics->body.find("kport_http_tls_plain_requests_total "), std::string::npos);
}

TEST_F(TlsCoordinatorTest, TheEventStreamWorksOverTls) {
  if (std::system("command -v curl > /dev/null 2>&1") != 0) GTEST_SKIP() << "curl is not installed";
  const fs::path events = dir.path() / "events.txt";
  const std::string cmd = "curl -sN --cacert '" + pki->ca() + "' --max-time 6 '" + https("/api/v1/events") + "' > '" +
                          events.string() + "' 2>&1";
  auto reader = std::async(std::launch::async, [cmd] { return std::system(cmd.c_str()); });
  auto read_events = [&] {
    std::ifstream in(events);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  for (int i = 0; i < 100 && read_events().find("event: hello") == std::string::npos; ++i)
    std::this_thread::sleep_for(50ms);
  ASSERT_NE(read_events().find("event: hello"), std::string::npos) << read_events();
  // A registration is published to the stream.
  boost::json::object caps{{"toolkit", "13.0"}, {"targets", json::array{"sm_90a"}}, {"cores", 2}};
  auto reg = ssend("POST", "/api/v1/runners/register",
                   json::object{{"name", "sse-runner"}, {"role", "build"}, {"capabilities", caps}}, k_registration);
  EXPECT_EQ(reg.status, 201) << reg.raw;
  for (int i = 0; i < 100 && read_events().find("sse-runner") == std::string::npos; ++i)
    std::this_thread::sleep_for(50ms);
  const std::string text = read_events();
  EXPECT_NE(text.find("event: runner"), std::string::npos) << text;
  EXPECT_NE(text.find("sse-runner"), std::string::npos) << text;
  reader.wait();
}

TEST_F(TlsCoordinatorTest, AGpuRunnerRegistersAndClaimsOverHttps) {
  // Play the build runner over https: the stand-in harness goes up as the build's artifact.
  ASSERT_EQ(
      ssend("PUT", "/api/v1/targets/sm_90a", json::object{{"arch", "9.0"}, {"features", json::array{"wgmma"}}}, k_admin)
          .status,
      201);
  const std::string sha = commit_sha(5);
  ASSERT_EQ(
      ssend("POST", "/api/v1/repositories", json::object{{"name", "kernels"}, {"url", "/tmp/kernels.git"}}, k_admin)
          .status,
      201);
  ASSERT_EQ(ssend("POST", "/api/v1/commits", json::object{{"sha", sha}, {"repo", "kernels"}, {"message", "m"}}, k_admin)
                .status,
            201);
  auto p =
      ssend("POST", "/api/v1/pipelines",
            json::object{
                {"commit", sha}, {"repo", "kernels"}, {"ref", "refs/heads/main"}, {"targets", json::array{"sm_90a"}}},
            k_admin);
  ASSERT_EQ(p.status, 201) << p.raw;
  boost::json::object caps{{"toolkit", "13.0"}, {"targets", json::array{"sm_90a"}}, {"cores", 2}};
  auto reg = ssend("POST", "/api/v1/runners/register",
                   json::object{{"name", "builder"}, {"role", "build"}, {"capabilities", caps}}, k_registration);
  ASSERT_EQ(reg.status, 201) << reg.raw;
  const std::string builder(reg.body.at("token").as_string());
  auto claimed = call(tls, "POST", https("/api/v1/runners/claim?wait=2"), nullptr, builder);
  ASSERT_TRUE(claimed.body.at("job").is_object()) << claimed.raw;
  const auto build = claimed.body.at("job").at("id").to_number<std::int64_t>();
  const auto attempt = claimed.body.at("job").at("attempt").to_number<std::int64_t>();
  std::ifstream in(KPORT_STAND_IN_HARNESS, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string hash = crypto::sha256_hex(bytes.str());
  const std::string lease = "job=" + std::to_string(build) + "&attempt=" + std::to_string(attempt);
  EXPECT_EQ(
      call_raw(tls, "PUT", https("/api/v1/artifacts/" + hash + "?name=kport-harness-sm_90a&kind=harness&" + lease),
               bytes.str(), builder, "application/octet-stream")
          .status,
      201);
  json::object rec{{"family", "gemm"}, {"variant", "good"}, {"status", "ok"}, {"artifact", hash}};
  EXPECT_EQ(ssend("POST", "/api/v1/jobs/" + std::to_string(build) + "/builds",
                  json::object{{"attempt", attempt}, {"records", json::array{rec}}}, builder)
                .status,
            200);
  EXPECT_EQ(
      ssend("POST", "/api/v1/jobs/" + std::to_string(build) + "/complete", json::object{{"attempt", attempt}}, builder)
          .status,
      200);

  // A runner that does not trust the CA cannot register: it says why and keeps retrying.
  fs::path inventory = dir.path() / "gpus.json";
  std::ofstream(inventory) << R"([{"index":0,"name":"NVIDIA H200","uuid":"GPU-0badc0de-0000-4000-8000-000000000001",)"
                           << R"("arch":"9.0","sm_count":132,"memory_mib":143771,"driver":"580.95.05"}])";
  std::vector<std::string> args{KPORT_RUNNER_BIN,
                                "--role",
                                "gpu",
                                "--server",
                                https(""),
                                "--registration-token",
                                k_registration,
                                "--workdir",
                                (dir.path() / "work").string(),
                                "--name",
                                "tls-gpu",
                                "--gpus",
                                inventory.string(),
                                "--claim-wait",
                                "1",
                                "--kernel-timeout",
                                "1",
                                "--process-timeout",
                                "5",
                                "--bench-time-cap-ms",
                                "50",
                                "--bench-rounds",
                                "1"};
  ::setenv("KPORT_STAND_IN_ONLY", "gemm.good.steady", 1);
  spawn_runner(args);
  for (int i = 0; i < 100 && runner_output().find("not signed by a CA") == std::string::npos; ++i)
    std::this_thread::sleep_for(50ms);
  EXPECT_NE(runner_output().find("cannot register yet; retrying"), std::string::npos) << runner_output();
  EXPECT_NE(runner_output().find("pass --ca-file"), std::string::npos) << runner_output();
  int status = 0;
  EXPECT_EQ(::waitpid(runner_pid, &status, WNOHANG), 0) << "the runner must keep retrying\n" << runner_output();
  stop_runner();

  // With --ca-file it registers, claims the check job and completes it over https.
  args.push_back("--ca-file");
  args.push_back(pki->ca());
  spawn_runner(args);
  json::object job;
  for (auto end = std::chrono::steady_clock::now() + 120s; std::chrono::steady_clock::now() < end;) {
    auto pipeline = sget("/api/v1/pipelines/" + std::to_string(p.body.at("id").as_int64()));
    for (const auto& j : pipeline.body.at("jobs").as_array())
      if (j.at("kind").as_string() == "check") job = j.as_object();
    const std::string s = job.empty() ? "" : std::string(job.at("status").as_string());
    if (s == "succeeded" || s == "failed") break;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_FALSE(job.empty());
  EXPECT_EQ(job.at("status").as_string(), "succeeded") << json::serialize(job) << "\n" << runner_output();
  auto results = sget("/api/v1/results?commit=" + sha + "&limit=100");
  EXPECT_FALSE(results.body.at("items").as_array().empty()) << results.raw;
  auto runners = sget("/api/v1/runners");
  EXPECT_NE(runners.raw.find("tls-gpu"), std::string::npos) << runners.raw;
}

}  // namespace
}  // namespace kport::testing
