// Command-line parsing of kport-harness. Host-only and side-effect free, so it is tested
// on machines without a GPU.
//
//   kport-harness-<target> --version   (version, git commit, UTC build date and target)
//   kport-harness-<target> --help
//   kport-harness-<target> list
//   kport-harness-<target> device
//   kport-harness-<target> check --instance NAME --dtype bf16 --shape m=..,n=..,k=.. [--seed S]
//   kport-harness-<target> check --all [--instance NAME | --filter TEXT] [--dtype D|all] [--shape S]
//                                [--seed S]
//   kport-harness-<target> bench --instance NAME --dtype D --shape S
//   kport-harness-<target> bench --all [--filter TEXT] [--dtype D|all] [--shape S]
//   kport-harness-<target> check|bench --case INSTANCE:DTYPE:SHAPE [--case ...]   (exactly these
//                                cases, of any instances, in one process; replaces the selection)
// bench options: --time-cap-ms MS (per measurement, default 1500), --max-rse R (default
// 0.005), --warmup-ms MS (default 25), --min-samples N (default 10); --no-baseline skips the
// in-process baseline; --throttle-threshold F (default 0.97), --throttle-recovery-ms MS
// (default 50), --sample-gap-ms MS (default 0), --max-duty F (default 0.5), --warmup-calls N (fewest warm-up calls,
// default 3), --later-warmup-ms MS (warm-up of every case after a process's first, whose
// warm-up already brought the clocks up; default: --warmup-ms), --no-blocker, --l2-flush write|read|off (default write) and --trace (per-sample times and clocks). check and bench: --plan prints the selected cases without touching
// the GPU. check: --reference auto|gpu (gpu: the GPU fp32 reference at every size, not the
// CPU double one for small problems; default auto). Every command: --timeout-s S (kernel
// watchdog, default 60).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "json_out.h"

namespace kport::harness {

// --input-sets auto: at most this many sets, together at most this many bytes of device memory.
inline constexpr int k_auto_input_sets = 16;
inline constexpr double k_auto_input_sets_bytes = 2.0 * 1024 * 1024 * 1024;

struct Options {
  std::string command;   // list, device, check, bench, --version; help or --help: usage
  std::string instance;  // one instance (without --all: one case; with --all: its grid)
  std::string filter;    // --all: instances whose name contains this text
  std::string dtype;     // "bf16", "fp16", "fp32", "all"; empty: per command default
  std::string shape;     // shape spec; empty with --all: the family grid
  // --case INSTANCE:DTYPE:SHAPE, in the order given: exactly these cases (sets `all`, so
  // each case derives its own seed as in a grid run).
  std::vector<std::string> cases;
  std::uint64_t seed = 0;
  bool seed_given = false;
  bool all = false;
  bool baseline = true;
  bool plan = false;  // print the selected cases and exit; no GPU needed
  double time_cap_ms = 1500.0;
  double max_rse = 0.005;
  double warmup_ms = 25.0;
  int warmup_calls = 3;           // fewest warm-up calls of each measurement
  double later_warmup_ms = -1.0;  // warm-up of each case after the first; < 0: warmup_ms
  int min_samples = 10;
  // Throttle handling (nvbench's rule, tighter): a sample after which the SM clock reads
  // below this fraction of the highest clock read in the warm-up (boost, or the clock an
  // administrator locked) is discarded and sampling pauses for
  // throttle_recovery_ms (x1.5 per further discard, at most 500 ms). 0 turns it off.
  double throttle_threshold = 0.97;
  double throttle_recovery_ms = 50.0;
  double sample_gap_ms = 0.0;  // idle after every timed sample
  // Longest share of time the GPU runs the measured work: after a call of t ms it idles
  // t * (1/max_duty - 1) ms, so a power-hungry kernel is timed below its power cap
  // instead of at whatever clock the cap and the GPU's temperature allow. 1: no idling.
  double max_duty = 0.5;
  bool blocker = true;  // queue each sample behind a blocking kernel (no host latency inside)
  bool trace = false;   // per-sample times and clocks in the report
  // How the L2 is emptied before each sample: "write" (memset of twice its size, as
  // nvbench), "read" (a kernel reads twice its size: no dirty lines left) or "off".
  std::string l2_flush = "write";
  // Sets of inputs and outputs a measurement rotates through, one per call (each made from its
  // own seed, the first from the case's), so that a figure is not that of one placement of
  // its buffers in device memory, which differs from process to process. 0: auto (as many
  // as fit k_auto_input_sets_bytes, at most k_auto_input_sets, at least 1).
  int input_sets = 0;
  // check: "auto" (CPU double for small problems, the GPU fp32 reference for large) or
  // "gpu" (the GPU reference at every size, to check it against the CPU one).
  std::string reference = "auto";
  double timeout_s = 60.0;
};

// Parses argv[1..]; on failure returns the error (code "usage") with what was wrong.
std::optional<HarnessError> parse_args(const std::vector<std::string>& args, Options& out);
std::string usage_text();

}  // namespace kport::harness
