// The conventions users expect of every kport binary and service, against the real
// executables: --version, --log-format json with UTC timestamps, WWW-Authenticate on
// every 401, and /metrics with kport_build_info and the process metrics.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "coordinator_fixture.h"

namespace kport::testing {
namespace {

const std::regex k_utc_ms(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every line of `log` is one JSON object with a UTC timestamp and the process's name;
// returns how many lines there were.
int expect_json_lines(const std::string& log, const std::string& proc) {
  std::istringstream in(log);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    ++n;
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);
    if (ec || !v.is_object()) {
      ADD_FAILURE() << "not a JSON object: " << line;
      continue;
    }
    const auto& o = v.as_object();
    if (!o.contains("ts") || !o.contains("level") || !o.contains("msg") || !o.contains("proc")) {
      ADD_FAILURE() << "ts, level, msg or proc missing: " << line;
      continue;
    }
    EXPECT_EQ(o.at("proc").as_string(), proc) << line;
    EXPECT_TRUE(std::regex_match(std::string(o.at("ts").as_string()), k_utc_ms)) << line;
  }
  return n;
}

void expect_version(const std::string& binary, const std::string& name) {
  std::string out;
  EXPECT_EQ(run_to_exit(binary, {"--version"}, out), 0) << out;
  const std::regex line(
      "^" + name + R"( \d+\.\d+\.\d+ \(commit ([0-9a-f]{7,40}|unknown), built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\n$)");
  EXPECT_TRUE(std::regex_match(out, line)) << name << ": " << out;
}

TEST(Conventions, EveryBinaryPrintsItsVersionCommitAndBuildDate) {
  expect_version(KPORT_COORDINATOR_BIN, "kport-coordinator");
  expect_version(KPORT_RUNNER_BIN, "kport-runner");
  expect_version(KPORT_WATCHER_BIN, "kport-watcher");
  expect_version(KPORT_CLI_BIN, "kport");
  expect_version(KPORT_DISPATCH_BIN, "kport-dispatch");
}

TEST(Conventions, AnUnknownLogFormatIsRefusedByName) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {KPORT_COORDINATOR_BIN, {"--log-format", "xml"}},
      {KPORT_RUNNER_BIN, {"--log-format", "xml"}},
      {KPORT_WATCHER_BIN, {"--log-format", "xml", "--server", "http://127.0.0.1:1", "--token", "t"}}};
  for (const auto& [bin, args] : runs) {
    std::string out;
    EXPECT_EQ(run_to_exit(bin, args, out), 2) << bin << ": " << out;
    EXPECT_NE(out.find("--log-format"), std::string::npos) << bin << ": " << out;
    EXPECT_NE(out.find("'xml'"), std::string::npos) << bin << ": " << out;
  }
}

class ConventionsCoordinator : public CoordinatorTest {
 protected:
  void SetUp() override {
    extra_args = {"--log-format", "json"};
    CoordinatorTest::SetUp();
  }
  http::ClientResponse fetch(const std::string& method, const std::string& path, const std::string& auth = "") {
    http::HeaderList h;
    if (!auth.empty()) h.emplace_back("Authorization", auth);
    auto r = client.fetch(method, url(path), "", h, std::chrono::milliseconds(10'000));
    EXPECT_TRUE(r.ok()) << path;
    return r.ok() ? *r : http::ClientResponse{};
  }
};

TEST_F(ConventionsCoordinator, LogsJsonLinesWithUtcTimestamps) {
  get("/healthz");
  ASSERT_EQ(proc->terminate(), 0);
  EXPECT_GT(expect_json_lines(proc->log(), "kport-coordinator"), 0);
}

TEST_F(ConventionsCoordinator, EveryUnauthorizedAnswerSaysHowToAuthenticate) {
  // No token: the challenge alone.
  auto none = fetch("POST", "/api/v1/pipelines");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.header("WWW-Authenticate"), R"(Bearer realm="kport")");
  // A wrong token: the challenge says it was not valid.
  auto wrong = fetch("POST", "/api/v1/pipelines", "Bearer not-a-token");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(wrong.header("WWW-Authenticate"), R"(Bearer realm="kport", error="invalid_token")");
  auto runner = fetch("POST", "/api/v1/runners/claim", "Bearer not-a-token");
  EXPECT_EQ(runner.status, 401);
  EXPECT_EQ(runner.header("WWW-Authenticate"), R"(Bearer realm="kport", error="invalid_token")");
  auto reg = fetch("POST", "/api/v1/runners/register");
  EXPECT_EQ(reg.status, 401);
  EXPECT_EQ(reg.header("WWW-Authenticate"), R"(Bearer realm="kport")");
  // Another scheme is not a Bearer token that was wrong.
  auto basic = fetch("POST", "/api/v1/pipelines", "Basic dXNlcjpwYXNz");
  EXPECT_EQ(basic.status, 401);
  EXPECT_EQ(basic.header("WWW-Authenticate"), R"(Bearer realm="kport")");
  // Answers that are not 401 carry no challenge.
  EXPECT_EQ(fetch("GET", "/healthz").header("WWW-Authenticate"), "");
}

double metric(const std::string& text, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("\n" + name + " ([0-9.eE+-]+)\n"))) return -1;
  return std::stod(m[1]);
}

TEST_F(ConventionsCoordinator, MetricsExportBuildInfoAndProcessMetrics) {
  auto r = fetch("GET", "/metrics");
  ASSERT_EQ(r.status, 200);
  const std::string& t = r.body;
  EXPECT_TRUE(std::regex_search(
      t,
      std::regex(
          R"re(\n# TYPE kport_build_info gauge\nkport_build_info\{version="\d+\.\d+\.\d+",commit="([0-9a-f]{7,40}|unknown)"\} 1\n)re")))
      << t;
  EXPECT_NE(t.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos);
  const double start = metric(t, "process_start_time_seconds");
  const double now = static_cast<double>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  EXPECT_GT(start, now - 600) << t;  // started by this test, moments ago
  EXPECT_LT(start, now + 5);
  EXPECT_GT(metric(t, "process_resident_memory_bytes"), 1 << 20);
  EXPECT_GE(metric(t, "process_cpu_seconds_total"), 0);
  EXPECT_GT(metric(t, "process_open_fds"), 3);
}

// Starts `binary args` with stderr and stdout into `log`; returns its pid.
pid_t spawn_logged(const std::string& binary, const std::vector<std::string>& args, const std::filesystem::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Runs `binary args` until its log holds `needle`, then stops it with SIGTERM; returns the log.
std::string log_until(const std::string& binary, const std::vector<std::string>& args, const std::filesystem::path& log,
                      const std::string& needle) {
  pid_t pid = spawn_logged(binary, args, log);
  EXPECT_GT(pid, 0);
  for (int i = 0; i < 500 && slurp(log).find(needle) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  std::string text = slurp(log);
  EXPECT_NE(text.find(needle), std::string::npos) << text;
  return text;
}

TEST_F(ConventionsCoordinator, RunnerAndWatcherLogJsonLinesWithUtcTimestamps) {
  auto runner = log_until(KPORT_RUNNER_BIN,
                          {"--role", "build", "--server", url(""), "--registration-token", k_registration, "--workdir",
                           (dir.path() / "runner").string(), "--claim-wait", "1", "--log-format", "json"},
                          dir.path() / "runner.log", "\"msg\":\"registered\"");
  EXPECT_GT(expect_json_lines(runner, "kport-runner"), 0);
  auto watcher = log_until(KPORT_WATCHER_BIN,
                           {"--server", url(""), "--token", k_admin, "--watch", "fleet", "--workdir",
                            (dir.path() / "watcher").string(), "--log-format", "json"},
                           dir.path() / "watcher.log", "\"msg\":\"watcher started\"");
  EXPECT_GT(expect_json_lines(watcher, "kport-watcher"), 0);
}

}  // namespace
}  // namespace kport::testing
