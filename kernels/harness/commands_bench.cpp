// `bench`: times each selected case with CUDA events around single launches, the L2 flushed
// (a buffer of twice its size written) before every sample, after a warm-up, each call on the
// next of several sets of inputs and outputs (--input-sets: one placement of a small problem's
// buffers in device memory is not what every process gets); samples are
// taken until the relative standard error of the mean is at most --max-rse or the time cap
// is reached. Each sample is queued behind a blocking kernel, so no host latency falls
// between the events. The GPU idles between samples (--max-duty) so that a power-hungry
// kernel is timed at its boost clock rather than at whatever clock the power cap and the
// GPU's temperature allow that minute, and a sample after which the SM clock reads below
// --throttle-threshold of the highest clock read in the warm-up is dropped, with a pause to
// recover (nvbench's rule; after 4x the time cap throttled samples are kept, and marked). Measured on an H200 (docs/BENCHMARKS.md, bench/stability/): continuous sampling
// moved compute-bound figures by up to 4-7 % between a cool and a hot GPU; this way, under 1 %. The baseline runs in the same process on the same buffers: cuBLAS
// (cublasGemmEx, same dtype and layout, fp32 compute) for gemm, cublasGemmStridedBatchedEx for
// grouped_gemm (its groups are equal, so a strided batch), a device-to-device copy of
// the input for rmsnorm and softmax; attention has none here (bench/peers measures it), nor
// have gemm_fp8 and grouped_gemm_fp8 (bench/fp8 and bench/grouped time their peers), nor the
// grouped families' masked layout (a strided batch would compute every row of every group).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "commands.h"
#include "cublas_grouped.h"
#include "declared_family.h"
#include "device_buffers.h"
#include "device/harness_kernels.h"
#include "gpu_context.h"
#include "report.h"
#include "case_selection.h"
#include "sm_clock.h"

namespace kport::harness {

using kport::kernels::DType;
using kport::kernels::Family;
using kport::kernels::Instance;

namespace {

struct Timing {
  std::vector<double> ms;
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0, rse = 0;
  double iq_mean = 0;  // mean of the middle half: robust like the median, not stepped by
                       // the event timer's resolution as a median of short samples is
  std::string stopped_by;
  // Clock read after each kept sample (when NVML is there), and what was thrown away.
  std::vector<unsigned> sample_mhz;
  std::vector<unsigned long long> sample_reasons;
  int discarded_throttled = 0;
  double paused_ms = 0;
  unsigned reference_mhz = 0;   // the throttle rule's reference clock (0: no clock read)
  bool throttled_kept = false;  // the GPU stayed throttled, so throttled samples were kept
  Json trace;                   // --trace: every sample, kept or not
};

void summarize(Timing& t) {
  std::vector<double> v = t.ms;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  t.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  double sum = 0;
  for (double x : v) sum += x;
  t.mean = sum / n;
  double sq = 0;
  for (double x : v) sq += (x - t.mean) * (x - t.mean);
  t.stddev = n > 1 ? std::sqrt(sq / (n - 1)) : 0.0;
  t.min = v.front();
  t.max = v.back();
  t.rse = t.mean > 0 ? t.stddev / std::sqrt(double(n)) / t.mean : 0.0;
  const std::size_t lo = n / 4, hi = n - n / 4;
  double mid = 0;
  for (std::size_t i = lo; i < hi; ++i) mid += v[i];
  t.iq_mean = mid / double(hi - lo);
}

Json timing_json(const Timing& t) {
  Json j = {{"median_ms", t.median},
            {"iq_mean_ms", t.iq_mean},
            {"mean_ms", t.mean},
            {"stddev_ms", t.stddev},
            {"min_ms", t.min},
            {"max_ms", t.max},
            {"samples", t.ms.size()},
            {"rse", t.rse},
            {"stopped_by", t.stopped_by},
            {"discarded_throttled", t.discarded_throttled},
            {"paused_ms", t.paused_ms},
            {"throttle_reference_mhz", t.reference_mhz},
            {"throttled_samples_kept", t.throttled_kept}};
  if (!t.sample_mhz.empty()) {
    std::vector<unsigned> v = t.sample_mhz;
    std::sort(v.begin(), v.end());
    unsigned long long any = 0;
    for (auto r : t.sample_reasons) any |= r;
    j["sm_mhz_after_samples"] = {{"min", v.front()}, {"median", v[v.size() / 2]}, {"max", v.back()}};
    j["clock_event_reasons_seen"] = event_reason_names(any & ~0x1ULL);  // idle between samples is expected
  }
  if (!t.trace.is_null()) j["trace"] = t.trace;
  return j;
}

// Input set i of a case (i >= 1; set 0 is the case's own seed): another seed, derived so that
// the sets differ and a report's seed replays all of them.
std::uint64_t input_set_seed(std::uint64_t seed, int i) { return seed + 0x9E3779B97F4A7C15ULL * std::uint64_t(i); }

cudaDataType_t cuda_type(DType t) { return t == DType::f32 ? CUDA_R_32F : t == DType::f16 ? CUDA_R_16F : CUDA_R_16BF; }

class Bencher {
 public:
  Bencher(GpuContext& ctx, Report& report, const Options& o)
      : m_ctx(ctx), m_report(report), m_opt(o), m_probe(ctx.device) {
    cudaEventCreate(&m_start);
    cudaEventCreate(&m_stop);
  }
  ~Bencher() {
    cudaEventDestroy(m_start);
    cudaEventDestroy(m_stop);
  }

  const ClockProbe& probe() const { return m_probe; }

  Json run(const Case& c, std::uint64_t seed) {
    Json r = {{"instance", c.instance->name},
              {"family", kport::kernels::family_name(*c.instance)},
              {"variant", c.instance->variant},
              {"dtype", kport::kernels::dtype_name(c.dtype)},
              {"shape", shape_json(c.shape)},
              {"shape_text", shape_string(c.shape)},
              {"seed", seed}};
    const Instance& inst = *c.instance;
    if (std::find(inst.dtypes.begin(), inst.dtypes.end(), c.dtype) == inst.dtypes.end()) {
      r["verdict"] = "unsupported";
      r["reason"] = "dtype not among the instance's dtypes";
      return r;
    }
    const std::vector<ProblemBuffers*>* inputs = nullptr;
    if (cudaError_t e = input_sets(c, seed, inputs); e != cudaSuccess) {
      fail(r, c, "setting up inputs", e);
      return r;
    }
    const std::vector<ProblemBuffers*>& all = *inputs;
    const std::string refusal = inst.supports(all.front()->problem);
    if (!refusal.empty()) {
      r["verdict"] = "unsupported";
      r["reason"] = refusal;
      return r;
    }
    std::size_t next = 0;
    const auto launch = [&] { return inst.launch(all[next++ % all.size()]->problem, m_ctx.stream); };
    r["clock_before"] = clock_json(read_clock(m_ctx.device));
    Timing ours;
    if (cudaError_t e = measure(launch, c, ours); e != cudaSuccess) {
      fail(r, c, "timing the kernel", e);
      return r;
    }
    r["clock_after"] = clock_json(read_clock(m_ctx.device));
    r["verdict"] = "measured";
    r["timing"] = timing_json(ours);
    r["timing"]["input_sets"] = all.size();
    add_rates(r, c, ours.median);

    // Baseline, once per (family, shape, dtype) in this process.
    const std::string key = std::string(kport::kernels::family_name(*c.instance)) + "|" + shape_string(c.shape) + "|" +
                            kport::kernels::dtype_name(c.dtype);
    if (c.shape.family == Family::attention) {
      r["baseline"] = nullptr;
      r["baseline_note"] =
          "no in-process attention baseline; FlashAttention-2 and cuDNN come "
          "from bench/peers on the same machine";
      return r;
    }
    if (c.shape.family == Family::declared) {
      r["baseline"] = nullptr;
      r["baseline_note"] = "no in-process baseline for a family a library declares";
      return r;
    }
    if (c.shape.family == Family::grouped_gemm_fp8) {
      r["baseline"] = nullptr;
      r["baseline_note"] =
          "no in-process grouped fp8 baseline: a cuBLASLt fp8 matmul takes one scale per operand and call, not "
          "one per group of B; bench/grouped/run_h200.sh times gemm_fp8 at m = g*m (the same work) in the same "
          "process";
      return r;
    }
    if (c.shape.family == Family::grouped_gemm && c.shape.valid >= 0) {
      r["baseline"] = nullptr;
      r["baseline_note"] =
          "no in-process baseline for the masked layout: cuBLAS's strided batch would compute all m rows of every "
          "group, the counts being on the device";
      return r;
    }
    if (c.shape.family == Family::gemm_fp8) {
      r["baseline"] = nullptr;
      r["baseline_note"] =
          "no in-process fp8 baseline; cuBLASLt (torch._scaled_mm, per-tensor and row-wise scales) "
          "comes from bench/fp8 on the same machine";
      return r;
    }
    if (!m_opt.baseline) return r;
    auto it = m_baselines.find(key);
    if (it == m_baselines.end()) {
      Json base = measure_baseline(c, all);
      it = m_baselines.emplace(key, base).first;
    }
    r["baseline"] = it->second;
    if (it->second.contains("timing")) {
      const double base_ms = it->second["timing"]["median_ms"].get<double>();
      r["ratio"] = base_ms / ours.median;  // > 1: faster than the baseline
    }
    return r;
  }

 private:
  void fail(Json& r, const Case& c, const std::string& what, cudaError_t e) {
    r["verdict"] = "error";
    r["reason"] = what + ": " + cuda_error_text(e);
    if (error_is_sticky(e)) {
      m_report.add(r);
      m_report.abort({"kernel_fault",
                      c.instance->name + " (" + shape_string(c.shape) +
                          ") left the GPU context unusable: " + cuda_error_text(e) + "; remaining cases were not run",
                      k_exit_cuda});
    }
  }

  void add_rates(Json& r, const Case& c, double median_ms) {
    const double s = median_ms * 1e-3;
    const double flops = flop_count(c.shape, c.dtype);
    if (flops > 0) r["tflops"] = flops / s / 1e12;
    r["gbps"] = byte_count(c.shape, c.dtype) / s / 1e9;
  }

  // --max-duty: after work of `busy_ms`, idle so that it is at most that share of the time.
  void idle_after(double busy_ms) {
    if (m_opt.max_duty >= 1.0 || busy_ms <= 0) return;
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(busy_ms * (1.0 / m_opt.max_duty - 1.0)));
  }

  // The input sets a case's samples rotate through (see Options::input_sets), made once per
  // problem: the next case of the same problem and seed (another instance, as the runner
  // orders a screen's or a round's cases) times the same inputs without allocating and
  // filling them again. Only one problem's sets are held: the last one's are freed first.
  cudaError_t input_sets(const Case& c, std::uint64_t seed, const std::vector<ProblemBuffers*>*& out) {
    const std::string key = std::string(kport::kernels::family_name(*c.instance)) + "|" + shape_string(c.shape) + "|" +
                            kport::kernels::dtype_name(c.dtype) + "|" + std::to_string(seed) + "|" +
                            std::to_string(input_sets_for(c));
    if (key != m_inputs_key || m_inputs.empty()) {
      m_inputs_key.clear();
      m_inputs.clear();
      m_input_ptrs.clear();
      auto first = std::make_unique<ProblemBuffers>();
      if (cudaError_t e = setup_problem(c.shape, c.dtype, seed, *first, m_ctx.stream); e != cudaSuccess) return e;
      m_inputs.push_back(std::move(first));
      const int sets = input_sets_for(c);
      for (int i = 1; i < sets; ++i) {
        auto extra = std::make_unique<ProblemBuffers>();
        if (setup_problem(c.shape, c.dtype, input_set_seed(seed, i), *extra, m_ctx.stream) != cudaSuccess) {
          cudaGetLastError();  // out of memory: measure with the sets made so far
          break;
        }
        m_inputs.push_back(std::move(extra));
      }
      for (auto& b : m_inputs) m_input_ptrs.push_back(b.get());
      m_inputs_key = key;
    }
    out = &m_input_ptrs;
    return cudaSuccess;
  }

  cudaError_t flush_l2(int i) {
    if (m_opt.l2_flush == "off") return cudaSuccess;
    if (m_opt.l2_flush == "read") return l2_read_flush(m_ctx.flush, m_ctx.flush_bytes, m_ctx.flush_sink, m_ctx.stream);
    return cudaMemsetAsync(m_ctx.flush, i & 0xFF, m_ctx.flush_bytes, m_ctx.stream);
  }

  cudaError_t sync_sample(const Case& c) {
    bool timed_out = false;
    const cudaError_t e = wait_with_watchdog(m_stop, m_opt.timeout_s, timed_out);
    if (timed_out) {
      // The case's identity as every entry carries it: a reader requires its dtype.
      Json r = {{"instance", c.instance->name},
                {"family", kport::kernels::family_name(*c.instance)},
                {"variant", c.instance->variant},
                {"dtype", kport::kernels::dtype_name(c.dtype)},
                {"shape", shape_json(c.shape)},
                {"shape_text", shape_string(c.shape)},
                {"verdict", "error"},
                {"reason", "timed out"}};
      m_report.add(r);
      m_report.abort({"kernel_timeout",
                      c.instance->name + " (" + shape_string(c.shape) + ") did not finish within --timeout-s",
                      k_exit_timeout});
    }
    return e;
  }

  cudaError_t measure(const std::function<cudaError_t()>& launch, const Case& c, Timing& t) {
    using clock = std::chrono::steady_clock;
    // Warm-up: module load, caches of the driver, clocks ramped; at least 3 calls.
    const bool read_clocks = m_probe.available();
    // The clock the throttle rule compares with: the highest read during the warm-up (the
    // boost clock, or the clock an administrator locked), never above the GPU's maximum.
    unsigned reference_mhz = 0;
    // The process's first measurement warms for --warmup-ms; later ones, with the clocks
    // already up, for --later-warmup-ms when it is given.
    const double warmup_ms =
        m_measurements++ == 0 || m_opt.later_warmup_ms < 0 ? m_opt.warmup_ms : m_opt.later_warmup_ms;
    const auto w0 = clock::now();
    for (int i = 0;; ++i) {
      const auto call0 = clock::now();
      cudaError_t e = launch();
      if (e == cudaSuccess) e = cudaEventRecord(m_stop, m_ctx.stream);
      if (e == cudaSuccess) e = sync_sample(c);
      if (e != cudaSuccess) return e;
      if (read_clocks)
        if (const auto got = m_probe.sample()) reference_mhz = std::max(reference_mhz, got->sm_mhz);
      idle_after(std::chrono::duration<double, std::milli>(clock::now() - call0).count());
      const double ms = std::chrono::duration<double, std::milli>(clock::now() - w0).count();
      if (i + 1 >= m_opt.warmup_calls && ms >= warmup_ms) break;
      if (ms > m_opt.time_cap_ms) break;  // a very slow kernel: its first calls warmed it
    }
    const auto t0 = clock::now();
    if (m_probe.max_sm_mhz() && reference_mhz > *m_probe.max_sm_mhz()) reference_mhz = *m_probe.max_sm_mhz();
    const double floor_mhz = m_opt.throttle_threshold > 0 ? m_opt.throttle_threshold * reference_mhz : 0.0;
    t.reference_mhz = reference_mhz;
    bool gave_up = false;  // dropping stops after 4x the time cap: a GPU that never recovers
    if (m_opt.trace) t.trace = Json::array();
    double recovery_ms = m_opt.throttle_recovery_ms;
    for (int i = 0;; ++i) {
      cudaError_t e = cudaSuccess;
      if (m_opt.blocker && m_ctx.block_flag != nullptr) {
        *static_cast<volatile int*>(m_ctx.block_flag) = 0;
        e = launch_stream_blocker(m_ctx.block_flag, 10.0, m_ctx.stream);
      }
      if (e == cudaSuccess) e = flush_l2(i);
      if (e == cudaSuccess) e = cudaEventRecord(m_start, m_ctx.stream);
      if (e == cudaSuccess) e = launch();
      if (e == cudaSuccess) e = cudaEventRecord(m_stop, m_ctx.stream);
      if (m_ctx.block_flag != nullptr) __atomic_store_n(m_ctx.block_flag, 1, __ATOMIC_RELEASE);
      if (e == cudaSuccess) e = sync_sample(c);
      if (e != cudaSuccess) return e;
      float ms = 0;
      if ((e = cudaEventElapsedTime(&ms, m_start, m_stop)) != cudaSuccess) return e;
      // A plain struct rather than std::optional: GCC 12 misreads the optional's payload
      // as maybe-uninitialized here.
      ClockSample cs;
      bool have_clock = false;
      if (read_clocks) {
        if (auto got = m_probe.sample()) {
          cs = *got;
          have_clock = true;
        }
      }
      const bool throttled = have_clock && floor_mhz > 0 && cs.sm_mhz < floor_mhz && !gave_up;
      if (m_opt.trace) {
        const double at = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        t.trace.push_back({{"at_ms", at},
                           {"ms", ms},
                           {"sm_mhz", have_clock ? Json(cs.sm_mhz) : Json(nullptr)},
                           {"reasons", cs.event_reasons ? Json(*cs.event_reasons) : Json(nullptr)},
                           {"kept", !throttled}});
      }
      if (throttled) {
        // nvbench's rule: drop the sample and let the clocks recover, longer each time.
        ++t.discarded_throttled;
        t.paused_ms += recovery_ms;
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(recovery_ms));
        recovery_ms = std::min(recovery_ms * 1.5, 500.0);
        const double spent = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        if (spent >= 4 * m_opt.time_cap_ms) {
          // Still throttled: keep what comes from now on, and say so.
          gave_up = true;
          t.throttled_kept = true;
        }
        continue;
      }
      recovery_ms = m_opt.throttle_recovery_ms;
      if (have_clock) {
        t.sample_mhz.push_back(cs.sm_mhz);
        t.sample_reasons.push_back(cs.event_reasons.value_or(0));
      }
      idle_after(ms);
      if (m_opt.sample_gap_ms > 0)
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m_opt.sample_gap_ms));
      t.ms.push_back(ms);
      const int n = static_cast<int>(t.ms.size());
      if (n >= 2) summarize(t);
      const double spent = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
      if (n >= m_opt.min_samples && t.rse <= m_opt.max_rse) {
        t.stopped_by = "rse";
        break;
      }
      if (spent >= m_opt.time_cap_ms && n >= std::min(3, m_opt.min_samples)) {
        t.stopped_by = "time_cap";
        break;
      }
      if (n >= 10000) {
        t.stopped_by = "max_samples";
        break;
      }
    }
    summarize(t);
    return cudaSuccess;
  }

  // --input-sets for this case: as given, or auto by the problem's size.
  int input_sets_for(const Case& c) const {
    if (m_opt.input_sets > 0) return m_opt.input_sets;
    const double fit = k_auto_input_sets_bytes / std::max(1.0, problem_device_bytes(c.shape, c.dtype));
    return std::clamp(static_cast<int>(fit), 1, k_auto_input_sets);
  }

  // The baseline rotates through the same input sets as the kernel it is compared with.
  Json measure_baseline(const Case& c, const std::vector<ProblemBuffers*>& sets) {
    Json base;
    std::function<cudaError_t()> fn;
    std::size_t next = 0;
    const ProblemBuffers& b = *sets.front();
    if (c.shape.family == Family::gemm) {
      base["name"] = "cublasGemmEx";
      base["detail"] = "same layout and dtype in/out, CUBLAS_COMPUTE_32F, default math mode";
      fn = [this, &sets, &next]() -> cudaError_t {
        const auto& g = sets[next++ % sets.size()]->problem.gemm;
        const float alpha = 1.0f, beta = 0.0f;
        const cublasStatus_t st = cublasGemmEx(m_ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k, &alpha, g.b,
                                               cuda_type(g.dtype), g.n, g.a, cuda_type(g.dtype), g.k, &beta, g.c,
                                               cuda_type(g.dtype), g.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
      };
    } else if (c.shape.family == Family::grouped_gemm) {
      // Equal groups make the contiguous layout a strided batch: the same work and bytes.
      base["name"] = "cublasGemmStridedBatchedEx";
      base["detail"] =
          "equal groups as a strided batch (exactly grouped GEMM with equal groups), same layout and dtype "
          "in/out, CUBLAS_COMPUTE_32F, default math mode";
      fn = [this, &sets, &next]() -> cudaError_t {
        const auto& g = sets[next++ % sets.size()]->problem.grouped_gemm;
        const cublasStatus_t st = cublas_grouped_gemm(m_ctx.cublas, g, g.d, cuda_type(g.dtype), CUBLAS_COMPUTE_32F);
        return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
      };
    } else {
      base["name"] = "cudaMemcpyAsync device-to-device";
      base["detail"] = "copy of the input (rows*cols elements): the same bytes read and written";
      const std::size_t bytes = b.out_elems * kport::kernels::dtype_size(c.dtype);
      fn = [this, &sets, &next, bytes]() {
        const auto& a = sets[next++ % sets.size()]->problem.rowwise;
        return cudaMemcpyAsync(a.y, a.x, bytes, cudaMemcpyDeviceToDevice, m_ctx.stream);
      };
    }
    Timing t;
    if (cudaError_t e = measure(fn, c, t); e != cudaSuccess) {
      base["error"] = cuda_error_text(e);
      cudaGetLastError();
      return base;
    }
    base["timing"] = timing_json(t);
    base["timing"]["input_sets"] = sets.size();
    add_rates(base, c, t.median);
    if (c.shape.family != Family::gemm && c.shape.family != Family::grouped_gemm) {
      // What the copy moved: bytes read plus bytes written.
      base["gbps"] = 2.0 * double(b.out_elems) * kport::kernels::dtype_size(c.dtype) / (t.median * 1e-3) / 1e9;
    }
    return base;
  }

  GpuContext& m_ctx;
  Report& m_report;
  const Options& m_opt;
  cudaEvent_t m_start = nullptr, m_stop = nullptr;
  ClockProbe m_probe;
  std::map<std::string, Json> m_baselines;
  std::string m_inputs_key;  // the problem whose input sets m_inputs holds
  std::vector<std::unique_ptr<ProblemBuffers>> m_inputs;
  std::vector<ProblemBuffers*> m_input_ptrs;
  int m_measurements = 0;  // measure() calls so far in this process
};

}  // namespace

int run_bench(const Options& o) {
  std::vector<Case> cases;
  if (auto err = check_declared_families(kport::kernels::registry())) return report_error(*err);
  if (auto err = select_cases(o, kport::kernels::registry(), cases)) return report_error(*err);
  if (o.plan) return print_plan(o, cases);
  GpuContext ctx;
  if (auto err = open_gpu(ctx, true)) return report_error(*err);
  const std::uint64_t seed = resolve_seed(o);
  Report report("bench", device_json(ctx));
  report.doc()["seed"] = seed;
  report.doc()["settings"] = {{"time_cap_ms", o.time_cap_ms},
                              {"max_rse", o.max_rse},
                              {"warmup_ms", o.warmup_ms},
                              {"warmup_calls", o.warmup_calls},
                              {"later_warmup_ms", o.later_warmup_ms < 0 ? o.warmup_ms : o.later_warmup_ms},
                              {"min_samples", o.min_samples},
                              {"throttle_threshold", o.throttle_threshold},
                              {"throttle_recovery_ms", o.throttle_recovery_ms},
                              {"sample_gap_ms", o.sample_gap_ms},
                              {"l2_flush", o.l2_flush},
                              {"max_duty", o.max_duty},
                              {"blocking_kernel", o.blocker},
                              {"l2_flush_bytes", ctx.flush_bytes}};
  report.doc()["settings"]["throttle_reference"] = "highest SM clock read during each warm-up";
  Bencher bencher(ctx, report, o);
  if (const auto mhz = bencher.probe().max_sm_mhz()) report.doc()["settings"]["max_sm_mhz"] = *mhz;
  for (const Case& c : cases) report.add(bencher.run(c, seed));
  return report.finish();
}

}  // namespace kport::harness
