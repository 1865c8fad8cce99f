// Issue 14's strict-input defects against a real coordinator: a database it cannot
// write, text cut inside a character, numbers and ids taken loosely, a request without
// Host. Each test is named after the defect it pins.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "coordinator_fixture.h"
#include "kport/common/crypto.h"
#include "kport/common/utf8.h"

namespace kport::testing {
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

const std::string k_hook_secret = "hook-secret-for-strict-tests";

class StrictTest : public CoordinatorTest {
 protected:
  StrictTest() { extra_args = {"--hook-secret", k_hook_secret}; }

  // Sends raw bytes to the coordinator and returns what came back until it closed.
  std::string raw_exchange(const std::string& request) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(proc->port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return {};
    }
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return out;
  }

  // The result a GPU runner would upload, with one field overridden.
  static json::object result(const std::string& key, json::value value) {
    json::object r{{"target", "sm_90a"},
                   {"family", "gemm"},
                   {"variant", "simt"},
                   {"instance", "gemm.simt.64x64"},
                   {"dtype", "bf16"},
                   {"shape", "m=64,n=64,k=64"},
                   {"gpu_model", "NVIDIA H200"},
                   {"arch", "9.0"},
                   {"driver", "580.1"},
                   {"status", "passed"},
                   {"median_us", 10.0},
                   {"samples", 100},
                   {"message", "Grüße aus dem Prüfstand: 日本語 🚀"}};
    r[key] = std::move(value);
    return r;
  }

  // A check job leased to a fresh GPU runner: {token, job id}.
  std::pair<std::string, std::string> leased_check() {
    add_target();
    auto builder = register_runner("builder-1", "build");
    auto gpu = register_runner("gpu-ü-1", "gpu");
    start_pipeline(commit_sha());
    auto job = claim(builder);
    EXPECT_TRUE(job.is_object());
    if (!job.is_object()) return {};
    auto id = std::to_string(job.at("id").as_int64());
    EXPECT_EQ(
        post("/api/v1/jobs/" + id + "/complete", json::object{{"attempt", 1}, {"status", "succeeded"}}, builder).status,
        200);
    auto check = claim(gpu);
    EXPECT_TRUE(check.is_object());
    if (!check.is_object()) return {};
    return {gpu, std::to_string(check.at("id").as_int64())};
  }

  JsonReply push(const std::string& body, const std::string& delivery) {
    http::HeaderList headers{
        {"Content-Type", "application/json"},
        {"X-GitHub-Event", "push"},
        {"X-GitHub-Delivery", delivery},
        {"X-Hub-Signature-256", "sha256=" + crypto::to_hex(crypto::hmac_sha256(k_hook_secret, body))}};
    auto r = client.fetch("POST", url("/api/v1/hooks/push"), body, headers, std::chrono::milliseconds(30'000));
    JsonReply out;
    if (!r.ok()) {
      ADD_FAILURE() << r.error().message;
      return out;
    }
    out.status = r->status;
    out.raw = r->body;
    boost::system::error_code ec;
    out.body = json::parse(r->body, ec);
    return out;
  }
};

std::string error_message(const JsonReply& r) {
  const auto* e = r.body.is_object() ? r.body.as_object().if_contains("error") : nullptr;
  return e && e->is_object() && e->as_object().contains("message") ? std::string(e->at("message").as_string()) : r.raw;
}

}  // namespace

// Issue 14 item 7: on a read-only database with WAL files left behind the coordinator
// started, said healthy and answered every write with a bare 500.
TEST_F(StrictTest, ReadOnlyDatabaseWithWalFilesLeftStopsTheCoordinatorAtStart) {
  add_target();
  ASSERT_EQ(
      post("/api/v1/repositories", json::object{{"name", "kernels"}, {"url", "/tmp/kernels.git"}}, k_admin).status,
      201);
  proc->kill_hard();  // no checkpoint: the -wal and -shm files stay beside the database
  const fs::path db = dir.path() / "kport.db";
  ASSERT_TRUE(fs::exists(fs::path(db.string() + "-wal")));

  // Root writes through any mode bits, so the coordinator runs as nobody when the test is root.
  std::string binary = KPORT_COORDINATOR_BIN;
  std::vector<std::string> a = args();
  if (::geteuid() == 0) {
    ASSERT_EQ(::access("/usr/bin/setpriv", X_OK), 0) << "setpriv is needed to drop root for this test";
    a.insert(a.begin(), {"--reuid=65534", "--regid=65534", "--clear-groups", binary});
    binary = "/usr/bin/setpriv";
  }
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  for (const auto& entry : fs::directory_iterator(dir.path()))
    fs::permissions(entry.path(),
                    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  if (::geteuid() != 0)
    for (const auto& entry : fs::directory_iterator(dir.path()))
      fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::remove);

  std::string output;
  const int rc = run_to_exit(binary, a, output);
  EXPECT_NE(rc, 0) << output;
  EXPECT_NE(output.find("is not writable"), std::string::npos) << output;
  EXPECT_NE(output.find(db.string()), std::string::npos) << output;
}

// Issue 14 item 8: a pushed message was cut at byte 4096 inside 'é', and
// /api/v1/commits/{sha} then answered invalid UTF-8.
TEST_F(StrictTest, CommitMessageCutAtByte4096MidCharacterStaysValidUtf8) {
  ASSERT_EQ(post("/api/v1/repositories",
                 json::object{{"name", "org/kernels"}, {"url", "https://example.com/org/kernels.git"}}, k_admin)
                .status,
            201);
  add_target();
  const std::string sha = commit_sha(7);
  const std::string message = std::string(4095, 'x') + "é and the rest";
  json::object c{{"id", sha},
                 {"message", message},
                 {"timestamp", "2026-11-29T17:45:00Z"},
                 {"author", json::object{{"name", "Jürgen Groß"}, {"email", "jg@example.com"}}}};
  auto body = json::serialize(json::object{
      {"ref", "refs/heads/main"},
      {"before", std::string(40, '0')},
      {"after", sha},
      {"forced", false},
      {"deleted", false},
      {"repository", json::object{{"full_name", "org/kernels"}, {"clone_url", "https://example.com/org/kernels.git"}}},
      {"commits", json::array{c}}});
  auto r = push(body, "delivery-utf8-1");
  ASSERT_LT(r.status, 300) << r.raw;

  auto got = get("/api/v1/commits/" + sha);
  ASSERT_EQ(got.status, 200) << got.raw;
  EXPECT_TRUE(utf8::valid(got.raw));
  const auto& stored = got.body.at("commit").at("message").as_string();
  EXPECT_EQ(stored.size(), 4095u);
  EXPECT_EQ(std::string(stored), std::string(4095, 'x'));
}

// Issue 14 item 8: every answer is valid UTF-8 when multi-byte text goes in through
// the API (commit messages, runner names, notes, result messages) and when a client
// quotes invalid bytes back at us in a path or query.
TEST_F(StrictTest, MultiByteTextStoredThroughTheApiComesBackAsValidUtf8) {
  auto [gpu, check] = leased_check();
  ASSERT_FALSE(check.empty());
  auto c = post("/api/v1/commits",
                json::object{{"sha", commit_sha(2)},
                             {"repo", "kernels"},
                             {"message", "Füge 日本語 hinzu 🚀"},
                             {"author", "Zoë <z@example.com>"}},
                k_admin);
  ASSERT_EQ(c.status, 201) << c.raw;
  auto p = post("/api/v1/pipelines",
                json::object{{"commit", commit_sha(2)},
                             {"repo", "kernels"},
                             {"targets", json::array{"sm_90a"}},
                             {"note", "prüfen, ob es läuft ✓"}},
                k_admin);
  ASSERT_EQ(p.status, 201) << p.raw;
  auto up = post("/api/v1/jobs/" + check + "/results",
                 json::object{{"attempt", 1}, {"results", json::array{result("status", "passed")}}}, gpu);
  ASSERT_EQ(up.status, 200) << up.raw;
  ASSERT_EQ(
      post("/api/v1/jobs/" + check + "/log", json::object{{"attempt", 1}, {"text", "Prüfung läuft… ✓\n"}}, gpu).status,
      200);

  const std::vector<std::string> paths = {"/api/v1/commits/" + commit_sha(2),
                                          "/api/v1/commits/" + commit_sha(),
                                          "/api/v1/runners",
                                          "/api/v1/pipelines",
                                          "/api/v1/pipelines/" + std::to_string(p.body.at("id").as_int64()),
                                          "/api/v1/results",
                                          "/api/v1/jobs/" + check + "/log",
                                          "/api/v1/jobs/" + check + "/log?format=text",
                                          "/api/v1/results?since_ms=%FF%FE",
                                          "/api/v1/no%C3such"};
  for (const std::string& path : paths) {
    auto r = call_raw(client, "GET", url(path), "");
    EXPECT_TRUE(utf8::valid(r.raw)) << path;
    EXPECT_FALSE(r.raw.empty()) << path;
  }
  EXPECT_NE(get("/api/v1/runners").raw.find("gpu-ü-1"), std::string::npos);
  EXPECT_NE(get("/api/v1/results").raw.find("日本語 🚀"), std::string::npos);
  EXPECT_NE(get("/api/v1/commits/" + commit_sha(2)).raw.find("Füge 日本語"), std::string::npos);
}

// Issue 14 item 11: `samples: -5` was stored.
TEST_F(StrictTest, NegativeSamplesInAResultAre400NamingTheField) {
  auto [gpu, check] = leased_check();
  ASSERT_FALSE(check.empty());
  auto r = post("/api/v1/jobs/" + check + "/results",
                json::object{{"attempt", 1}, {"results", json::array{result("samples", -5)}}}, gpu);
  EXPECT_EQ(r.status, 400) << r.raw;
  EXPECT_NE(error_message(r).find("samples"), std::string::npos) << r.raw;
  auto neg = post("/api/v1/jobs/" + check + "/results",
                  json::object{{"attempt", 1}, {"results", json::array{result("median_us", -1.0)}}}, gpu);
  EXPECT_EQ(neg.status, 400) << neg.raw;
  EXPECT_NE(error_message(neg).find("median_us"), std::string::npos) << neg.raw;
  EXPECT_EQ(get("/api/v1/results").body.at("items").as_array().size(), 0u);
}

// Issue 14 item 11: a non-numeric since_ms silently became 0 (every result).
TEST_F(StrictTest, NonNumericSinceMsIs400NamingTheParameter) {
  for (const char* bad : {"yesterday", "12abc", "-1", "99999999999999999999"}) {
    auto r = get(std::string("/api/v1/results?since_ms=") + bad);
    EXPECT_EQ(r.status, 400) << bad << ": " << r.raw;
    EXPECT_NE(error_message(r).find("since_ms"), std::string::npos) << r.raw;
  }
  EXPECT_EQ(get("/api/v1/results?since_ms=0").status, 200);
  auto log = get("/api/v1/jobs/1/log?after=soon");
  EXPECT_EQ(log.status, 400) << log.raw;
  EXPECT_NE(error_message(log).find("after"), std::string::npos) << log.raw;
}

// Issue 14 item 11: a pipeline's commit need not be hex (`<img src=x ...>` accepted).
TEST_F(StrictTest, PipelineCommitThatIsNotHexIs400NamingTheField) {
  add_target();
  for (const char* bad : {"<img src=x onerror=alert(1)>", "ABCDEF1234", "abc", "zzzzzzzzzz"}) {
    auto r = post("/api/v1/pipelines",
                  json::object{{"commit", bad}, {"repo", "kernels"}, {"targets", json::array{"sm_90a"}}}, k_admin);
    EXPECT_EQ(r.status, 400) << bad << ": " << r.raw;
    EXPECT_NE(error_message(r).find("'commit'"), std::string::npos) << r.raw;
  }
  EXPECT_EQ(get("/api/v1/pipelines").body.at("items").as_array().size(), 0u);
  auto c = post("/api/v1/commits", json::object{{"sha", commit_sha()}, {"repo", "kernels"}, {"parent", "not-a-sha"}},
                k_admin);
  EXPECT_EQ(c.status, 400) << c.raw;
  EXPECT_NE(error_message(c).find("'parent'"), std::string::npos) << c.raw;
}

// Issue 14 item 11: an HTTP/1.1 request without Host was served.
TEST_F(StrictTest, Http11RequestWithoutHostIs400) {
  auto reply = raw_exchange("GET /healthz HTTP/1.1\r\nUser-Agent: probe\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
  EXPECT_NE(reply.find("Host"), std::string::npos) << reply;
  auto ok = raw_exchange("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
  auto http10 = raw_exchange("GET /healthz HTTP/1.0\r\n\r\n");
  // HTTP/1.0 has no Host requirement; the answer's status line may say 1.1 (RFC 9110 2.5).
  EXPECT_EQ(http10.substr(0, http10.find("\r\n")).substr(8), " 200 OK") << http10;
}

// Issue 14 item 11: the registration token could not be rotated without a restart,
// never expired, and 200 registrations in 0.1 s all went through.
TEST_F(StrictTest, RegistrationTokenRotatesExpiresAndSurvivesARestart) {
  auto rotated = post("/api/v1/admin/registration-token", json::object{}, k_admin);
  ASSERT_EQ(rotated.status, 201) << rotated.raw;
  const std::string fresh(rotated.body.at("token").as_string());
  EXPECT_NE(fresh, k_registration);
  json::object runner{{"name", "r-1"},
                      {"role", "build"},
                      {"capabilities", json::object{{"toolkit", "13.0"}, {"targets", json::array{"sm_90a"}}}}};
  auto old = post("/api/v1/runners/register", runner, k_registration);
  EXPECT_EQ(old.status, 403) << old.raw;
  auto ok = post("/api/v1/runners/register", runner, fresh);
  EXPECT_EQ(ok.status, 201) << ok.raw;
  EXPECT_EQ(post("/api/v1/admin/registration-token", json::object{}, fresh).status, 401);
  auto bad = post("/api/v1/admin/registration-token", json::object{{"expires_in_s", -5}}, k_admin);
  EXPECT_EQ(bad.status, 400) << bad.raw;
  EXPECT_NE(error_message(bad).find("expires_in_s"), std::string::npos) << bad.raw;

  // A restart keeps the rotation, even though --registration-token still names the old one.
  ASSERT_EQ(proc->terminate(), 0);
  start();
  EXPECT_EQ(post("/api/v1/runners/register", runner, k_registration).status, 403);
  EXPECT_EQ(post("/api/v1/runners/register", runner, fresh).status, 201);

  auto expiring = post("/api/v1/admin/registration-token", json::object{{"expires_in_s", 1}}, k_admin);
  ASSERT_EQ(expiring.status, 201) << expiring.raw;
  const std::string brief(expiring.body.at("token").as_string());
  EXPECT_TRUE(expiring.body.at("expires_ms").is_int64());
  EXPECT_EQ(post("/api/v1/runners/register", runner, brief).status, 201);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  auto expired = post("/api/v1/runners/register", runner, brief);
  EXPECT_EQ(expired.status, 403) << expired.raw;
  EXPECT_NE(error_message(expired).find("expired"), std::string::npos) << expired.raw;
}

TEST_F(StrictTest, RegistrationBurstIsRateLimitedWith429AndRetryAfter) {
  json::object runner{{"name", "burst"},
                      {"role", "build"},
                      {"capabilities", json::object{{"toolkit", "13.0"}, {"targets", json::array{"sm_90a"}}}}};
  int created = 0, limited = 0;
  std::string retry_after;
  for (int i = 0; i < 200; ++i) {
    auto body = json::serialize(runner);
    auto r = client.fetch("POST", url("/api/v1/runners/register"), body,
                          {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + k_registration}});
    ASSERT_TRUE(r.ok());
    if (r->status == 201) ++created;
    if (r->status == 429) {
      ++limited;
      for (const auto& [name, value] : r->headers)
        if (name == "Retry-After") retry_after = value;
    }
  }
  EXPECT_LE(created, 25);
  EXPECT_GE(created, 20);
  EXPECT_EQ(created + limited, 200);
  ASSERT_FALSE(retry_after.empty());
  EXPECT_GE(std::stoi(retry_after), 1);
  // A wrong token is refused as such, not counted against the runners that hold the right one.
  EXPECT_EQ(post("/api/v1/runners/register", runner, "wrong-token").status, 403);
}

// Issue 14 item 11: a runner token could not be revoked.
TEST_F(StrictTest, RevokedRunnerTokenStopsWorkingAndItsJobReturnsToTheQueue) {
  add_target();
  auto builder = register_runner("builder-1", "build");
  start_pipeline(commit_sha());
  auto job = claim(builder);
  ASSERT_TRUE(job.is_object());
  auto runners = get("/api/v1/runners");
  ASSERT_EQ(runners.status, 200) << runners.raw;
  const auto id = runners.body.at("items").as_array().at(0).at("id").as_int64();
  auto anon = call(client, "DELETE", url("/api/v1/runners/" + std::to_string(id) + "/token"), nullptr, builder);
  EXPECT_EQ(anon.status, 403) << anon.raw;
  auto revoked = call(client, "DELETE", url("/api/v1/runners/" + std::to_string(id) + "/token"), nullptr, k_admin);
  ASSERT_EQ(revoked.status, 200) << revoked.raw;
  auto hb = post("/api/v1/runners/heartbeat", json::object{{"job", job.at("id")}, {"attempt", 1}}, builder);
  EXPECT_EQ(hb.status, 401) << hb.raw;
  EXPECT_EQ(call(client, "DELETE", url("/api/v1/runners/999/token"), nullptr, k_admin).status, 404);
  auto other = register_runner("builder-2", "build");
  auto again = claim(other, 5);  // the returned job is claimable once its retry backoff ends
  ASSERT_TRUE(again.is_object());
  EXPECT_EQ(again.at("id"), job.at("id"));
}

}  // namespace kport::testing
