// The report `kport-harness-<target> check|bench` prints on stdout, read once into a
// struct. The harness only prints (kernels/ never includes services code); this is the one
// reader, and the runner reads nothing of a report but what it gives.
//
// Versioned: the document carries `schema_version`; a report without one (a harness built
// before the field existed) or with a version this reader does not know is an Error that
// says which version came and which one is read, never a guess. The harness's error
// document ({"error": {code, message}} alone, which every command prints when it fails
// before a report exists: no device, a bad argument) is the same in every version and is
// read as a report with that error, no results and schema_version 0. Within a version, fields
// are read strictly: a field of the wrong type is an Error naming it as
// `results[3].timing.median_ms`; unknown fields are ignored (a harness may add some).
//
// Version 1 (kernels/harness/report.cpp): {schema_version, command, target, seed, device,
// settings?, results: [entry], summary, error?: {code, message}}; an entry is
// {instance, family, variant, dtype, shape, shape_text, seed, verdict, reason?} plus, for
// check, the numerics (max_abs_error, max_abs_ref, normwise_rel_error, nonfinite,
// reference, tolerance{normwise, ...}) and, for bench, {timing{median_ms, stddev_ms,
// samples, rse, discarded_throttled, sm_mhz_after_samples{median}, ...}, clock_before,
// clock_after, baseline{name, timing{median_ms}} | null, ratio, tflops, gbps}. The runner's
// combined figure of several rounds keeps that form and adds unstable/unstable_reason.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/api/fields.h"
#include "kport/common/result.h"

namespace kport::api {

// The report version this reader reads; the harness prints the same number.
inline constexpr std::int64_t k_harness_schema_version = 1;

struct HarnessTiming {
  double median_ms = 0;
  std::optional<double> stddev_ms, rse;
  std::optional<std::int64_t> samples;
  std::optional<std::int64_t> discarded_throttled;  // samples dropped: the SM clock read throttled after them
  std::optional<double> sm_mhz_median;              // sm_mhz_after_samples.median: the clock after each kept sample
};

struct HarnessBaseline {
  std::string name;                 // "cublasGemmEx"
  std::optional<double> median_ms;  // absent when the baseline could not be timed
};

// One case of a report (or the runner's combined figure in the same form).
struct HarnessEntry {
  std::string instance, family, variant, dtype, shape_text;
  std::string verdict;  // check: passed, failed, unsupported, error; bench: measured, unsupported, error
  std::string reason;
  std::optional<std::uint64_t> seed;  // the case's input seed
  // check
  std::optional<double> max_abs_error, max_abs_ref, normwise_rel_error, tolerance_normwise;
  std::optional<std::int64_t> nonfinite;
  std::string reference;  // "cpu_double", ...
  // bench
  std::optional<HarnessTiming> timing;
  std::optional<double> tflops, gbps, ratio;
  std::optional<HarnessBaseline> baseline;
  std::optional<double> clock_before_mhz, clock_after_mhz;
  bool unstable = false;  // the runner's combined rounds disagree
  std::string unstable_reason;
  // The entry as printed: the parts kept verbatim in a result's env (timing, tolerance,
  // clocks) and what the runner's round combination works on.
  boost::json::object raw;

  std::string key() const { return instance + "|" + dtype + "|" + shape_text; }
};

struct HarnessReport {
  std::int64_t schema_version = 0;
  std::string command;  // check, bench
  std::string target;
  std::optional<std::uint64_t> seed;
  std::vector<HarnessEntry> results;
  // A fatal error that ended the run (kernel_fault, kernel_timeout, no_device, ...).
  std::optional<std::string> error_code, error_message;
};

namespace detail {
inline std::optional<double> nested_num(Fields& f, const boost::json::object* o, std::string where,
                                        std::string_view key) {
  if (!o) return std::nullopt;
  Fields inner(*o, std::move(where));
  auto v = inner.opt_num(key);
  if (!inner.ok()) f.fail_with(inner.error());
  return v;
}
}  // namespace detail

// Reads one entry; problems go into `f`.
inline HarnessEntry read_harness_entry(Fields& f) {
  HarnessEntry e;
  e.raw = f.source();
  e.instance = f.str("instance", 256);
  e.family = f.opt_str("family", 64).value_or("");
  e.variant = f.opt_str("variant", 128).value_or("");
  e.dtype = f.str("dtype", 16);
  e.shape_text = f.str("shape_text", 256);
  e.verdict = f.str("verdict", 32);
  e.reason = f.opt_str("reason", 65536).value_or("");
  e.seed = f.opt_uint64("seed");
  e.max_abs_error = f.opt_num("max_abs_error");
  e.max_abs_ref = f.opt_num("max_abs_ref");
  e.normwise_rel_error = f.opt_num("normwise_rel_error");
  e.nonfinite = f.opt_int("nonfinite", 0, INT64_MAX);
  e.reference = f.opt_str("reference", 256).value_or("");
  e.tolerance_normwise = detail::nested_num(f, f.object("tolerance"), f.path("tolerance"), "normwise");
  if (const auto* t = f.object("timing")) {
    Fields tf(*t, f.path("timing"));
    HarnessTiming timing;
    auto median = tf.opt_num("median_ms");
    if (!median && tf.ok()) tf.fail("median_ms", "is required (a number)");
    timing.median_ms = median.value_or(0);
    timing.stddev_ms = tf.opt_num("stddev_ms");
    timing.rse = tf.opt_num("rse");
    timing.samples = tf.opt_int("samples", 0, INT64_MAX);
    timing.discarded_throttled = tf.opt_int("discarded_throttled", 0, INT64_MAX);
    timing.sm_mhz_median =
        detail::nested_num(tf, tf.object("sm_mhz_after_samples"), tf.path("sm_mhz_after_samples"), "median");
    if (!tf.ok()) f.fail_with(tf.error());
    e.timing = timing;
  }
  e.tflops = f.opt_num("tflops");
  e.gbps = f.opt_num("gbps");
  e.ratio = f.opt_num("ratio");
  if (const auto* b = f.object("baseline")) {
    Fields bf(*b, f.path("baseline"));
    HarnessBaseline base;
    base.name = bf.opt_str("name", 128).value_or("");
    base.median_ms = detail::nested_num(bf, bf.object("timing"), bf.path("timing"), "median_ms");
    if (!bf.ok()) f.fail_with(bf.error());
    e.baseline = std::move(base);
  }
  e.clock_before_mhz = detail::nested_num(f, f.object("clock_before"), f.path("clock_before"), "sm_mhz");
  e.clock_after_mhz = detail::nested_num(f, f.object("clock_after"), f.path("clock_after"), "sm_mhz");
  e.unstable = f.boolean("unstable", false);
  e.unstable_reason = f.opt_str("unstable_reason", 65536).value_or("");
  return e;
}

// One entry (a harness's, or the runner's combined figure) as a value.
inline Result<HarnessEntry> parse_harness_entry(const boost::json::object& o, std::string where = "") {
  Fields f(o, std::move(where));
  HarnessEntry e = read_harness_entry(f);
  if (!f.ok()) return f.error();
  return e;
}

// The whole report from the harness's stdout (one JSON object, whitespace around it).
inline Result<HarnessReport> parse_harness_report(std::string_view text) {
  boost::system::error_code ec;
  boost::json::value doc = boost::json::parse(text, ec);
  if (ec) return make_error(Errc::unprocessable, "the harness report is not JSON: " + ec.message());
  if (!doc.is_object()) return make_error(Errc::unprocessable, "the harness report must be a JSON object");
  const auto& o = doc.as_object();
  Fields f(o, "");
  HarnessReport r;
  const auto version = f.opt_int("schema_version");
  if (!f.ok()) return make_error(Errc::unprocessable, "the harness report's " + f.error().message);
  if (!version && !o.contains("results"))
    if (const auto* e = o.if_contains("error"); e && e->is_object()) {
      Fields ef(e->as_object(), "error");
      r.error_code = ef.opt_str("code", 256).value_or("");
      r.error_message = ef.opt_str("message", 65536).value_or("");
      if (!ef.ok()) return make_error(Errc::unprocessable, "the harness's error document's " + ef.error().message);
      return r;
    }
  if (!version)
    return make_error(Errc::unprocessable,
                      "the harness report has no schema_version (this runner reads version " +
                          std::to_string(k_harness_schema_version) +
                          "); the harness predates versioned reports: rebuild it from a current commit");
  if (*version != k_harness_schema_version)
    return make_error(Errc::unprocessable, "the harness report has schema_version " + std::to_string(*version) +
                                               " but this runner reads version " +
                                               std::to_string(k_harness_schema_version) +
                                               "; run a runner built from the same commit as the harness");
  r.schema_version = *version;
  r.command = f.opt_str("command", 32).value_or("");
  r.target = f.opt_str("target", 64).value_or("");
  r.seed = f.opt_uint64("seed");
  if (const auto* e = f.object("error")) {
    Fields ef(*e, "error");
    r.error_code = ef.opt_str("code", 256).value_or("");
    r.error_message = ef.opt_str("message", 65536).value_or("");
    if (!ef.ok()) f.fail_with(ef.error());
  }
  if (const auto* list = f.array("results")) {
    r.results.reserve(list->size());
    for (std::size_t i = 0; i < list->size() && f.ok(); ++i) {
      const std::string where = "results[" + std::to_string(i) + "]";
      if (!(*list)[i].is_object()) {
        f.fail_with(make_error(Errc::invalid_argument, "field '" + where + "' must be an object"));
        break;
      }
      Fields ef((*list)[i].as_object(), where);
      r.results.push_back(read_harness_entry(ef));
      if (!ef.ok()) f.fail_with(ef.error());
    }
  }
  if (!f.ok()) return make_error(Errc::unprocessable, "the harness report's " + f.error().message);
  return r;
}

}  // namespace kport::api
