// The one seam between kport and the machine it runs on: child processes, the wall
// clock and whole-file reads and writes. Production code takes an Env& (default
// Env::system()); a test derives from Env and overrides only what it injects, a slow or
// failing child, a clock it moves, a disk that fills, so a fault reaches the code
// through the same calls production makes.
//
// Thread-safety: Env::system() is safe from any thread; a test's Env says its own.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/process.h"
#include "kport/common/result.h"

namespace kport {

class Env {
 public:
  virtual ~Env() = default;

  // A child process (process.h: argv without a shell, limits, captured output).
  virtual Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});
  // Unix milliseconds.
  virtual std::int64_t now_unix_ms();
  // The whole file. not_found when absent; io errors are internal with the path.
  virtual Result<std::string> read_file(const std::filesystem::path& path);
  // Writes `bytes` to a temporary beside `path` and renames it over `path`, so a reader
  // sees the old file or the new one, never a part.
  virtual Status write_file(const std::filesystem::path& path, std::string_view bytes);

  // The machine itself.
  static Env& system();
};

}  // namespace kport
