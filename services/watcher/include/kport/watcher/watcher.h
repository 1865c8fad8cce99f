// kport-watcher: notices what should be validated and asks the coordinator for it.
//
//   toolkit  the installed nvcc lists a target the coordinator has never seen: register
//            it (features from the catalog, derived when the catalog lacks it) and open
//            a new_target pipeline building every variant for it at the head of the
//            configured branch; its checks wait as awaiting_runner until a runner of
//            that arch registers, then run.
//   fleet    a registered runner reported a GPU model or a driver version never seen:
//            POST /api/v1/revalidations, which checks the current builds on it and
//            compares the results with the previous driver's.
//   git      a watched branch (a local path or a URL, fetched with libgit2) points at a
//            commit with no pipeline yet: record it and open a push pipeline.
// State lives in the coordinator (targets, pipelines, revalidations), so a restarted
// watcher neither repeats nor misses anything. Errors of one watch are reported and
// do not stop the others. Not thread-safe; one Watcher per thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kport/common/result.h"
#include "kport/common/log.h"
#include "kport/porting/catalog.h"

namespace kport::watcher {

struct WatchedRepo {
  std::string name;                   // the repository's name at the coordinator
  std::string url;                    // local path or URL libgit2 can fetch
  std::vector<std::string> branches;  // "main"
};

struct Config {
  std::string server, token;
  std::string ca_file;  // https: CA certificates to trust; empty: the system store
  std::chrono::seconds interval{60};
  bool toolkit = true, fleet = true, git = true;  // which watches run
  std::string nvcc = "nvcc";
  std::string catalog;  // targets.json
  std::vector<WatchedRepo> repos;
  std::string toolkit_repo;  // builds of a new target use this repository's first branch (default: the first repo)
  std::string workdir = "var/watcher";  // libgit2 workspaces
  bool once = false;
  log::Settings log;  // --log-level, --log-format
};

// Parses "NAME=URL#BRANCH[,BRANCH...]" entries separated by whitespace.
Result<std::vector<WatchedRepo>> parse_repos(std::string_view text);
// Flags, KPORT_* environment and the --config file (name = value per line). Sets `help`
// for --help or --version; `help_text` then holds what to print before exiting 0.
Result<Config> parse_config(int argc, const char* const* argv, bool& help, std::string& help_text);

// What one round did, for logs and tests.
struct Report {
  std::vector<std::string> new_targets;    // registered, with a bring-up pipeline each
  std::vector<std::string> revalidations;  // "NVIDIA H200 580.65.06"
  std::vector<std::string> new_commits;    // "kernels main <sha>"
  std::vector<std::string> errors;         // one line per failed watch step
};

class Watcher {
 public:
  // `probe` replaces nvcc (tests inject a listing); null uses config.nvcc.
  explicit Watcher(Config config, std::unique_ptr<porting::ToolkitProbe> probe = nullptr);
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  Report run_once();
  // Rounds every interval until `stop` becomes true (checked every 200 ms).
  void run(const std::atomic<bool>& stop);

  class Impl;

 private:
  std::unique_ptr<Impl> m_impl;
};

}  // namespace kport::watcher
