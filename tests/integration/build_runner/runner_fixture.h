// A coordinator, a bare repository holding the fixture kernels tree, and a
// kport-runner --role build child process started on demand.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "coordinator_fixture.h"

namespace kport::testing {

inline std::string shell_out(const std::string& cmd) {
  std::string text;
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[256];
  while (p && std::fgets(buf, sizeof buf, p)) text += buf;
  if (p) ::pclose(p);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// The runner builds with /usr/local/cuda/bin/nvcc when present, else nvcc on PATH.
inline bool nvcc_available() {
  return std::filesystem::exists("/usr/local/cuda/bin/nvcc") || std::system("command -v nvcc > /dev/null 2>&1") == 0;
}

// Whether the build driver will find a disassembler for the SASS audit (the same rule:
// cuobjdump beside the toolkit's nvcc, else on PATH).
inline bool disassembler_available() {
  return std::filesystem::exists("/usr/local/cuda/bin/cuobjdump") ||
         std::system("command -v cuobjdump > /dev/null 2>&1") == 0;
}

class BuildRunnerTest : public CoordinatorTest {
 protected:
  BuildRunnerTest() { max_attempts = 1; }
  ~BuildRunnerTest() override { stop_runner(); }

  // Makes origin.git with the fixture tree under kernels/; returns the commit sha.
  std::string make_repository() {
    namespace fs = std::filesystem;
    fs::path src = dir.path() / "src";
    fs::create_directories(src / "kernels" / "cmake");
    fs::copy(KPORT_FIXTURE_KERNELS, src / "kernels",
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    fs::copy_file(KPORT_KERNELS_CMAKE, src / "kernels" / "cmake" / "kport_kernels.cmake",
                  fs::copy_options::overwrite_existing);
    origin = (dir.path() / "origin.git").string();
    git("git init -q --bare " + origin);
    git("cd " + src.string() +
        " && git init -q -b main && git add -A && git commit -q -m 'fixture kernels'"
        " && git push -q " +
        origin + " main");
    return shell_out("cd " + src.string() + " && git rev-parse HEAD");
  }
  // Commits a change in the source clone and pushes it; returns the new sha.
  std::string commit_change(const std::string& shell_edit, const std::string& message) {
    std::string src = (dir.path() / "src").string();
    git("cd " + src + " && " + shell_edit + " && git add -A && git commit -q -m '" + message + "' && git push -q " +
        origin + " main");
    return shell_out("cd " + src + " && git rev-parse HEAD");
  }
  void git(const std::string& cmd) {
    std::string full =
        "GIT_AUTHOR_NAME=Dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=Dev "
        "GIT_COMMITTER_EMAIL=dev@example.com sh -c \"" +
        cmd + "\" > /dev/null 2>&1";
    ASSERT_EQ(std::system(full.c_str()), 0) << cmd;
  }

  void start_runner(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {KPORT_RUNNER_BIN,
                                     "--role",
                                     "build",
                                     "--server",
                                     url(""),
                                     "--registration-token",
                                     k_registration,
                                     "--workdir",
                                     (dir.path() / "work").string(),
                                     "--name",
                                     "test-builder",
                                     "--claim-wait",
                                     "1",
                                     "--jobs",
                                     "2",
                                     "--compile-timeout",
                                     "300"};
    args.insert(args.end(), extra.begin(), extra.end());
    spawn_runner(std::move(args));
  }
  // Starts kport-runner with `args` (argv[0] first), its output in runner_log.
  void spawn_runner(std::vector<std::string> args) {
    runner_log = dir.path() / "runner.log";
    runner_pid = spawn_process(std::move(args), runner_log);
  }
  // Starts `args` (argv[0] first) with stdout and stderr in `log`; returns its pid. Every
  // runner it starts takes its GPU locks in this test's own directory: tests running at
  // once use the same fake GPU UUIDs.
  pid_t spawn_process(std::vector<std::string> args, const std::filesystem::path& log) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("KPORT_GPU_LOCK_DIR", (dir.path() / "gpu-locks").c_str(), 1);
      std::freopen(log.c_str(), "w", stdout);
      ::dup2(1, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      _exit(127);
    }
    return pid;
  }
  // SIGTERM; returns the exit status (-1 when it had to be killed).
  int stop_runner(std::chrono::seconds wait = std::chrono::seconds(30)) {
    if (runner_pid <= 0) return -1;
    ::kill(runner_pid, SIGTERM);
    int status = 0;
    for (auto t = std::chrono::milliseconds(0); t < wait; t += std::chrono::milliseconds(100)) {
      if (::waitpid(runner_pid, &status, WNOHANG) == runner_pid) {
        runner_pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(runner_pid, SIGKILL);
    ::waitpid(runner_pid, &status, 0);
    runner_pid = -1;
    return -1;
  }
  std::string runner_output() const {
    std::ifstream in(runner_log);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  int cli(const std::vector<std::string>& args, std::string& output) {
    std::vector<std::string> a = {"--server", url(""), "--token", k_admin, "--poll-ms", "200", "--timeout", "900"};
    a.insert(a.end(), args.begin(), args.end());
    return run_to_exit(KPORT_CLI_BIN, a, output);
  }

  // Build records of one job, keyed by "family.variant".
  std::map<std::string, boost::json::object> records_of(std::int64_t job, const std::string& target) {
    std::map<std::string, boost::json::object> out;
    auto r = get("/api/v1/builds?target=" + target + "&limit=1000");
    for (const auto& rec : r.body.at("items").as_array())
      if (rec.at("job").to_number<std::int64_t>() == job)
        out[std::string(rec.at("family").as_string()) + "." + std::string(rec.at("variant").as_string())] =
            rec.as_object();
    return out;
  }
  // The build job id from the CLI's "queued pipeline N, build job J" line.
  static std::int64_t job_in(const std::string& cli_output) {
    auto p = cli_output.find("build job ");
    return p == std::string::npos ? 0 : std::atoll(cli_output.c_str() + p + 10);
  }

  std::string origin;
  pid_t runner_pid = -1;
  std::filesystem::path runner_log;
};

}  // namespace kport::testing
