// Running kport-harness for a GPU runner: every call is its own subprocess, pinned to one
// GPU, with a wall-clock limit. A fault, a hang or unreadable output ends that subprocess,
// never the runner, and becomes a result ("crashed", "timeout") with what was seen.
//
// run_instance() checks an instance over its grid in one process; when that process ends
// abnormally, the cases it did not report are re-run one process each, so a fault costs
// only the case that caused it. After every abnormal end the GPU is checked (the
// harness's `device` command) before anything else runs on it. Cases whose numerics
// passed are then timed (bench) the same way, in sampling.rounds processes one after the
// other: a figure is the median of the rounds' medians, which halves the offset one
// process's memory placement and GPU state give a figure (measured on an H200: per-figure
// spread about 0.2 % between processes; docs/BENCHMARKS.md).
#pragma once

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kport/common/result.h"
#include "kport/runner/check_job.h"
#include "kport/porting/subprocess.h"

namespace kport::runner {

struct HarnessCase {
  std::string instance, family, variant, dtype, shape;
  std::string key() const { return dtype + "|" + shape; }
};

struct CaseOutcome {
  HarnessCase c;
  std::string status;          // passed, failed, crashed, timeout, unsupported
  std::string message;
  boost::json::object check;   // the harness's check entry (numerics); may be empty
  boost::json::object bench;   // its bench entry (timing); empty when not measured
  std::uint64_t seed = 0;
};

struct HarnessOptions {
  std::filesystem::path harness;
  std::vector<std::string> env;                  // CUDA_VISIBLE_DEVICES=<uuid>, ...
  double kernel_timeout_s = 60;                  // the harness's own watchdog (--timeout-s)
  std::chrono::seconds process_timeout{900};     // a whole-grid process; one case gets a third
  BenchSampling sampling;
  bool bench = true;
  const std::atomic<bool>* cancel = nullptr;
};

// Combines the bench entries of one case from several rounds: the median of the rounds'
// medians (the mean of the middle two for an even count), the rates and the baseline
// ratio rescaled to it, each round's median and samples under timing.rounds, their
// spread under timing.round_spread, samples and throttle drops summed, the lowest and
// highest clock read over all rounds. One entry comes back unchanged.
boost::json::object combine_bench_rounds(const std::vector<boost::json::object>& rounds);

class Harness {
 public:
  using Log = std::function<void(const std::string&)>;
  Harness(HarnessOptions options, Log log) : m_opt(std::move(options)), m_log(std::move(log)) {}

  // `list`: the instances built into this harness.
  Result<boost::json::object> list();
  // `device`: the GPU as the harness sees it; an error means the GPU is not usable.
  Result<boost::json::object> device();
  // The cases `check --all --instance` or `bench --all --instance` would run.
  Result<std::vector<HarnessCase>> plan(const std::string& command, const std::string& instance);
  // Checks then benches one instance. Error only when the GPU failed its health check
  // (the caller must stop using it) or the run was cancelled; per-case faults are outcomes.
  Result<std::vector<CaseOutcome>> run_instance(const std::string& instance);

  // Wall seconds spent in check and bench subprocesses so far (health checks excluded).
  double check_seconds() const { return m_seconds[0]; }
  double bench_seconds() const { return m_seconds[1]; }

 private:
  struct RunResult {
    std::vector<boost::json::object> entries;  // the report's "results"
    std::uint64_t seed = 0;
    bool clean = false;                        // exited 0/1 with a readable report
    std::string status;                        // when not clean: crashed or timeout
    std::string message;
  };
  RunResult run(const std::vector<std::string>& args, std::chrono::seconds limit);
  // A quick command (list, device, --plan): its output and the JSON document in it.
  struct Answer {
    porting::ProcessOutput out;
    std::optional<boost::json::object> doc;
  };
  Result<Answer> ask(const std::vector<std::string>& args, std::chrono::seconds limit);
  // Runs `command` over `cases` (the whole grid in one process when `grid`); fills `done`.
  Status run_cases(const std::string& command, const std::string& instance, const std::vector<HarnessCase>& cases, bool grid,
                   std::vector<CaseOutcome>& done);
  Status health_check(const std::string& after);
  bool cancelled() const { return m_opt.cancel && m_opt.cancel->load(); }

  HarnessOptions m_opt;
  Log m_log;
  double m_seconds[2] = {0, 0};
};

}  // namespace kport::runner
