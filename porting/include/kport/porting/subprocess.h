// Running a tool as a child process: argv (no shell), a working directory, a wall-clock
// limit, stdout and stderr merged into one captured text.
//
// A child that outlives its limit is killed with its whole process group (nvcc spawns
// cicc and ptxas; killing only nvcc would leave a hung ptxas behind) and reported as
// timed_out. Thread-safe: each call owns its child. Errors (Result): the program could
// not be started (not_found) or the pipe could not be created (internal).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "kport/common/result.h"

namespace kport::porting {

struct ProcessOutput {
  int exit_code = -1;      // the child's exit status; 128+signal when a signal ended it
  bool timed_out = false;  // killed at the limit
  bool cancelled = false;  // killed because `cancel` was set
  std::string output;      // stdout and stderr, interleaved as written (capped, see below)
};

struct ProcessOptions {
  std::filesystem::path cwd;                     // empty: inherit
  std::chrono::milliseconds timeout{600'000};   // zero: no limit
  std::size_t output_limit = 8u << 20;           // bytes kept; the rest is dropped
  std::vector<std::string> env;                  // extra NAME=value entries
  const std::atomic<bool>* cancel = nullptr;     // set: the group is killed within ~1 s
};

Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Where `name` resolves on PATH (or itself when it contains a '/'); empty when absent.
std::filesystem::path find_program(const std::string& name);

}  // namespace kport::porting
