// Slurm dispatch: the coordinator starts runners where work waits for them.
//
// Every interval the dispatcher reads the demand from the store (gpu: check jobs
// awaiting a runner, per arch; build: queued build jobs no online build runner covers)
// and the runner jobs it has in Slurm (squeue --me --name, so a restarted coordinator finds
// its jobs again: the state is never stored). For each demand key it submits
// `sbatch <script>` until the key has as many runner jobs pending or running as it has
// jobs waiting, never more than max_jobs in all. A failed sbatch, or a runner job that
// left Slurm without its runner ever registering, makes the key wait backoff_ms before
// the next try, doubling up to 32x; a runner of that key registering resets it.
//
// Runner jobs carry --comment=kport:<key> (key "gpu:9.0" or "build"); the sbatch
// script names the runner slurm-<job id>-<host>, which is how a job is matched to its
// runner. The programs run through kport::Env (common/), the seam tests inject faults at.
// Thread-safety: tick() and snapshot() may be called from any thread; snapshot() never
// waits for a round in progress (it answers the state the last round published).
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kport/common/env.h"
#include "kport/common/options.h"
#include "kport/common/result.h"
#include "kport/coordinator/config.h"
#include "kport/coordinator/slurm_config.h"
#include "kport/db/store.h"

namespace kport::coordinator {

class SlurmDispatcher {
 public:
  // squeue and sbatch run through `env` (Env::system() in production), as does the clock.
  SlurmDispatcher(SlurmConfig config, db::Store& store, Env& env);
  ~SlurmDispatcher();

  // A thread calling tick() every interval_ms until stop().
  void start();
  void stop();

  // One round: squeue, demand, submissions. Returns how many jobs were submitted.
  int tick(std::int64_t now_ms);

  // What is tracked: {partition, jobs:[{id,key,state}], backoff:{key:{failures,until}}, last_error}.
  boost::json::value snapshot() const;

 private:
  struct Tracked {
    std::string key, state;
  };
  struct Backoff {
    int failures = 0;
    std::int64_t until_ms = 0;
  };

  bool refresh_jobs(std::int64_t now_ms);
  Result<std::map<std::string, int>> demand();
  bool submit(const std::string& key, std::int64_t now_ms);
  void fail(const std::string& key, std::int64_t now_ms, const std::string& why);
  void publish();

  SlurmConfig m_config;
  db::Store& m_store;
  Env& m_env;
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(m_config.command_timeout_ms); }
  std::mutex m_mu;                        // guards the state below; tick() holds it throughout
  std::map<std::string, Tracked> m_jobs;  // Slurm job id -> what it is for
  std::map<std::string, Backoff> m_backoff;
  std::string m_last_error;
  mutable std::mutex m_snapshot_mu;  // guards m_snapshot only, never held across a command
  boost::json::value m_snapshot;
  std::thread m_thread;
  std::mutex m_stop_mu;
  std::condition_variable m_stop_cv;
  bool m_stopping = false;
};

// The --slurm-* options of kport-coordinator, and reading them into a SlurmConfig.
void declare_slurm_options(Options& o);
Status read_slurm_options(const Options& o, SlurmConfig& c);

// Fills what defaults to the running coordinator: the server URL (from the listen
// address and bound port), the token file and the log directory beside the database.
// Errors: the script does not exist, the log directory cannot be made.
Status prepare_slurm_config(SlurmConfig& c, const Config& config, std::uint16_t port);

}  // namespace kport::coordinator
