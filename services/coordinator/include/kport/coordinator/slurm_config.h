// Settings of the coordinator's Slurm dispatch (see src/slurm_dispatch.h): when check
// jobs wait for an arch no runner serves, runner jobs are submitted with sbatch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kport::coordinator {

struct SlurmConfig {
  std::string partition;                  // empty: dispatch is off
  std::string script;                     // the sbatch file (deploy/slurm/kport-runner.sbatch)
  std::string server_url;                 // URL the runners call; empty: http://<listen address>
  std::string token_file;                 // registration token file; empty: the one beside the database
  std::vector<std::string> roles{"gpu"};  // gpu: awaiting-runner checks; build: uncovered build jobs
  std::vector<std::string> extra_args;    // more sbatch arguments, e.g. --account=ml
  std::string gpu_constraint;             // e.g. "sm{arch}": --constraint per arch ("{arch}" -> 90); empty: none
  std::string log_dir;                    // runner job output; empty: slurm/ beside the database
  std::string sbatch = "sbatch", squeue = "squeue";
  std::string job_name = "kport-runner";
  int max_jobs = 4;                   // runner jobs pending or running at once, in total
  int runner_max_jobs = 0;            // KPORT_MAX_JOBS for the runners (0: until their time limit)
  std::int64_t interval_ms = 10'000;  // how often demand and squeue are read
  std::int64_t backoff_ms = 30'000;   // first wait after a failure; doubles up to 32x
  std::int64_t command_timeout_ms = 30'000;
};

}  // namespace kport::coordinator
