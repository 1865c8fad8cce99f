// One result of POST /api/v1/jobs/{id}/results: what a GPU runner measured for one case
// (instance, dtype, shape) on one GPU. The runner fills it from the harness's report
// (`fill_from_check`, `fill_from_bench`: the one place harness figures are renamed and
// rescaled, milliseconds to microseconds), sends `to_json`; the coordinator reads it back
// with `read_result_upload` and stores it. The wire form is the contract the OpenAPI
// document describes (`ResultInput`): absent optionals are absent fields. The metrics
// beyond the core figures are rows of one table (result_metrics.h), filled, written and
// read by it.
//
// Reading is strict: a field of the wrong type, a negative figure or an unknown status is
// an invalid_argument Error naming the field ("field 'results[3].median_us' must be a
// number"); unknown fields are ignored. Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kport/api/fields.h"
#include "kport/api/harness_report.h"
#include "kport/api/result_metrics.h"

namespace kport::api {

// How a case ended, as the harness's verdict and the runner's fault handling decide it.
enum class CaseStatus { passed, failed, crashed, timeout, unsupported };

inline constexpr std::array<std::string_view, 5> k_case_statuses{"passed", "failed", "crashed", "timeout",
                                                                 "unsupported"};

inline std::string_view to_string(CaseStatus s) noexcept { return k_case_statuses[static_cast<std::size_t>(s)]; }

inline std::optional<CaseStatus> parse_case_status(std::string_view s) noexcept {
  for (std::size_t i = 0; i < k_case_statuses.size(); ++i)
    if (k_case_statuses[i] == s) return static_cast<CaseStatus>(i);
  return std::nullopt;
}

struct ResultUpload {
  // What ran, where. commit and target may be left out: the job names them.
  std::string commit, target, family, variant, instance, dtype;
  std::string shape;  // the harness's shape text, "m=4096,n=4096,k=4096"
  std::string toolkit, gpu_model, gpu_uuid, arch, driver;
  std::optional<double> sm_clock_mhz;              // the SM clock the kernel ran at
  boost::json::value env = boost::json::object{};  // clocks, telemetry, reproduce: kept as sent
  CaseStatus status = CaseStatus::crashed;
  std::string message;
  // numerics
  std::optional<double> max_abs_err, max_rel_err, normwise_rel_err, tolerance;
  std::optional<std::int64_t> nan_inf_count;
  std::optional<std::uint64_t> seed;  // the check's input seed, all 64 bits
  // timing
  std::optional<double> median_us, stddev_us;
  std::optional<std::int64_t> samples;
  std::optional<std::int64_t> samples_dropped;  // timed samples dropped because the SM clock read throttled
  std::optional<double> tflops, gbps;
  std::string baseline;  // the vendor baseline's name, "" when none was timed
  std::optional<double> baseline_median_us, ratio;
  bool unstable = false;  // the bench rounds disagreed beyond their noise
  // The table's metrics (result_metrics.h) the result has, by name; an integer metric as
  // an int64, a number as a double.
  boost::json::object metrics;
};

// The table's metrics of `source` that a harness entry holds, into `r.metrics`.
inline void fill_metrics(ResultUpload& r, const HarnessEntry& e, MetricSource source) {
  for (const ResultMetric& m : k_result_metrics)
    if (m.source == source)
      if (auto v = harness_metric(e.raw, m)) r.metrics[m.name] = std::move(*v);
}

// ---- the harness's figures, renamed and rescaled once ------------------------------

// Numerics from the harness's check entry: max_abs_error -> max_abs_err (and its ratio to
// max|ref| as max_rel_err), normwise_rel_error -> normwise_rel_err, nonfinite ->
// nan_inf_count, tolerance.normwise -> tolerance.
inline void fill_from_check(ResultUpload& r, const HarnessEntry& c) {
  if (c.max_abs_error) {
    r.max_abs_err = *c.max_abs_error;
    if (c.max_abs_ref && *c.max_abs_ref > 0) r.max_rel_err = *c.max_abs_error / *c.max_abs_ref;
  }
  r.normwise_rel_err = c.normwise_rel_error;
  r.nan_inf_count = c.nonfinite;
  r.tolerance = c.tolerance_normwise;
  fill_metrics(r, c, MetricSource::check);
}

// Timing from a bench entry (one round, a screen, or the runner's combined rounds):
// milliseconds to microseconds; the kernel's clock is the median read after its kept
// samples, else the mean of the reads before and after the whole measurement.
inline void fill_from_bench(ResultUpload& r, const HarnessEntry& b) {
  if (const auto& t = b.timing) {
    r.median_us = t->median_ms * 1000.0;
    if (t->stddev_ms) r.stddev_us = *t->stddev_ms * 1000.0;
    r.samples = t->samples;
    r.samples_dropped = t->discarded_throttled;
  }
  r.tflops = b.tflops;
  r.gbps = b.gbps;
  r.ratio = b.ratio;
  if (const auto& base = b.baseline) {
    r.baseline = base->name;
    if (base->median_ms) r.baseline_median_us = *base->median_ms * 1000.0;
  }
  if (b.timing && b.timing->sm_mhz_median)
    r.sm_clock_mhz = *b.timing->sm_mhz_median;
  else if (b.clock_before_mhz)
    r.sm_clock_mhz = b.clock_after_mhz ? (*b.clock_before_mhz + *b.clock_after_mhz) / 2 : *b.clock_before_mhz;
  if (b.unstable) {
    r.unstable = true;
    const std::string why = "timing unstable: " + b.unstable_reason;
    r.message = r.message.empty() ? why : r.message + "; " + why;
  }
  fill_metrics(r, b, MetricSource::bench);
}

// ---- the wire ------------------------------------------------------------------------

inline boost::json::object to_json(const ResultUpload& r) {
  boost::json::object o{{"family", r.family},   {"variant", r.variant},     {"instance", r.instance},
                        {"dtype", r.dtype},     {"shape", r.shape},         {"status", to_string(r.status)},
                        {"message", r.message}, {"gpu_model", r.gpu_model}, {"gpu_uuid", r.gpu_uuid},
                        {"arch", r.arch},       {"driver", r.driver},       {"toolkit", r.toolkit}};
  auto put = [&o](std::string_view key, const auto& v) {
    if (v) o[key] = *v;
  };
  if (!r.commit.empty()) o["commit"] = r.commit;
  if (!r.target.empty()) o["target"] = r.target;
  put("seed", r.seed);
  put("max_abs_err", r.max_abs_err);
  put("max_rel_err", r.max_rel_err);
  put("normwise_rel_err", r.normwise_rel_err);
  put("nan_inf_count", r.nan_inf_count);
  put("tolerance", r.tolerance);
  put("median_us", r.median_us);
  put("stddev_us", r.stddev_us);
  put("samples", r.samples);
  put("samples_dropped", r.samples_dropped);
  if (r.unstable) o["unstable"] = true;
  put("tflops", r.tflops);
  put("gbps", r.gbps);
  put("ratio", r.ratio);
  if (!r.baseline.empty()) o["baseline"] = r.baseline;
  put("baseline_median_us", r.baseline_median_us);
  put("sm_clock_mhz", r.sm_clock_mhz);
  for (const ResultMetric& m : k_result_metrics)
    if (const auto* v = r.metrics.if_contains(m.name)) o[m.name] = *v;
  o["env"] = r.env;
  return o;
}

// Reads one upload; problems go into `f` (the first one wins), so a caller reading a list
// names the element (`Fields f(item, "results[3]")`).
inline ResultUpload read_result_upload(Fields& f) {
  ResultUpload r;
  r.commit = f.opt_sha("commit").value_or("");
  r.target = f.opt_str("target", 32).value_or("");
  r.family = f.str("family", 64);
  r.variant = f.str("variant", 128);
  r.instance = f.str("instance", 256);
  r.dtype = f.str("dtype", 16);
  r.shape = f.str("shape", 256);
  r.toolkit = f.opt_str("toolkit", 64).value_or("");
  r.gpu_model = f.opt_str("gpu_model", 256).value_or("");
  r.gpu_uuid = f.opt_str("gpu_uuid", 128).value_or("");
  r.arch = f.opt_str("arch", 16).value_or("");
  r.driver = f.opt_str("driver", 64).value_or("");
  r.sm_clock_mhz = f.opt_num_min("sm_clock_mhz", 0);
  r.env = f.json_value("env");
  auto status = f.str("status", 32);
  if (auto s = parse_case_status(status))
    r.status = *s;
  else if (f.ok())
    f.fail("status", "must be one of passed, failed, crashed, timeout, unsupported");
  r.message = f.opt_str("message", 65536).value_or("");
  r.max_abs_err = f.opt_num_min("max_abs_err", 0);
  r.max_rel_err = f.opt_num_min("max_rel_err", 0);
  r.normwise_rel_err = f.opt_num_min("normwise_rel_err", 0);
  r.tolerance = f.opt_num_min("tolerance", 0);
  r.nan_inf_count = f.opt_int("nan_inf_count", 0, INT64_MAX);
  r.seed = f.opt_uint64("seed");
  r.median_us = f.opt_num_min("median_us", 0);
  r.stddev_us = f.opt_num_min("stddev_us", 0);
  r.samples = f.opt_int("samples", 1, INT64_MAX);
  r.samples_dropped = f.opt_int("samples_dropped", 0, INT64_MAX);
  r.tflops = f.opt_num_min("tflops", 0);
  r.gbps = f.opt_num_min("gbps", 0);
  r.baseline = f.opt_str("baseline", 128).value_or("");
  r.baseline_median_us = f.opt_num_min("baseline_median_us", 0);
  r.ratio = f.opt_num_min("ratio", 0);
  r.unstable = f.boolean("unstable", false);
  for (const ResultMetric& m : k_result_metrics) {
    if (m.integer) {
      if (auto v = f.opt_int(m.name, static_cast<std::int64_t>(m.min), INT64_MAX)) r.metrics[m.name] = *v;
    } else if (auto v = f.opt_num_min(m.name, m.min)) {
      r.metrics[m.name] = *v;
    }
  }
  return r;
}

inline Result<ResultUpload> parse_result_upload(const boost::json::object& o, std::string where = "") {
  Fields f(o, std::move(where));
  ResultUpload r = read_result_upload(f);
  if (!f.ok()) return f.error();
  return r;
}

}  // namespace kport::api
