// kport-runner --role gpu: one CheckHandler per GPU. A check job (commit, target, arch)
// takes the harness built for its target from the artifact store (verified by sha256 and
// cached under the workdir), or builds it when the build left none; then checks and times
// every instance in it on this GPU, each in its own subprocess (harness_exec.h), and
// uploads one result per (instance, dtype, shape) with its environment: GPU, driver,
// toolkit, clocks around the measurement, temperature, power and clock-event reasons, and
// env.reproduce (the harness's sha256, the exact check and bench arguments: seed and every
// sampling flag). Seeds go up as unsigned 64-bit numbers; a figure whose bench rounds
// still disagree after re-measuring goes up with "unstable": true and says why in its
// message.
//
// The job succeeds when every case passed or was unsupported; numerics failures, faults
// and hangs fail it with a reason naming them (their results are stored either way). A GPU
// that fails its health check fails the job with retry, and the runner takes no work
// until the GPU answers again. A worker registers only once it holds its GPU's host-wide
// lock (GpuLock): two runner processes never run jobs on one GPU at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "kport/runner/gpu.h"
#include "kport/runner/runner.h"

namespace kport::runner {

// How the harness times a case (its bench options) and how many rounds the runner takes.
// Every option is passed to the harness explicitly, so the command a result records
// reproduces it whatever the harness's defaults are.
struct BenchSampling {
  double time_cap_ms = 300;
  double warmup_ms = 200;  // long enough for the clocks to settle under load
  int min_samples = 20;
  double max_rse = 0.003;
  double max_duty = 0.5;  // idle between samples: timed below the power cap
  double throttle_threshold =
      0.97;  // drop samples after which the SM clock is below this share of the warm-up's highest
  double throttle_recovery_ms = 50;  // pause after a dropped sample (the harness's default)
  double sample_gap_ms = 0;          // idle after every sample (the harness's default)
  std::string l2_flush = "write";    // how the L2 is emptied before each sample: write, read or off
  int rounds = 2;                    // bench processes per instance; a figure is the median of their medians
  // Rounds that disagree (combine_bench_rounds in harness_exec.h says when) are re-measured:
  // up to this many further rounds, each in new processes, until a majority agrees.
  int remeasure_rounds = 2;
  // A re-measure timed against the baseline's harness (A/B/A/B) runs at least this many
  // rounds of each: its pair alone decides whether a suspected slowdown counts, and four
  // rounds a side narrow the band it must leave (porting/noise.h confirm_band).
  int paired_rounds = 4;
  double round_agreement_floor = 0.01;  // round medians this close always agree
  // Later measurements of a process, the clocks already up from its first, warm up this long.
  // 10 ms is thousands of calls of a decode kernel and a few of the slowest fp32 gemm; the
  // screen below takes half of it (a pipeline spent 30 % of its measuring time warming up).
  double later_warmup_ms = 10;
  // Screening (successive halving): where several instances run a case, each is first
  // timed briefly; only those within screen_margin of the fastest (widened by their
  // screens' noise) are then measured to the precise settings above. The rest keep their
  // screen figure, marked "precision": "screen".
  bool screen = true;
  double screen_time_cap_ms = 10;
  double screen_warmup_ms = 5;
  int screen_min_samples = 3;
  double screen_max_rse = 0.01;
  double screen_margin = 0.05;
};

struct GpuSettings {
  GpuInfo gpu;
  std::filesystem::path workdir;  // harness/ (artifact cache) and, for local builds, repos/ and build/
  std::string nvidia_smi = "nvidia-smi";
  double kernel_timeout_s = 60;
  std::chrono::seconds process_timeout{900};
  BenchSampling sampling;
  bool bench = true;
  // Instances checked at once, each in its own processes (nothing is timed meanwhile):
  // a check mostly waits on references, inputs and process start, not on the GPU.
  // kport-runner's default is checks_at_once() of its host.
  int check_parallel = 8;
  std::optional<std::uint64_t> seed;  // base seed of every harness run; unset: a fresh random one per run
  BuildSettings build;                // for a local build when no harness artifact exists
  std::string nvcc_probe = "nvcc";
  Env* env = nullptr;  // harness processes start through it; null: Env::system()
  // Where the GPU's host-wide lock lives (GpuLock, gpu.h); empty: no lock.
  std::filesystem::path lock_dir = "/tmp/kport-gpu-locks";
};

// Instances one GPU's worker checks at once by default: the host's cores shared among the
// workers of its GPUs (a check's CPU reference keeps one core busy), at least 1, at most 64.
int checks_at_once(unsigned cores, std::size_t gpus);

class CheckHandler : public JobHandler {
 public:
  explicit CheckHandler(GpuSettings settings) : m_s(std::move(settings)) {}
  Status prepare() override;
  Result<api::RunnerRegistration> registration(const std::string& name) override;
  JobOutcome run(CoordinatorApi& api, const ClaimedJob& job, const std::atomic<bool>& cancel,
                 const LogFn& log) override;
  Status ready() override;

 private:
  struct HarnessFile {
    std::filesystem::path path;
    std::string sha256;  // what the artifact store serves it by
    // The environment its library's manifest gives it (`env`, placeholders unexpanded),
    // as its build recorded it.
    std::map<std::string, std::string> env = {};
  };
  Result<HarnessFile> harness_for(CoordinatorApi& api, const ClaimedJob& job, const std::atomic<bool>& cancel,
                                  const LogFn& log);
  // The harness artifact `sha` in the local cache, downloaded (sha256 verified) when absent.
  Result<HarnessFile> cached_harness(CoordinatorApi& api, const std::string& sha, const std::string& target,
                                     const LogFn& log);
  std::vector<std::string> gpu_env() const;

  GpuSettings m_s;
  bool m_toolkit_probed = false;
  std::optional<std::filesystem::path> m_unhealthy_harness;  // set while the GPU fails its health check
  std::string m_unhealthy_reason;
  std::vector<std::string> m_unhealthy_env;  // the library's env that harness runs with
  GpuLock m_lock;                            // the GPU, this process's on this host from registration on
};

}  // namespace kport::runner
