// Running kport-harness for a GPU runner: every call is its own subprocess, pinned to one
// GPU, with a wall-clock limit. A fault, a hang or unreadable output ends that subprocess,
// never the runner, and becomes a result ("crashed", "timeout") with what was seen. The
// report is read from the harness's stdout alone, which the protocol makes one JSON
// document; stderr (driver warnings, library chatter) goes to the job log and, when a run
// ends abnormally, into the result's message.
//
// run_instance() checks an instance over its grid in one process; when that process ends
// abnormally, the cases it did not report are re-run one process each, so a fault costs
// only the case that caused it. After every abnormal end the GPU is checked (the
// harness's `device` command) before anything else runs on it. Cases whose numerics
// passed are then timed (bench) the same way, in sampling.rounds processes one after the
// other: a figure is the median of the rounds' medians, which halves the offset one
// process's memory placement and GPU state give a figure (measured on an H200: per-figure
// spread about 0.2 % between processes; docs/BENCHMARKS.md). Cases whose rounds disagree
// (combine_bench_rounds) get up to sampling.remeasure_rounds further rounds.
//
// Every run gets an explicit --seed and every sampling option, and each outcome carries
// the single-case arguments that replay it (check_args, bench_args): same instance, dtype,
// shape, seed and flags.
#pragma once

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench_rounds.h"
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
  std::optional<std::uint64_t> seed;        // the check's input seed, as the harness reported it
  std::optional<std::uint64_t> bench_seed;  // the bench's input seed (every round uses the same)
  // Arguments after the harness path that replay this case alone, exactly: empty when the
  // harness reported no seed for it.
  std::vector<std::string> check_args, bench_args;
};

struct HarnessOptions {
  std::filesystem::path harness;
  std::vector<std::string> env;                  // CUDA_VISIBLE_DEVICES=<uuid>, ...
  double kernel_timeout_s = 60;                  // the harness's own watchdog (--timeout-s)
  std::chrono::seconds process_timeout{900};     // a whole-grid process; one case gets a third
  BenchSampling sampling;
  bool bench = true;
  std::optional<std::uint64_t> seed;             // base seed; unset: a fresh random one per instance
  const std::atomic<bool>* cancel = nullptr;
};

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
                   std::uint64_t seed, std::vector<CaseOutcome>& done);
  // The options every run of `command` gets besides its selection and seed.
  std::vector<std::string> flags(const std::string& command) const;
  Status health_check(const std::string& after);
  bool cancelled() const { return m_opt.cancel && m_opt.cancel->load(); }

  HarnessOptions m_opt;
  Log m_log;
  double m_seconds[2] = {0, 0};
};

}  // namespace kport::runner
