// kport-runner: a thin edge over kport::runner. Options and signals here; the loop in
// runner.cpp.
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <iostream>

#include "kport/common/log.h"
#include "kport/common/options.h"
#include "kport/runner/local_build.h"
#include "kport/runner/runner.h"

namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }
}  // namespace

int main(int argc, char** argv) {
  kport::Options o("kport-runner", "Claims build jobs from a kport coordinator, builds every kernel variant "
                                   "for the job's target and uploads records and artifacts.");
  char host[256] = "runner";
  ::gethostname(host, sizeof host - 1);
  std::string nvcc = std::filesystem::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "nvcc";
  o.add("role", "KPORT_RUNNER_ROLE", "build", "runner role; this build supports 'build'")
      .add("server", "KPORT_SERVER", "", "coordinator URL, e.g. http://127.0.0.1:8080")
      .add("registration-token", "KPORT_REGISTRATION_TOKEN", "", "the coordinator's registration token")
      .add("workdir", "KPORT_WORKDIR", "var/runner", "workspaces (repos/) and build trees (build/)")
      .add("name", "KPORT_RUNNER_NAME", std::string(host) + "-" + std::to_string(::getpid()), "name shown by the coordinator")
      .add("nvcc", "KPORT_NVCC", nvcc, "the CUDA compiler to build with")
      .add("catalog", "KPORT_CATALOG", KPORT_CATALOG_DEFAULT, "targets.json used when a commit carries none")
      .add("jobs", "KPORT_JOBS", "0", "parallel compiles (0: one per core)")
      .add("compile-timeout", "KPORT_COMPILE_TIMEOUT", "900", "seconds before a compile is killed as hung")
      .add("claim-wait", "KPORT_CLAIM_WAIT", "30", "long-poll seconds per claim")
      .add("max-jobs", "KPORT_MAX_JOBS", "0", "exit after this many jobs (0: run until SIGTERM)")
      .add("build-local", "", "", "build this kernels tree locally (no coordinator) and exit")
      .add("target", "", "", "with --build-local: the nvcc target")
      .add("build-dir", "", "", "with --build-local: the build tree (default: <workdir>/build/local/<target>)")
      .add("log-level", "KPORT_LOG_LEVEL", "info", "trace, debug, info, warn, error");
  if (auto st = o.parse(argc, argv); !st.ok()) {
    std::cerr << "kport-runner: " << st.error().message << "\n" << o.help_text();
    return 2;
  }
  if (o.help_requested()) {
    std::cout << o.help_text();
    return 0;
  }
  kport::log::Level level = kport::log::Level::info;
  kport::log::parse_level(o.get("log-level"), level);
  kport::log::init("kport-runner", level);
  if (o.get("role") != "build") {
    std::cerr << "kport-runner: --role " << o.get("role") << " is not supported by this runner; use --role build\n";
    return 2;
  }
  auto number = [&](const char* name, std::int64_t lo, std::int64_t hi) -> std::int64_t {
    auto v = o.integer(name, lo, hi);
    if (!v.ok()) {
      std::cerr << "kport-runner: " << v.error().message << "\n";
      std::exit(2);
    }
    return *v;
  };
  if (!o.get("build-local").empty()) {
    if (o.get("target").empty()) {
      std::cerr << "kport-runner: --build-local needs --target, e.g. --target sm_90a\n";
      return 2;
    }
    kport::runner::LocalBuild l;
    l.kernels_dir = std::filesystem::absolute(o.get("build-local")).string();
    l.target = o.get("target");
    l.build_dir = o.get("build-dir").empty() ? (std::filesystem::absolute(o.get("workdir")) / "build" / "local" / l.target).string()
                                             : std::filesystem::absolute(o.get("build-dir")).string();
    l.catalog_file = o.get("catalog");
    l.nvcc = o.get("nvcc");
    l.jobs = static_cast<int>(number("jobs", 0, 1024));
    l.compile_timeout = std::chrono::seconds(number("compile-timeout", 1, 86400));
    return kport::runner::build_locally(l, std::cout, std::cerr);
  }
  if (o.get("server").empty() || o.get("registration-token").empty()) {
    std::cerr << "kport-runner: --server and --registration-token are required\n";
    return 2;
  }
  kport::runner::RunnerConfig c;
  c.server = o.get("server");
  c.registration_token = o.get("registration-token");
  c.name = o.get("name");
  c.workdir = std::filesystem::absolute(o.get("workdir"));
  c.nvcc = o.get("nvcc");
  c.catalog_file = o.get("catalog");
  c.jobs = static_cast<int>(number("jobs", 0, 1024));
  c.compile_timeout = std::chrono::seconds(number("compile-timeout", 1, 86400));
  c.claim_wait = std::chrono::seconds(number("claim-wait", 0, 300));
  c.max_jobs = static_cast<int>(number("max-jobs", 0, 1'000'000));
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  kport::runner::Runner runner(std::move(c));
  int rc = runner.run(g_stop);
  kport::log::flush();
  return rc;
}
