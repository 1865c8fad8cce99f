// `kport build`: queue, follow, report. Progress goes to stderr (one rewritten line on
// a terminal, a line per change otherwise); the table and verdict go to stdout.
#include "kport/cli/cli.h"

#include <unistd.h>

#include <chrono>
#include <ostream>
#include <thread>

#include "kport/common/options.h"
#include "kport/http/client.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

struct Reply {
  int status = 0;
  json::value body;
  std::string error;  // transport failure or the server's error message
};

class Api {
 public:
  Api(std::string server, std::string token) : m_server(std::move(server)), m_token(std::move(token)) {
    while (!m_server.empty() && m_server.back() == '/') m_server.pop_back();
  }
  Reply call(std::string_view method, const std::string& path, const json::value* body = nullptr) {
    http::HeaderList h;
    if (!m_token.empty()) h.emplace_back("Authorization", "Bearer " + m_token);
    auto r = m_client.fetch(method, m_server + path, body ? json::serialize(*body) : std::string(), h);
    Reply out;
    if (!r.ok()) {
      out.error = "cannot reach the coordinator at " + m_server + ": " + r.error().message;
      return out;
    }
    out.status = r->status;
    boost::system::error_code ec;
    out.body = json::parse(r->body, ec);
    if (r->status >= 400) {
      out.error = "HTTP " + std::to_string(r->status);
      if (!ec && out.body.is_object())
        if (const auto* e = out.body.as_object().if_contains("error"); e && e->is_object())
          out.error = std::string(e->as_object().at("message").as_string());
    }
    return out;
  }

 private:
  std::string m_server, m_token;
  http::Client m_client;
};

bool is_target(const std::string& t) {
  if (t.size() < 5 || t.rfind("sm_", 0) != 0) return false;
  std::string digits = t.substr(3);
  if (digits.back() == 'a' || digits.back() == 'f') digits.pop_back();
  return digits.size() >= 2 && digits.size() <= 3 && digits.find_first_not_of("0123456789") == std::string::npos;
}

std::string str(const json::value& v, std::string_view key) {
  if (!v.is_object()) return {};
  const auto* x = v.as_object().if_contains(key);
  return x && x->is_string() ? std::string(x->as_string()) : std::string();
}

// The repository to build from: --repo, or the only one registered.
int pick_repo(Api& api, std::string& repo, std::ostream& err) {
  if (!repo.empty()) return k_exit_ok;
  auto r = api.call("GET", "/api/v1/repositories");
  if (!r.error.empty()) {
    err << "kport: " << r.error << "\n";
    return k_exit_unavailable;
  }
  const auto& items = r.body.as_object().at("items").as_array();
  if (items.size() == 1) {
    repo = str(items[0], "name");
    return k_exit_ok;
  }
  err << "kport build: name the repository with --repo (" << items.size() << " are registered:";
  for (const auto& i : items) err << " " << str(i, "name");
  err << ")\n";
  return k_exit_usage;
}

int build(Api& api, const Options& o, std::ostream& out, std::ostream& err) {
  std::string commit = o.get("commit"), target = o.get("target"), repo = o.get("repo");
  if (commit.empty() || target.empty()) {
    err << "kport build: --commit REV and --target TARGET are required, e.g. kport build --commit 3f2a9c1 --target sm_100a\n";
    return k_exit_usage;
  }
  if (!is_target(target)) {
    err << "kport build: '" << target << "' is not an nvcc target; expected sm_<number>[a|f], e.g. sm_90a\n";
    return k_exit_usage;
  }
  if (int rc = pick_repo(api, repo, err); rc != k_exit_ok) return rc;
  json::value body = json::object{{"commit", commit}, {"repo", repo}, {"targets", json::array{target}}, {"reason", "manual"},
                                  {"note", "kport build --commit " + commit + " --target " + target}};
  auto p = api.call("POST", "/api/v1/pipelines", &body);
  if (!p.error.empty()) {
    err << "kport build: the coordinator refused the build: " << p.error << "\n";
    return p.status == 0 ? k_exit_unavailable : p.status == 401 || p.status == 403 ? k_exit_unavailable : k_exit_usage;
  }
  const auto& jobs = p.body.as_object().at("jobs").as_array();
  if (jobs.empty()) {
    err << "kport build: the pipeline has no build job\n";
    return k_exit_failed;
  }
  std::int64_t job = jobs[0].as_object().at("id").to_number<std::int64_t>();
  err << "queued pipeline " << p.body.as_object().at("id").to_number<std::int64_t>() << ", build job " << job << " ("
      << commit << " on " << target << ")\n";

  const bool tty = ::isatty(2);
  auto start = std::chrono::steady_clock::now();
  auto limit = std::chrono::seconds(std::stoll(o.get("timeout")));
  std::string status, last_line;
  json::value j;
  for (;;) {
    auto r = api.call("GET", "/api/v1/jobs/" + std::to_string(job));
    if (!r.error.empty()) {
      err << "\nkport build: " << r.error << "\n";
      return k_exit_unavailable;
    }
    j = r.body;
    status = str(j, "status");
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count();
    std::string line = "[job " + std::to_string(job) + " " + target + "] " + status;
    if (const auto* a = j.as_object().if_contains("attempt"); a && a->is_number() && a->to_number<std::int64_t>() > 0)
      line += " (attempt " + std::to_string(a->to_number<std::int64_t>()) + ")";
    if (tty) err << "\r" << line << " " << secs << " s   " << std::flush;
    else if (line != last_line) err << line << "\n";
    last_line = line;
    if (status == "succeeded" || status == "failed" || status == "cancelled") break;
    if (std::chrono::steady_clock::now() - start > limit) {
      err << (tty ? "\n" : "") << "kport build: job " << job << " is still " << status << " after " << limit.count()
          << " s (is a build runner for " << target << " online? GET /api/v1/runners)\n";
      return k_exit_failed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoll(o.get("poll-ms"))));
  }
  if (tty) err << "\n";
  auto b = api.call("GET", "/api/v1/builds?target=" + target + "&limit=1000");
  json::array mine;
  if (b.error.empty())
    for (const auto& rec : b.body.as_object().at("items").as_array())
      if (const auto* id = rec.as_object().if_contains("job"); id && id->is_number() && id->to_number<std::int64_t>() == job)
        mine.push_back(rec);
  if (!mine.empty()) out << format_build_table(mine);
  if (status == "succeeded") {
    out << "build of " << commit << " for " << target << " succeeded (" << mine.size() << " records)\n";
    return k_exit_ok;
  }
  out << "build of " << commit << " for " << target << " " << status << ": " << str(j, "failure_reason") << "\n";
  return k_exit_failed;
}

}  // namespace

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  Options o("kport", "kport command-line client.\n\nCommands:\n  build --commit REV --target TARGET [--repo NAME]"
                     "   queue a build, follow it, print the per-variant table");
  o.add("server", "KPORT_SERVER", "http://127.0.0.1:8080", "coordinator URL")
      .add("token", "KPORT_TOKEN", "", "admin token (queuing builds needs it)")
      .add("commit", "", "", "build: commit (sha, branch or tag) to build")
      .add("target", "", "", "build: nvcc target, e.g. sm_100a")
      .add("repo", "", "", "build: repository name (default: the only one registered)")
      .add("timeout", "KPORT_CLI_TIMEOUT", "7200", "build: seconds to follow the job before giving up")
      .add("poll-ms", "", "1000", "build: milliseconds between progress polls");
  if (auto st = o.parse(argc, argv); !st.ok()) {
    err << "kport: " << st.error().message << "\n";
    return k_exit_usage;
  }
  if (o.help_requested() || o.positional().empty()) {
    (o.help_requested() ? out : err) << o.help_text();
    return o.help_requested() ? k_exit_ok : k_exit_usage;
  }
  for (const char* n : {"timeout", "poll-ms"})
    if (!o.integer(n, 1, 10'000'000).ok()) {
      err << "kport: --" << n << " must be a positive number\n";
      return k_exit_usage;
    }
  Api api(o.get("server"), o.get("token"));
  const std::string& cmd = o.positional()[0];
  if (cmd == "build") return build(api, o, out, err);
  err << "kport: unknown command '" << cmd << "'; try kport --help\n";
  return k_exit_usage;
}

}  // namespace kport::cli
