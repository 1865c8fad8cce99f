// A real kport-runner process against a stand-in coordinator: a kport::http server in this
// test that answers each request with the next answer of a script, the malformed answers
// of issue 14 first (an HTML page sent with 200, a numeric token, a claim whose job.kind
// is a number, whose id is a string, whose attempt is 1.5, whose commit is missing), then
// good ones. The runner must stay up (never exit 134), log what was wrong, give back a job
// it could not read, and then take and complete a good job.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "kport/http/server.h"
#include "process.h"

extern char** environ;

namespace kport::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

const std::string k_sha(40, 'b');
const std::string k_html = "<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>";

http::Response html200() { return http::text_response(200, k_html, "text/html"); }

// The stand-in coordinator: scripted answers per route, and what the runner sent.
struct StandIn {
  std::mutex mu;
  std::vector<http::Response> register_script, claim_script;
  std::vector<json::object> completes;
  int registrations = 0, claims = 0, deregisters = 0;

  static http::Response next(std::vector<http::Response>& script, const http::Response& then) {
    if (script.empty()) return then;
    auto r = std::move(script.front());
    script.erase(script.begin());
    return r;
  }
};

std::string job_json(const std::string& fields) { return R"({"job":{)" + fields + "}}"; }
http::Response raw(const std::string& body) { return http::text_response(200, body, "application/json"); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RunnerAnswersIntegration, RunnerStaysUpThroughMalformedAnswersAndRecovers) {
  StandIn s;
  s.register_script = {html200(), raw(R"({"token":12345,"runner":{"id":1}})")};
  const std::string ct = R"("commit":")" + k_sha + R"(","target":"sm_90a")";
  s.claim_script = {
      raw(job_json(R"("id":7,"kind":3,"attempt":1,)" + ct)),                     // job.kind a number
      raw(job_json(R"("id":"8","kind":"check","attempt":1,)" + ct)),             // id a string
      raw(job_json(R"("id":9,"kind":"check","attempt":1.5,)" + ct)),             // attempt 1.5
      raw(job_json(R"("id":10,"kind":"check","attempt":1,"target":"sm_90a")")),  // commit missing
      html200(),
      // A good job, which a GPU runner cannot run: it must complete it as failed.
      raw(job_json(R"("id":11,"pipeline":1,"kind":"build","attempt":1,)" + ct)),
      // A good check job whose builds lookup answers with a proxy's page: failed, to be retried, with the reason.
      raw(job_json(R"("id":12,"pipeline":1,"kind":"check","attempt":2,"depends_on":11,)" + ct))};

  auto router = std::make_shared<http::Router>();
  router->add_sync("POST", "/api/v1/runners/register", [&](const http::Request&) {
    std::lock_guard l(s.mu);
    ++s.registrations;
    return StandIn::next(s.register_script, http::json_ok(json::object{{"token", "kpr_good"},
                                                                       {"runner", json::object{{"id", 1}}},
                                                                       {"heartbeat_interval_ms", 200}}));
  });
  router->add_sync("POST", "/api/v1/runners/claim", [&](const http::Request&) {
    std::unique_lock l(s.mu);
    ++s.claims;
    if (s.claim_script.empty()) {
      l.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a short long-poll with nothing in it
      return http::json_ok(json::object{{"job", nullptr}});
    }
    return StandIn::next(s.claim_script, http::json_ok(json::object{{"job", nullptr}}));
  });
  router->add_sync("POST", "/api/v1/runners/heartbeat", [&](const http::Request&) { return html200(); });
  router->add_sync("GET", "/api/v1/builds", [&](const http::Request&) { return html200(); });
  router->add_sync("POST", "/api/v1/jobs/{id}/log",
                   [&](const http::Request&) { return http::json_ok(json::object{}); });
  router->add_sync("POST", "/api/v1/jobs/{id}/complete", [&](const http::Request& req) {
    std::lock_guard l(s.mu);
    auto body = json::parse(req.body).as_object();
    body["job"] = std::stoll(std::string(req.param("id")));
    s.completes.push_back(std::move(body));
    return http::json_ok(json::object{{"ok", true}});
  });
  router->add_sync("POST", "/api/v1/runners/deregister", [&](const http::Request&) {
    std::lock_guard l(s.mu);
    ++s.deregisters;
    return http::json_ok(json::object{});
  });
  http::Server server(http::ServerOptions{}, router);
  ASSERT_TRUE(server.start().ok());

  TempDir dir;
  const fs::path inventory = dir.path() / "gpus.json";
  // Two GPUs: two workers in one process; neither may take the other down.
  std::ofstream(inventory)
      << R"([{"index":0,"name":"NVIDIA H200","uuid":"GPU-00000000-0000-4000-8000-000000000001","arch":"9.0"},)"
      << R"({"index":1,"name":"NVIDIA H200","uuid":"GPU-00000000-0000-4000-8000-000000000002","arch":"9.0"}])";
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const fs::path log = dir.path() / "runner.log";
  std::vector<std::string> args{KPORT_RUNNER_BIN,
                                "--role",
                                "gpu",
                                "--server",
                                url,
                                "--registration-token",
                                "reg",
                                "--workdir",
                                (dir.path() / "work").string(),
                                "--name",
                                "fuzzed",
                                "--gpus",
                                inventory.string(),
                                "--claim-wait",
                                "1",
                                "--gpu-lock-dir",
                                (dir.path() / "gpu-locks").string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, KPORT_RUNNER_BIN, &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);

  // Until the good job is completed (backoff: the bad answers cost about 15 s at most).
  int status = 0;
  bool exited = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto completed = [&](std::int64_t job) {
    std::lock_guard l(s.mu);
    for (const auto& c : s.completes)
      if (c.at("job").as_int64() == job) return true;
    return false;
  };
  while (std::chrono::steady_clock::now() < deadline && !(completed(11) && completed(12))) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(exited) << "the runner ended (status " << status << ", signal "
                       << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << "):\n"
                       << slurp(log);
  ASSERT_TRUE(completed(11) && completed(12)) << slurp(log);

  // SIGTERM: both workers stop, deregister, exit 0.
  ::kill(pid, SIGTERM);
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << "\n" << slurp(log);
  EXPECT_EQ(WEXITSTATUS(status), 0) << slurp(log);
  server.stop();

  const std::string text = slurp(log);
  for (const char* reason : {"register answer: not JSON", "register answer: field 'token' must be a string",
                             "claim answer: field 'job.kind' must be a string", "field 'job.id' must be an integer",
                             "field 'job.attempt' must be an integer", "field 'job.commit' is required (a string)",
                             "claim answer: not JSON", "502 Bad Gateway", "retry_in_ms"})
    EXPECT_NE(text.find(reason), std::string::npos) << "the log does not say: " << reason << "\n" << text;

  std::lock_guard l(s.mu);
  EXPECT_GE(s.registrations, 3);
  EXPECT_EQ(s.deregisters, 2);
  std::map<std::int64_t, json::object> by_job;
  for (const auto& c : s.completes) by_job[c.at("job").as_int64()] = c;
  // The job whose kind it could not read was given back at once, as a retryable failure with the reason.
  ASSERT_TRUE(by_job.count(7)) << text;
  EXPECT_EQ(by_job[7].at("status").as_string(), "failed");
  EXPECT_TRUE(by_job[7].at("retry").as_bool());
  EXPECT_NE(std::string(by_job[7].at("reason").as_string()).find("job.kind"), std::string::npos);
  ASSERT_TRUE(by_job.count(10)) << "the job without a commit was not given back\n" << text;
  EXPECT_TRUE(by_job[10].at("retry").as_bool());
  // Those with no readable lease (id a string, attempt 1.5) were left to expire.
  EXPECT_FALSE(by_job.count(8));
  EXPECT_FALSE(by_job.count(9));
  // The good job ran and was completed by its attempt, with the handler's reason.
  EXPECT_EQ(by_job[11].at("attempt").as_int64(), 1);
  EXPECT_NE(std::string(by_job[11].at("reason").as_string()).find("cannot run a 'build' job"), std::string::npos);
  EXPECT_EQ(by_job[12].at("status").as_string(), "failed");
  EXPECT_TRUE(by_job[12].at("retry").as_bool());
  const std::string why(by_job[12].at("reason").as_string());
  EXPECT_NE(why.find("builds lookup answer: not JSON"), std::string::npos) << why;
}

}  // namespace
}  // namespace kport::testing
