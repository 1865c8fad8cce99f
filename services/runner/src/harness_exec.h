// Running kport-harness for a GPU runner: every call is its own subprocess, pinned to one
// GPU, with a wall-clock limit. A fault, a hang or unreadable output ends that subprocess,
// never the runner, and becomes a result ("crashed", "timeout") with what was seen. The
// report is read from the harness's stdout alone, which the protocol makes one JSON
// document; stderr (driver warnings, library chatter) goes to the job log and, when a run
// ends abnormally, into the result's message.
//
// check() runs cases (of one instance or several) in one process; when that process ends
// abnormally, the first case it did not report runs alone (so the fault is that case's)
// and the rest go on in a new process: a fault costs only the case that caused it. After
// every abnormal end the GPU is checked (the harness's `device` command) before anything
// else runs on it.
//
// time() measures the cases whose numerics passed, in two stages (successive halving).
// Where several instances run the same (family, dtype, shape), each is screened first: a
// short measurement of every case, one process per instance. Only the cases within the
// screen margin of that shape's fastest screen (widened by the screens' own noise) are
// then measured precisely, all of them in one process per round, sampling.rounds rounds
// one after the other: a figure is the median of the rounds' medians, which halves the
// offset one process's memory placement and GPU state give a figure (measured on an H200:
// per-figure spread about 0.2 % between processes; docs/BENCHMARKS.md). Cases whose rounds
// disagree (combine_bench_rounds) get up to sampling.remeasure_rounds further rounds. A
// case no other instance competes for goes straight to the precise rounds; the others keep
// their screen figure, marked "precision": "screen" (a winner or a tie is never one), with
// the vendor baseline the precise rounds measured for that shape.
//
#pragma once

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench_rounds.h"
#include "kport/api/harness_report.h"
#include "kport/common/env.h"
#include "kport/common/result.h"
#include "kport/runner/check_job.h"
#include "kport/common/process.h"

namespace kport::runner {

struct HarnessCase {
  std::string instance, family, variant, dtype, shape;
  std::string key() const { return instance + "|" + dtype + "|" + shape; }
  std::string problem() const { return family + "|" + dtype + "|" + shape; }  // what instances compete on
  std::string spec() const { return instance + ":" + dtype + ":" + shape; }   // the harness's --case
};

struct CaseOutcome {
  HarnessCase c;
  std::string status;  // passed, failed, crashed, timeout, unsupported
  std::string message;
  api::HarnessEntry check;                  // the harness's check entry (numerics); empty when it reported none
  boost::json::object bench;                // its figure in the harness's entry form (combined rounds or a
                                            // screen, read with api::parse_harness_entry); empty when not measured
  boost::json::object screen;               // its screen entry, when it was screened
  std::optional<std::uint64_t> seed;        // the check's input seed, as the harness reported it
  std::optional<std::uint64_t> bench_seed;  // the bench's input seed (every round uses the same)
  // Arguments after the harness path that replay this case alone, exactly: empty when the
  // harness reported no seed for it.
  std::vector<std::string> check_args, bench_args;
};

struct HarnessOptions {
  std::filesystem::path harness;
  // A re-measure's baseline harness: each precise round of it runs just before the same
  // round of `harness` (A/B/A/B), and its combined figure goes under timing.paired.
  std::filesystem::path paired_harness;
  std::string paired_commit, paired_sha256;
  std::vector<std::string> env;               // CUDA_VISIBLE_DEVICES=<uuid>, ...
  double kernel_timeout_s = 60;               // the harness's own watchdog (--timeout-s)
  std::chrono::seconds process_timeout{900};  // a whole-grid process; one case gets a third
  BenchSampling sampling;
  bool bench = true;
  std::optional<std::uint64_t> seed;  // base seed; unset: a fresh random one per run
  const std::atomic<bool>* cancel = nullptr;
  // Every harness process starts through it; null: Env::system(). A test's Env injects a
  // killed, hung or unstartable harness there.
  Env* machine = nullptr;
};

class Harness {
 public:
  using Log = std::function<void(const std::string&)>;
  Harness(HarnessOptions options, Log log) : m_opt(std::move(options)), m_log(std::move(log)) {}

  // `list`: the instances built into this harness.
  Result<boost::json::object> list();
  // `device`: the GPU as the harness sees it; an error means the GPU is not usable.
  Result<boost::json::object> device();
  // The cases `check --all --instance` or `bench --all --instance --dtype all` would run.
  Result<std::vector<HarnessCase>> plan(const std::string& command, const std::string& instance);
  // Checks `cases`. Error only when the GPU failed its health check (the caller must stop
  // using it), the run was cancelled (conflict) or the harness's report is not one this
  // runner reads (unprocessable: a schema_version it does not know); per-case faults are
  // outcomes.
  Result<std::vector<CaseOutcome>> check(const std::vector<HarnessCase>& cases);
  // Times the outcomes that passed and whose key is in `to_time` (screen, then precise
  // rounds); errors as check().
  Status time(std::vector<CaseOutcome>& outcomes, const std::set<std::string>& to_time);

  // Wall seconds spent in check, screen and precise bench subprocesses so far (health
  // checks excluded), and how many cases each stage timed.
  double check_seconds() const { return m_seconds[0]; }
  double screen_seconds() const { return m_seconds[1]; }
  double bench_seconds() const { return m_seconds[2]; }
  int screened_cases() const { return m_screened; }
  int precise_cases() const { return m_precise; }

 private:
  Env& machine() const { return m_opt.machine ? *m_opt.machine : Env::system(); }
  struct RunResult {
    std::vector<api::HarnessEntry> entries;  // the report's "results"
    bool clean = false;                      // exited 0/1 with a readable report
    std::optional<Error> unreadable;         // the report is JSON but not of a version read here
    std::optional<Error> unstartable;        // the harness did not start at all (run_process's error)
    std::string status;                      // when not clean: crashed or timeout
    std::string message;
  };
  RunResult run(const std::vector<std::string>& args, std::chrono::seconds limit, int stage = 0);
  // A quick command (list, device, --plan): its output and the JSON document in it.
  struct Answer {
    kport::ProcessOutput out;
    std::optional<boost::json::object> doc;
  };
  Result<Answer> ask(const std::vector<std::string>& args, std::chrono::seconds limit);
  // Runs `stage` (check, screen or bench) over `cases`, whose outcomes are in `slot`: check
  // fills status, numerics and seed; screen and bench put each measured entry in `entries`
  // and turn a case that faults into a crashed/timeout outcome.
  Status run_cases(const std::string& stage, const std::vector<HarnessCase>& cases, std::uint64_t seed,
                   std::map<std::string, CaseOutcome*>& slot, std::map<std::string, boost::json::object>* entries);
  // The options every run of `stage` gets besides its selection and seed.
  std::vector<std::string> flags(const std::string& stage) const;
  Status health_check(const std::string& after);
  bool cancelled() const { return m_opt.cancel && m_opt.cancel->load(); }

  HarnessOptions m_opt;
  Log m_log;
  double m_seconds[3] = {0, 0, 0};
  int m_screened = 0, m_precise = 0;
};

}  // namespace kport::runner
