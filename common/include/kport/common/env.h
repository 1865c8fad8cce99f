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
#include <utility>
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

// `base` with environment variables ("NAME=value") added to every child it starts, as a
// kernel library's manifest asks for its build and its harness processes: after the
// child's own entries, so those win, and before the machine's, so these win over it.
// Everything else is `base`'s. Thread-safe as `base` is.
class EnvWithVars final : public Env {
 public:
  EnvWithVars(Env& base, std::vector<std::string> vars) : m_base(base), m_vars(std::move(vars)) {}
  Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions& options) override {
    if (m_vars.empty()) return m_base.run_process(argv, options);
    ProcessOptions o = options;
    o.env.insert(o.env.end(), m_vars.begin(), m_vars.end());
    return m_base.run_process(argv, o);
  }
  std::int64_t now_unix_ms() override { return m_base.now_unix_ms(); }
  Result<std::string> read_file(const std::filesystem::path& path) override { return m_base.read_file(path); }
  Status write_file(const std::filesystem::path& path, std::string_view bytes) override {
    return m_base.write_file(path, bytes);
  }

 private:
  Env& m_base;
  std::vector<std::string> m_vars;
};

}  // namespace kport
