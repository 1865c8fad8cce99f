// Regression tests for issue 14's serving defects, against a real coordinator process:
// /healthz blocked behind the database (item 4), one client locking everyone out with
// idle connections (item 5), static files read and hashed per request (item 12).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "coordinator_fixture.h"
#include "kport/common/crypto.h"

namespace kport::testing {
namespace {

namespace fs = std::filesystem;
using Ms = std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// A TCP connection from `source` (any 127.0.0.0/8 address is loopback) to the coordinator.
int connect_from(const char* source, std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in src{};
  src.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

struct RawReply {
  int status = 0;  // 0: no answer (closed or timed out)
  std::string text;
  Ms took{0};
};

// Reads until the peer closes or the response's Content-Length is complete.
RawReply read_reply(int fd, SteadyClock::time_point t0) {
  RawReply r;
  char buf[8192];
  for (;;) {
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    r.text.append(buf, static_cast<std::size_t>(n));
    auto head_end = r.text.find("\r\n\r\n");
    if (head_end == std::string::npos) continue;
    auto cl = r.text.find("Content-Length: ");
    if (cl == std::string::npos || cl > head_end) break;
    if (r.text.size() >= head_end + 4 + std::stoul(r.text.substr(cl + 16))) break;
  }
  r.took = std::chrono::duration_cast<Ms>(SteadyClock::now() - t0);
  if (r.text.rfind("HTTP/1.1 ", 0) == 0) r.status = std::stoi(r.text.substr(9, 3));
  return r;
}

RawReply request(const char* source, std::uint16_t port, const std::string& method, const std::string& path,
                 const std::string& token = "", const std::string& body = "", const std::string& extra = "") {
  auto t0 = SteadyClock::now();
  int fd = connect_from(source, port);
  if (fd < 0) return {};
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + extra;
  if (!token.empty()) req += "Authorization: Bearer " + token + "\r\n";
  if (!body.empty()) req += "Content-Type: application/json\r\n";
  req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  auto r = read_reply(fd, t0);
  ::close(fd);
  return r;
}

// Holds SQLite's write lock on a database from another process (the sqlite3 shell), as
// a long migration or a stuck backup would.
class DatabaseLock {
 public:
  explicit DatabaseLock(const std::filesystem::path& db) {
    m_pipe = ::popen(("sqlite3 '" + db.string() + "' > /dev/null 2>&1").c_str(), "w");
    if (!m_pipe) return;
    std::fputs("BEGIN IMMEDIATE;\nCREATE TABLE IF NOT EXISTS lock_probe(x);\n", m_pipe);
    std::fflush(m_pipe);
  }
  ~DatabaseLock() { release(); }
  bool ok() const { return m_pipe != nullptr; }
  void release() {
    if (!m_pipe) return;
    std::fputs("ROLLBACK;\n.quit\n", m_pipe);
    ::pclose(m_pipe);
    m_pipe = nullptr;
  }

 private:
  FILE* m_pipe = nullptr;
};

class ServingTest : public CoordinatorTest {
 protected:
  void SetUp() override {}
};

// Item 4: 16 clients on routes that wait on the database pushed /healthz to seconds.
// Here every worker is provably blocked (the database is write-locked by another
// process, and 16 writers wait on it with 2 workers); liveness must not care.
TEST_F(ServingTest, HealthzAnswersWhileEveryWorkerIsBlockedOnTheDatabase) {
  extra_args = {"--workers", "2", "--ready-timeout-ms", "300"};
  start();
  const auto port = proc->port();
  DatabaseLock lock(dir.path() / "kport.db");
  ASSERT_TRUE(lock.ok());
  std::this_thread::sleep_for(Ms(300));

  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 16; ++i)
    clients.emplace_back([&, i] {
      for (int n = 0; !stop.load(); ++n) {
        std::string body = R"({"name":"r)" + std::to_string(i) + "_" + std::to_string(n) + R"(","url":"/tmp/x.git"})";
        request("127.0.0.1", port, "POST", "/api/v1/repositories", k_admin, body);
        writes.fetch_add(1);
      }
    });
  std::this_thread::sleep_for(Ms(500));

  // The readiness check cannot get a worker: 503 with the reason, by its deadline.
  auto ready = request("127.0.0.1", port, "GET", "/readyz");
  EXPECT_EQ(ready.status, 503) << ready.text;
  EXPECT_NE(ready.text.find("did not answer within 300 ms"), std::string::npos) << ready.text;
  EXPECT_LT(ready.took, Ms(2000));
  // Liveness and metrics come from memory; a generous bound, not a benchmark.
  Ms worst{0};
  for (int i = 0; i < 50; ++i) {
    auto h = request("127.0.0.1", port, "GET", "/healthz");
    ASSERT_EQ(h.status, 200) << h.text;
    worst = std::max(worst, h.took);
  }
  EXPECT_LT(worst, Ms(250)) << "slowest /healthz while every worker was blocked";
  auto m = request("127.0.0.1", port, "GET", "/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.text.find("kport_queue_depth"), std::string::npos);
  EXPECT_LT(m.took, Ms(250));
  EXPECT_EQ(writes.load(), 0) << "the writers were not blocked; the test proves nothing";

  lock.release();
  stop = true;
  for (auto& t : clients) t.join();
  int status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    status = request("127.0.0.1", port, "GET", "/readyz").status;
    if (status != 200) std::this_thread::sleep_for(Ms(100));
  }
  EXPECT_EQ(status, 200) << "readiness did not come back once the database was free";
}

// Item 5: 10,050 idle connections from one process hit max_connections and every other
// client, runners included, got 503.
TEST_F(ServingTest, TenThousandIdleConnectionsFromOneAddressDoNotLockOutOthers) {
  start();
  const auto port = proc->port();
  add_target();
  const std::string runner = register_runner("gpu-1", "gpu");
  ASSERT_FALSE(runner.empty());

  std::vector<int> idle;
  idle.reserve(10'000);
  for (int i = 0; i < 10'000; ++i) {
    int fd = connect_from("127.0.0.1", port);
    if (fd >= 0) idle.push_back(fd);
  }
  EXPECT_GT(idle.size(), 9'000u);

  auto other = request("127.0.0.2", port, "GET", "/api/v1/targets");
  EXPECT_EQ(other.status, 200) << other.text;
  auto health = request("127.0.0.1", port, "GET", "/healthz");
  EXPECT_EQ(health.status, 200) << health.text;
  auto claim = request("127.0.0.1", port, "POST", "/api/v1/runners/claim?wait=0", runner);
  EXPECT_EQ(claim.status, 200) << claim.text;
  auto anonymous = request("127.0.0.1", port, "GET", "/api/v1/targets");
  EXPECT_EQ(anonymous.status, 503) << anonymous.text;
  EXPECT_NE(anonymous.text.find("only authorized requests and health checks"), std::string::npos) << anonymous.text;

  auto m = request("127.0.0.2", port, "GET", "/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.text.find("kport_http_connections_evicted_total"), std::string::npos);
  EXPECT_EQ(m.text.find("kport_http_connections_evicted_total 0\n"), std::string::npos) << "nothing was evicted";
  for (int fd : idle) ::close(fd);
}

// A keep-alive connection that sends one request and keeps the connection open; the
// answer is read, the socket stays open (or was closed by the coordinator).
struct HeldConnection {
  int fd = -1;
  RawReply reply;
  // Waits up to `wait` for the coordinator to close the connection.
  bool closed_by_peer(Ms wait = Ms(2000)) const {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
    char c;
    return ::recv(fd, &c, 1, MSG_DONTWAIT) == 0;
  }
};
HeldConnection keep_alive_request(const char* source, std::uint16_t port, const std::string& path,
                                  const std::string& token, const std::string& method = "GET",
                                  const std::string& body = "") {
  HeldConnection h;
  auto t0 = SteadyClock::now();
  h.fd = connect_from(source, port);
  if (h.fd < 0) return h;
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token +
                    "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\n\r\n" + body;
  (void)::send(h.fd, req.data(), req.size(), MSG_NOSIGNAL);
  h.reply = read_reply(h.fd, t0);
  return h;
}

// Item 5, after the reserve: any Authorization header earned a reserve slot, so a client
// sending "Bearer bogus" on keep-alive connections held the whole reserve (eviction only
// takes silent connections) and locked runners out again. Only a token the coordinator
// accepts, checked from memory, takes a slot now.
TEST_F(ServingTest, BogusAuthorizationHeadersCannotHoldTheReserve) {
  extra_args = {"--max-connections-per-address", "2", "--reserved-connections", "3", "--max-connections", "64"};
  start();
  const auto port = proc->port();
  add_target();
  const std::string runner = register_runner("gpu-1", "gpu");
  const std::string revoked = register_runner("gpu-2", "gpu");
  ASSERT_FALSE(runner.empty());
  auto listed = get("/api/v1/runners");
  std::int64_t revoked_id = 0;
  for (const auto& r : listed.body.at("items").as_array())
    if (r.at("name").as_string() == "gpu-2") revoked_id = r.at("id").as_int64();
  ASSERT_GT(revoked_id, 0) << listed.raw;
  ASSERT_EQ(
      call(client, "DELETE", url("/api/v1/runners/" + std::to_string(revoked_id) + "/token"), nullptr, k_admin).status,
      200);

  // The address's ordinary connections are taken by idle ones.
  std::vector<int> idle;
  for (int i = 0; i < 2; ++i) idle.push_back(connect_from("127.0.0.1", port));
  std::this_thread::sleep_for(Ms(100));

  // Bogus and revoked tokens are refused at the door and closed: they hold nothing.
  std::vector<HeldConnection> bogus;
  for (int i = 0; i < 4; ++i) {
    bogus.push_back(
        keep_alive_request("127.0.0.1", port, "/api/v1/targets", i == 3 ? revoked : "bogus-" + std::to_string(i)));
    EXPECT_EQ(bogus.back().reply.status, 503) << bogus.back().reply.text;
    EXPECT_NE(bogus.back().reply.text.find("only authorized requests and health checks"), std::string::npos)
        << bogus.back().reply.text;
    EXPECT_TRUE(bogus.back().closed_by_peer()) << "a bogus token must not keep a reserve connection";
    ::close(bogus.back().fd);
  }
  // Their slots are given back as they close.
  auto reserved_now = [&] {
    auto m = request("127.0.0.2", port, "GET", "/metrics");
    const std::string key = "\nkport_http_connections_reserved ";
    auto at = m.text.find(key);
    if (at == std::string::npos) return std::string("?");
    at += key.size();
    return m.text.substr(at, m.text.find('\n', at) - at);
  };
  for (int i = 0; i < 50 && reserved_now() != "0"; ++i) std::this_thread::sleep_for(Ms(20));
  EXPECT_EQ(reserved_now(), "0");
  // With the bogus ones gone the reserve is free for what is valid: a runner's claim,
  // the admin token, and a runner registering with the registration token, each held
  // open in a reserve slot of its own.
  std::vector<HeldConnection> valid;
  valid.push_back(keep_alive_request("127.0.0.1", port, "/api/v1/runners/claim?wait=0", runner, "POST"));
  valid.push_back(keep_alive_request("127.0.0.1", port, "/api/v1/targets", k_admin));
  valid.push_back(keep_alive_request("127.0.0.1", port, "/api/v1/runners/register", k_registration, "POST",
                                     R"({"name":"late","role":"build","capabilities":{"targets":["sm_90a"]}})"));
  EXPECT_EQ(valid[0].reply.status, 200) << valid[0].reply.text;
  EXPECT_EQ(valid[1].reply.status, 200) << valid[1].reply.text;
  EXPECT_EQ(valid[2].reply.status, 201) << valid[2].reply.text;
  for (const auto& v : valid) EXPECT_FALSE(v.closed_by_peer(Ms(200))) << v.reply.text;
  EXPECT_EQ(reserved_now(), "3") << "each valid connection holds its reserve slot";
  for (auto& h : valid) ::close(h.fd);
  for (int fd : idle) ::close(fd);
}

// Item 7: writes that failed were answered 500 with nothing in the log. Every 5xx the
// coordinator sends, whichever layer sends it, leaves a line in its log with the status
// and what was said: a store that cannot write (503 with the reason), a request refused
// by the reserve, and a connection refused at the door (those at most one line a second,
// with how many).
TEST_F(ServingTest, EveryFiveHundredIsLoggedWithItsStatusAndReason) {
  const fs::path artifacts = dir.path() / "artifacts-broken";
  std::ofstream(artifacts) << "a file where the artifact directory should be\n";
  extra_args = {"--artifacts",
                artifacts.string(),
                "--max-connections",
                "6",
                "--reserved-connections",
                "1",
                "--max-connections-per-address",
                "2"};
  start();
  const auto port = proc->port();
  // The log line of a 5xx, waited for (warnings and errors are flushed at once).
  auto logged = [&](const std::vector<std::string>& parts) {
    for (int i = 0; i < 40; ++i) {
      std::istringstream lines(proc->log());
      for (std::string line; std::getline(lines, line);) {
        bool all = true;
        for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
        if (all) return line;
      }
      std::this_thread::sleep_for(Ms(50));
    }
    return std::string();
  };

  // 1. The artifact store cannot write: 503 naming why.
  const std::string data = "harness bytes";
  auto put = request("127.0.0.3", port, "PUT", "/api/v1/artifacts/" + crypto::sha256_hex(data), k_admin, data);
  ASSERT_EQ(put.status, 503) << put.text;
  EXPECT_NE(logged({"request failed", "status=503", "/api/v1/artifacts/{sha256}", "cannot create"}), "") << proc->log();

  // 2. Past the address's limit, an anonymous request is refused by the reserve.
  std::vector<int> idle;
  for (int i = 0; i < 2; ++i) idle.push_back(connect_from("127.0.0.4", port));
  std::this_thread::sleep_for(Ms(100));
  auto refused = request("127.0.0.4", port, "GET", "/api/v1/targets");
  ASSERT_EQ(refused.status, 503) << refused.text;
  EXPECT_NE(logged({"request failed", "status=503", "only authorized requests and health checks"}), "") << proc->log();

  // 3. The reserve's one slot held by a live admin connection: the next is refused at the door.
  std::this_thread::sleep_for(Ms(100));
  auto held = keep_alive_request("127.0.0.4", port, "/api/v1/targets", k_admin);
  ASSERT_EQ(held.reply.status, 200) << held.reply.text;
  auto door = request("127.0.0.4", port, "GET", "/healthz");
  ASSERT_EQ(door.status, 503) << door.text;
  EXPECT_NE(logged({"connections refused with 503", "status=503", "refused=", "remote=127.0.0.4"}), "") << proc->log();

  ::close(held.fd);
  for (int fd : idle) ::close(fd);
}

// Item 5: a connection that never sends its request is closed at the first-request
// deadline, not kept for read_timeout.
TEST_F(ServingTest, IdleConnectionIsClosedAtTheFirstRequestDeadline) {
  extra_args = {"--first-request-timeout-ms", "300"};
  start();
  auto t0 = SteadyClock::now();
  int fd = connect_from("127.0.0.1", proc->port());
  ASSERT_GE(fd, 0);
  (void)::send(fd, "GET /heal", 9, MSG_NOSIGNAL);  // a trickle does not extend the deadline
  auto r = read_reply(fd, t0);
  ::close(fd);
  EXPECT_EQ(r.status, 408) << r.text;
  EXPECT_LT(r.took, Ms(1400));
}

// Item 12: app.js was read and hashed on every request on an I/O thread.
TEST_F(ServingTest, StaticFilesAreServedFromMemoryWithEtagsComputedAtStart) {
  auto web = dir.path() / "web";
  std::filesystem::create_directories(web / "dist");
  std::ofstream(web / "index.html") << "<!doctype html><title>kport</title>";
  std::ofstream(web / "dist" / "app.js") << "console.log('v1');";
  extra_args = {"--web", web.string()};
  start();
  const auto port = proc->port();
  auto first = request("127.0.0.1", port, "GET", "/static/dist/app.js");
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_NE(first.text.find("console.log('v1');"), std::string::npos);
  auto at = first.text.find("ETag: ");
  ASSERT_NE(at, std::string::npos);
  std::string etag = first.text.substr(at + 6, first.text.find("\r\n", at) - at - 6);

  // Changed on disk after start: still the loaded content, so nothing is read per request.
  std::ofstream(web / "dist" / "app.js", std::ios::trunc) << "console.log('v2');";
  auto again = request("127.0.0.1", port, "GET", "/static/dist/./app.js");
  EXPECT_NE(again.text.find("console.log('v1');"), std::string::npos) << again.text;
  auto cached = request("127.0.0.1", port, "GET", "/static/dist/app.js", "", "", "If-None-Match: " + etag + "\r\n");
  EXPECT_EQ(cached.status, 304) << cached.text;
  EXPECT_EQ(request("127.0.0.1", port, "GET", "/static/../kport.db").status, 404);
  EXPECT_EQ(request("127.0.0.1", port, "GET", "/static/%2e%2e/kport.db").status, 404);
  EXPECT_EQ(request("127.0.0.1", port, "GET", "/").status, 200);
}

// Issue 15: started without --web, the coordinator answered "/" with a bare 404 although
// the README says the dashboard is at the root. From the build tree it finds the
// checkout's web/ (an install finds share/kport/web: deploy.install_and_packages).
TEST_F(ServingTest, WithoutWebTheDashboardIsFoundAndServedAtTheRoot) {
  start();
  auto root = request("127.0.0.1", proc->port(), "GET", "/");
  EXPECT_EQ(root.status, 200) << root.text;
  EXPECT_NE(root.text.find("Content-Type: text/html"), std::string::npos) << root.text;
  EXPECT_NE(root.text.find("/static/dist/"), std::string::npos) << root.text;
}

}  // namespace
}  // namespace kport::testing
