// kport-runner --role build: the loop of DESIGN.md's pull protocol.
//
// run() probes the toolkit, registers (capabilities: toolkit version, the targets it can
// build, cores), then long-polls for jobs until `stop` is set. Each job runs with a
// heartbeat thread beside it that extends the lease and turns cancel_requested into a
// cancelled build. Any failure of a job is reported to the coordinator and the loop goes
// on; a lost connection is retried with backoff; a rejected token re-registers. When
// `stop` is set, the job in hand finishes, the runner deregisters and run() returns 0.
// run() returns non-zero only for start-up failures (no toolkit, bad registration token).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>

#include "kport/runner/build_job.h"

namespace kport::runner {

struct RunnerConfig {
  std::string server;              // http://host:port
  std::string registration_token;
  std::string name;                // shown in /api/v1/runners
  std::filesystem::path workdir;
  std::string nvcc = "nvcc";
  std::string catalog_file;        // targets.json used when a commit has none
  int jobs = 0;                    // parallel compiles; 0 = cores
  std::chrono::seconds compile_timeout{900};
  std::chrono::seconds claim_wait{30};
  int max_jobs = 0;                // stop after this many jobs; 0 = no limit (tests)
};

class Runner {
 public:
  explicit Runner(RunnerConfig config);
  // Blocks until stop is set (or max_jobs done); returns the process exit code.
  int run(const std::atomic<bool>& stop);

 private:
  Status register_self();
  void run_job(const ClaimedJob& job);

  RunnerConfig m_config;
  CoordinatorApi m_api;
  BuildSettings m_settings;
  std::string m_token;
  std::chrono::milliseconds m_heartbeat{10'000};
};

}  // namespace kport::runner
