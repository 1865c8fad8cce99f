// A result's metrics beyond its core columns, as one table: adding a metric the harness
// reports is one row here. Each row says where the harness's check or bench entry has the
// figure and in what unit, how the upload and the answer name it, what values are valid
// and what it means. ResultUpload carries the metrics by name (`metrics`), fills them
// from the harness's entry, writes and reads them as top-level upload fields; the store
// keeps them in one JSON column (results.metrics_json, migration 0014); the coordinator
// answers each under its group (`numerics` or `timing`, null when the result has none)
// and documents it in the OpenAPI document from this table.
//
// The core figures (median, error norms, samples, ...) stay columns: the best-kernel rule
// and the store's queries read them. A metric here is shown, kept and compared by people,
// never queried by the store. Rows are never renamed once released (add a new one).
#pragma once

#include <boost/json.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kport::api {

enum class MetricSource { check, bench };     // the harness entry that carries it
enum class MetricGroup { numerics, timing };  // where a result's answer shows it

struct ResultMetric {
  std::string_view name;  // upload field, answer key, stored key
  MetricGroup group;
  bool integer;  // an integer (else a number)
  double min;    // the smallest valid value
  MetricSource source;
  std::array<std::string_view, 3> harness_path;  // keys into the harness's entry; "" past the last
  double scale;                                  // the harness's unit to the metric's
  std::string_view description;                  // for the OpenAPI document
};

inline constexpr auto k_result_metrics = std::to_array<ResultMetric>({
    // The clock dips a median hides: a figure timed while the SM clock sagged reads
    // slower than the kernel is (the bench entry's lowest read after a kept sample; the
    // runner's combined rounds keep the lowest of all rounds).
    {"sm_clock_mhz_min",
     MetricGroup::timing,
     true,
     0,
     MetricSource::bench,
     {"timing", "sm_mhz_after_samples", "min"},
     1.0,
     "the lowest SM clock read after a kept timed sample, in MHz (null when the harness read none, or before it was "
     "kept)"},
});

// The figure a harness entry holds at `m.harness_path`, in the metric's unit; none when
// the entry lacks it or it is not a finite number.
inline std::optional<boost::json::value> harness_metric(const boost::json::object& entry, const ResultMetric& m) {
  const boost::json::value* at = nullptr;
  const boost::json::object* in = &entry;
  for (std::string_view key : m.harness_path) {
    if (key.empty()) break;
    if (!in) return std::nullopt;
    at = in->if_contains(key);
    if (!at) return std::nullopt;
    in = at->is_object() ? &at->as_object() : nullptr;
  }
  if (!at || !at->is_number()) return std::nullopt;
  const double v = at->to_number<double>() * m.scale;
  if (!std::isfinite(v) || v < m.min) return std::nullopt;
  if (m.integer) return boost::json::value(static_cast<std::int64_t>(std::llround(v)));
  return boost::json::value(v);
}

}  // namespace kport::api
