// Running a tool as a child process: argv (no shell), a working directory, a wall-clock
// limit, and its output captured: stdout and stderr merged into one text (a compiler's log
// reads best as written), and, with `split_streams`, each stream on its own as well (a tool
// whose stdout is a report, such as kport-harness, must not have stray stderr mixed in).
//
// A child that outlives its limit is killed with its whole process group (nvcc spawns
// cicc and ptxas; killing only nvcc would leave a hung ptxas behind) and reported as
// timed_out. Thread-safe: each call owns its child. Errors (Result): the program was not
// found (not_found), the kernel would not start it (unavailable, with execve's reason: an
// execve refused as "text file busy" is tried again for half a second first), or a pipe or
// the fork failed (internal).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "kport/common/result.h"

namespace kport {

struct ProcessOutput {
  int exit_code = -1;      // the child's exit status; 128+signal when a signal ended it
  bool timed_out = false;  // killed at the limit
  bool cancelled = false;  // killed because `cancel` was set
  // stdout and stderr, interleaved as written (capped, see below). With split_streams the
  // two are read from separate pipes, so lines of one stream keep their order but the
  // interleaving between streams is only as fine as the reads.
  std::string output;
  std::string stdout_text;  // split_streams only: stdout alone (capped)
  std::string stderr_text;  // split_streams only: stderr alone (capped)
  bool truncated = false;   // some capture reached output_limit and dropped the rest
};

struct ProcessOptions {
  std::filesystem::path cwd;                   // empty: inherit
  std::chrono::milliseconds timeout{600'000};  // zero: no limit
  std::size_t output_limit = 8u << 20;         // bytes kept per capture; the rest is dropped
  bool split_streams = false;                  // also capture stdout and stderr on their own
  std::vector<std::string> env;                // extra NAME=value entries
  const std::atomic<bool>* cancel = nullptr;   // set: the group is killed within ~1 s
};

Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Where `name` resolves on PATH (or itself when it contains a '/'); empty when absent.
std::filesystem::path find_program(const std::string& name);

// While one lives, run_process does not fork in this process. Write a program that this
// process will run under one: a child forked while the file is open for writing would hold
// the descriptor until its own execve, and the kernel refuses to start a program open for
// writing ("text file busy").
class NoForkWhileWriting {
 public:
  NoForkWhileWriting();

 private:
  std::unique_lock<std::shared_mutex> m_lock;
};

}  // namespace kport
