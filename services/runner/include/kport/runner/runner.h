// kport-runner: the loop of docs/DESIGN.md's pull protocol, shared by both roles.
//
// run() asks the role's JobHandler to prepare (probe the toolkit or the GPU), registers
// with the capabilities the handler reports, then long-polls for jobs until `stop` is set.
// Each job runs with a heartbeat thread beside it that extends the lease and turns
// cancel_requested (or a lost lease) into `cancel` for the handler. Any failure of a job is
// reported to the coordinator and the loop goes on; a lost connection is retried with
// backoff; a rejected token re-registers; while the handler says it is not ready (a GPU
// that failed its health check) nothing is claimed. When `stop` is set, the job in hand
// finishes, the runner deregisters and run() returns 0. run() returns non-zero only for
// start-up failures (no toolkit or GPU, bad registration token).
#pragma once

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "kport/runner/build_job.h"

namespace kport::runner {

using LogFn = std::function<void(const std::string&)>;

// What a role does; the Runner owns the protocol around it.
class JobHandler {
 public:
  virtual ~JobHandler() = default;
  virtual Status prepare() = 0;
  // Who this runner is and what its role can do (POST /api/v1/runners/register).
  virtual Result<api::RunnerRegistration> registration(const std::string& name) = 0;
  virtual JobOutcome run(CoordinatorApi& api, const ClaimedJob& job, const std::atomic<bool>& cancel,
                         const LogFn& log) = 0;
  // Asked before each claim; an error says why this runner must not take work now.
  virtual Status ready() { return {}; }
};

struct RunnerConfig {
  std::string server;   // http://host:port or https://host:port
  std::string ca_file;  // https: CA certificates to trust; empty: the system store
  std::string registration_token;
  std::string name;  // shown in /api/v1/runners
  std::chrono::seconds claim_wait{30};
  int max_jobs = 0;  // stop after this many jobs; 0 = no limit (tests)
};

class Runner {
 public:
  Runner(RunnerConfig config, JobHandler& handler);
  // Blocks until stop is set (or max_jobs done); returns the process exit code.
  int run(const std::atomic<bool>& stop);

 private:
  Status register_self();
  void run_job(const ClaimedJob& job);

  RunnerConfig m_config;
  JobHandler& m_handler;
  CoordinatorApi m_api;
  std::string m_token;
  std::chrono::milliseconds m_heartbeat{10'000};
};

// The build role: the porting driver behind a JobHandler.
class BuildHandler : public JobHandler {
 public:
  BuildHandler(BuildSettings settings, std::string nvcc_probe)
      : m_settings(std::move(settings)), m_nvcc(std::move(nvcc_probe)) {}
  Status prepare() override;
  Result<api::RunnerRegistration> registration(const std::string& name) override;
  JobOutcome run(CoordinatorApi& api, const ClaimedJob& job, const std::atomic<bool>& cancel,
                 const LogFn& log) override;

 private:
  BuildSettings m_settings;
  std::string m_nvcc;
};

}  // namespace kport::runner
