// kport-runner: a thin edge over kport::runner. Options and signals here; the loop in
// runner.cpp. --role build runs one build runner; --role gpu discovers the GPUs and runs
// one worker a GPU (its own registration, harness subprocesses pinned by
// CUDA_VISIBLE_DEVICES), all stopped together by SIGTERM.
#include <unistd.h>

#include <charconv>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>
#include <vector>

#include "kport/common/install_paths.h"
#include "kport/common/log.h"
#include "kport/common/log_options.h"
#include "kport/common/options.h"
#include "kport/runner/check_job.h"
#include "kport/runner/gpu.h"
#include "kport/runner/local_build.h"
#include "kport/runner/runner.h"

namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }
}  // namespace

int main(int argc, char** argv) {
  kport::Options o("kport-runner",
                   "Claims jobs from a kport coordinator. --role build builds every kernel variant "
                   "for the job's target and uploads records and artifacts; --role gpu checks and "
                   "times every kernel on each local GPU and uploads the results.");
  char host[256] = "runner";
  ::gethostname(host, sizeof host - 1);
  std::string nvcc = std::filesystem::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "nvcc";
  o.add("role", "KPORT_RUNNER_ROLE", "build", "runner role: build or gpu")
      .add("server", "KPORT_SERVER", "", "coordinator URL, e.g. http://127.0.0.1:8080 or https://ci.example.org:8443")
      .add("ca-file", "KPORT_CA_FILE", "",
           "https: PEM CA certificate(s) the coordinator's certificate must chain to (default: the system trust store)")
      .add("registration-token", "KPORT_REGISTRATION_TOKEN", "", "the coordinator's registration token")
      .add("workdir", "KPORT_WORKDIR", "var/runner", "workspaces (repos/) and build trees (build/)")
      .add("name", "KPORT_RUNNER_NAME", std::string(host) + "-" + std::to_string(::getpid()),
           "name shown by the coordinator")
      .add("nvcc", "KPORT_NVCC", nvcc, "the CUDA compiler to build with")
      .add("cuobjdump", "KPORT_CUOBJDUMP", "",
           "the disassembler of the SASS audit (default: cuobjdump beside --nvcc, else on PATH; none found: not "
           "audited)")
      .add("catalog", "KPORT_CATALOG",
           kport::install::data_path_or_default("catalog/targets.json", KPORT_CATALOG_DEFAULT),
           "targets.json used when a commit carries none")
      .add("jobs", "KPORT_JOBS", "0", "parallel compiles (0: one per core)")
      .add("compile-timeout", "KPORT_COMPILE_TIMEOUT", "900", "seconds before a compile is killed as hung")
      .add("claim-wait", "KPORT_CLAIM_WAIT", "30", "long-poll seconds per claim")
      .add("max-jobs", "KPORT_MAX_JOBS", "0", "exit after this many jobs (0: run until SIGTERM)")
      .add("build-local", "", "", "build this kernels tree locally (no coordinator) and exit")
      .add("target", "", "", "with --build-local: the nvcc target")
      .add("build-dir", "", "", "with --build-local: the build tree (default: <workdir>/build/local/<target>)")
      .add("gpus", "KPORT_GPUS", "", "gpu role: a JSON inventory file used instead of nvidia-smi discovery")
      .add("gpu-lock-dir", "KPORT_GPU_LOCK_DIR", "/tmp/kport-gpu-locks",
           "gpu role: where each GPU's host-wide lock file lives (one runner process per GPU; empty: no lock)")
      .add("only-gpus", "KPORT_ONLY_GPUS", "",
           "gpu role: comma-separated indices or UUIDs to run workers for (default: all)")
      .add("nvidia-smi", "KPORT_NVIDIA_SMI", "nvidia-smi", "gpu role: the nvidia-smi program")
      .add("kernel-timeout", "KPORT_KERNEL_TIMEOUT", "60",
           "gpu role: seconds one kernel may run before the harness calls it hung")
      .add("process-timeout", "KPORT_PROCESS_TIMEOUT", "900",
           "gpu role: seconds one harness process may run before it is killed")
      .add("bench-time-cap-ms", "KPORT_BENCH_TIME_CAP_MS", "300", "gpu role: time cap of one measurement")
      .add("bench-warmup-ms", "KPORT_BENCH_WARMUP_MS", "200",
           "gpu role: work before each measurement, so clocks settle")
      .add("bench-min-samples", "KPORT_BENCH_MIN_SAMPLES", "20", "gpu role: fewest timed samples of one measurement")
      .add("bench-max-rse", "KPORT_BENCH_MAX_RSE", "0.003",
           "gpu role: stop sampling below this relative standard error (short kernels need the most samples)")
      .add("bench-max-duty", "KPORT_BENCH_MAX_DUTY", "0.5",
           "gpu role: longest share of time the GPU runs measured work (idle between samples keeps it under its power "
           "cap)")
      .add("bench-rounds", "KPORT_BENCH_ROUNDS", "2",
           "gpu role: bench processes per instance, one after the other; a figure is the median of their medians")
      .add("bench-throttle-threshold", "KPORT_BENCH_THROTTLE_THRESHOLD", "0.97",
           "gpu role: drop a sample when the SM clock after it is below this share of the warm-up's highest clock (0: "
           "keep all)")
      .add("bench-remeasure-rounds", "KPORT_BENCH_REMEASURE_ROUNDS", "2",
           "gpu role: further bench rounds, at most, for a case whose rounds disagree beyond their noise")
      .add("bench-paired-rounds", "KPORT_BENCH_PAIRED_ROUNDS", "4",
           "gpu role: bench rounds of each side, at least, when a re-measure times the baseline's harness beside this "
           "one (A/B/A/B)")
      .add("bench-l2-flush", "KPORT_BENCH_L2_FLUSH", "write",
           "gpu role: how the L2 is emptied before each sample: write, read or off")
      .add("bench-later-warmup-ms", "KPORT_BENCH_LATER_WARMUP_MS", "10",
           "gpu role: warm-up of each measurement after a process's first (whose warm-up brought the clocks up)")
      .add("check-parallel", "KPORT_CHECK_PARALLEL", "0",
           "gpu role: instances checked at once on one GPU, each in its own processes (nothing is timed meanwhile); "
           "0: the host's cores shared among its GPUs")
      .add("bench-screen", "KPORT_BENCH_SCREEN", "on",
           "gpu role: on: where instances compete for a case, time each briefly first and measure precisely only those "
           "within --bench-screen-margin of the fastest; off: measure every case precisely")
      .add("bench-screen-margin", "KPORT_BENCH_SCREEN_MARGIN", "0.05",
           "gpu role: screens this much slower than the fastest (or within 4x their noise) are measured precisely")
      .add("bench-screen-time-cap-ms", "KPORT_BENCH_SCREEN_TIME_CAP_MS", "10", "gpu role: time cap of one screen")
      .add("seed", "KPORT_SEED", "",
           "gpu role: base input seed of every harness run, 0..2^64-1 (default: a fresh random one per instance)")
      .add_flag("no-bench", "KPORT_NO_BENCH", false, "gpu role: check numerics only, time nothing");
  kport::log::add_options(o);
  if (auto st = o.parse(argc, argv); !st.ok()) {
    std::cerr << "kport-runner: " << st.error().message << "\n" << o.help_text();
    return 2;
  }
  if (o.help_requested()) {
    std::cout << o.help_text();
    return 0;
  }
  if (o.version_requested()) {
    std::cout << o.version_text();
    return 0;
  }
  auto log = kport::log::read_options(o);
  if (!log.ok()) {
    std::cerr << "kport-runner: " << log.error().message << "\n";
    return 2;
  }
  kport::log::init("kport-runner", log->level, log->format);
  if (o.get("role") != "build" && o.get("role") != "gpu") {
    std::cerr << "kport-runner: --role must be build or gpu, not '" << o.get("role") << "'\n";
    return 2;
  }
  auto number = [&](const char* name, std::int64_t lo, std::int64_t hi) -> std::int64_t {
    auto v = o.integer(name, lo, hi);
    if (!v.ok()) {
      std::cerr << "kport-runner: " << v.error().message << "\n";
      std::exit(2);
    }
    return *v;
  };
  if (!o.get("build-local").empty()) {
    if (o.get("target").empty()) {
      std::cerr << "kport-runner: --build-local needs --target, e.g. --target sm_90a\n";
      return 2;
    }
    kport::runner::LocalBuild l;
    l.kernels_dir = std::filesystem::absolute(o.get("build-local")).string();
    l.target = o.get("target");
    l.build_dir = o.get("build-dir").empty()
                      ? (std::filesystem::absolute(o.get("workdir")) / "build" / "local" / l.target).string()
                      : std::filesystem::absolute(o.get("build-dir")).string();
    l.catalog_file = o.get("catalog");
    l.nvcc = o.get("nvcc");
    l.cuobjdump = o.get("cuobjdump");
    l.jobs = static_cast<int>(number("jobs", 0, 1024));
    l.compile_timeout = std::chrono::seconds(number("compile-timeout", 1, 86400));
    return kport::runner::build_locally(l, std::cout, std::cerr);
  }
  if (o.get("server").empty() || o.get("registration-token").empty()) {
    std::cerr << "kport-runner: --server and --registration-token are required\n";
    return 2;
  }
  kport::runner::RunnerConfig c;
  c.server = o.get("server");
  c.ca_file = o.get("ca-file");
  c.registration_token = o.get("registration-token");
  c.name = o.get("name");
  c.claim_wait = std::chrono::seconds(number("claim-wait", 0, 300));
  c.max_jobs = static_cast<int>(number("max-jobs", 0, 1'000'000));
  kport::runner::BuildSettings b;
  b.workdir = std::filesystem::absolute(o.get("workdir"));
  b.nvcc = o.get("nvcc");
  b.cuobjdump = o.get("cuobjdump");
  b.catalog_file = o.get("catalog");
  b.jobs = static_cast<int>(number("jobs", 0, 1024));
  b.compile_timeout = std::chrono::seconds(number("compile-timeout", 1, 86400));
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  if (o.get("role") == "build") {
    kport::runner::BuildHandler handler(b, o.get("nvcc"));
    kport::runner::Runner runner(std::move(c), handler);
    int rc = runner.run(g_stop);
    kport::log::flush();
    return rc;
  }

  // Settings shared by every GPU's worker, checked before any worker starts.
  kport::runner::GpuSettings proto;
  proto.nvidia_smi = o.get("nvidia-smi");
  proto.kernel_timeout_s = static_cast<double>(number("kernel-timeout", 1, 86400));
  proto.process_timeout = std::chrono::seconds(number("process-timeout", 5, 86400));
  proto.sampling.time_cap_ms = static_cast<double>(number("bench-time-cap-ms", 1, 600000));
  proto.sampling.warmup_ms = static_cast<double>(number("bench-warmup-ms", 0, 60000));
  proto.sampling.min_samples = static_cast<int>(number("bench-min-samples", 1, 100000));
  proto.sampling.rounds = static_cast<int>(number("bench-rounds", 1, 16));
  proto.sampling.remeasure_rounds = static_cast<int>(number("bench-remeasure-rounds", 0, 16));
  proto.sampling.paired_rounds = static_cast<int>(number("bench-paired-rounds", 1, 16));
  proto.sampling.l2_flush = o.get("bench-l2-flush");
  if (proto.sampling.l2_flush != "write" && proto.sampling.l2_flush != "read" && proto.sampling.l2_flush != "off") {
    std::cerr << "kport-runner: --bench-l2-flush must be write, read or off, not '" << proto.sampling.l2_flush << "'\n";
    return 2;
  }
  const auto check_parallel = static_cast<int>(number("check-parallel", 0, 64));
  proto.sampling.later_warmup_ms = static_cast<double>(number("bench-later-warmup-ms", 0, 60000));
  proto.sampling.screen_time_cap_ms = static_cast<double>(number("bench-screen-time-cap-ms", 1, 600000));
  if (o.get("bench-screen") != "on" && o.get("bench-screen") != "off") {
    std::cerr << "kport-runner: --bench-screen must be on or off, not '" << o.get("bench-screen") << "'\n";
    return 2;
  }
  proto.sampling.screen = o.get("bench-screen") == "on";
  if (const std::string text = o.get("seed"); !text.empty()) {
    // Decimal only, as results show seeds: the same digits go back to the harness's --seed.
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) {
      std::cerr << "kport-runner: --seed must be a decimal number in 0..18446744073709551615, not '" << text << "'\n";
      return 2;
    }
    proto.seed = v;
  }
  const auto fraction = [&](const char* name, double lo, bool lo_open, double& out) {
    char* end = nullptr;
    const std::string text = o.get(name);
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(lo_open ? v > lo : v >= lo) || !(v <= 1)) {
      std::cerr << "kport-runner: --" << name << " must be a number in " << (lo_open ? "(" : "[") << lo << ", 1], not '"
                << text << "'\n";
      return false;
    }
    out = v;
    return true;
  };
  if (!fraction("bench-max-rse", 0.0, true, proto.sampling.max_rse) ||
      !fraction("bench-max-duty", 0.01, false, proto.sampling.max_duty) ||
      !fraction("bench-throttle-threshold", 0.0, false, proto.sampling.throttle_threshold) ||
      !fraction("bench-screen-margin", 0.0, false, proto.sampling.screen_margin))
    return 2;

  auto gpus = o.get("gpus").empty() ? kport::runner::discover_gpus(o.get("nvidia-smi"))
                                    : kport::runner::gpus_from_file(o.get("gpus"));
  if (!gpus.ok()) {
    std::cerr << "kport-runner: no GPU to run on: " << gpus.error().message << "\n";
    return 3;
  }
  if (o.get("gpus").empty()) kport::runner::fill_sm_counts(*gpus);
  if (auto only = o.get("only-gpus"); !only.empty()) {
    std::vector<kport::runner::GpuInfo> kept;
    std::string list = "," + only + ",";
    for (const auto& g : *gpus)
      if (list.find("," + std::to_string(g.index) + ",") != std::string::npos ||
          list.find("," + g.uuid + ",") != std::string::npos)
        kept.push_back(g);
    if (kept.empty()) {
      std::cerr << "kport-runner: --only-gpus " << only << " matches none of the " << gpus->size() << " GPU(s) found\n";
      return 2;
    }
    *gpus = std::move(kept);
  }
  proto.check_parallel = check_parallel > 0
                             ? check_parallel
                             : kport::runner::checks_at_once(std::thread::hardware_concurrency(), gpus->size());
  kport::log::info("checks at once per GPU", {{"check_parallel", proto.check_parallel}});
  std::vector<std::unique_ptr<kport::runner::CheckHandler>> handlers;
  std::vector<std::thread> workers;
  std::vector<int> codes(gpus->size(), 0);
  for (std::size_t i = 0; i < gpus->size(); ++i) {
    const auto& g = (*gpus)[i];
    kport::log::info("GPU found", {{"index", g.index},
                                   {"name", g.name},
                                   {"uuid", g.uuid},
                                   {"arch", g.arch},
                                   {"sms", g.sm_count},
                                   {"driver", g.driver}});
    kport::runner::GpuSettings s = proto;
    s.gpu = g;
    s.workdir = b.workdir / ("gpu" + std::to_string(g.index));
    s.bench = !o.flag("no-bench");
    s.build = b;
    s.build.workdir = b.workdir;  // workspaces and build trees are shared by the GPUs of a host
    s.nvcc_probe = o.get("nvcc");
    s.lock_dir = o.get("gpu-lock-dir");
    handlers.push_back(std::make_unique<kport::runner::CheckHandler>(std::move(s)));
    auto wc = c;
    wc.name = c.name + "-gpu" + std::to_string(g.index);
    // Each GPU's worker is on its own: whatever escapes one (Runner::run catches at its
    // loop, so nothing should) is logged and that worker starts over, the others untouched.
    workers.emplace_back([&, i, wc]() {
      while (!g_stop) {
        try {
          kport::runner::Runner runner(wc, *handlers[i]);
          codes[i] = runner.run(g_stop);
          return;
        } catch (const std::exception& e) {
          kport::log::error("GPU worker failed; starting it again", {{"gpu", wc.name}, {"error", e.what()}});
        } catch (...) {
          kport::log::error("GPU worker failed; starting it again", {{"gpu", wc.name}});
        }
        for (int t = 0; t < 50 && !g_stop; ++t) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  int rc = 0;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    workers[i].join();
    rc = std::max(rc, codes[i]);
  }
  kport::log::flush();
  return rc;
}
