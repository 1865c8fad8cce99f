// A commit's verdict as the coordinator answers it (GET /api/v1/commits/{sha}/verdict, the
// `verdicts` event, a forge report's notification), the series' noise (GET /api/v1/series)
// and the flaky cases (GET /api/v1/flakes). The coordinator writes them from porting's
// decisions; `kport status` reads the verdict. The wire forms are the contracts the
// OpenAPI document describes (`Verdict`, `SeriesList`, `FlakeList`): every field is always
// present, null when unset, in the order written here.
//
// Reading is strict: a status kport does not know, a field of the wrong type or a figure
// that is neither a number nor a string is an invalid_argument Error naming the field
// ("field 'reasons[1].figures.ratio' must be a number or a string"); unknown fields are
// ignored. Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kport/api/fields.h"
#include "kport/api/job.h"

namespace kport::api {

// ---- the verdict's status ------------------------------------------------------------

enum class VerdictStatus { pending, pass, fail, insufficient_data };

inline constexpr std::array<std::string_view, 4> k_verdict_statuses{"pending", "pass", "fail", "insufficient_data"};

inline std::string_view to_string(VerdictStatus s) noexcept { return k_verdict_statuses[static_cast<std::size_t>(s)]; }

inline std::optional<VerdictStatus> parse_verdict_status(std::string_view s) noexcept {
  for (std::size_t i = 0; i < k_verdict_statuses.size(); ++i)
    if (k_verdict_statuses[i] == s) return static_cast<VerdictStatus>(i);
  return std::nullopt;
}

namespace detail {
inline boost::json::value or_null(const std::optional<double>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}
}  // namespace detail

// ---- a reason ------------------------------------------------------------------------

// A figure a reason names: a count, a measurement or a word.
using Figure = std::variant<std::int64_t, double, std::string>;

// Why a verdict (or a revalidation) failed: kind is build_failure, job_failure,
// numerics_failure, perf_regression or resource_regression.
struct VerdictReason {
  std::string kind, variant, target, gpu_model, message;
  std::map<std::string, Figure> figures;
};

inline boost::json::object to_json(const VerdictReason& r) {
  boost::json::object figures;
  for (const auto& [k, v] : r.figures) figures[k] = std::visit([](const auto& x) { return boost::json::value(x); }, v);
  return boost::json::object{{"kind", r.kind},           {"variant", r.variant}, {"target", r.target},
                             {"gpu_model", r.gpu_model}, {"message", r.message}, {"figures", std::move(figures)}};
}

inline VerdictReason read_verdict_reason(Fields& f) {
  VerdictReason r;
  r.kind = f.str("kind", 64);
  r.variant = f.opt_str("variant", 256).value_or("");
  r.target = f.opt_str("target", 64).value_or("");
  r.gpu_model = f.opt_str("gpu_model", 256).value_or("");
  r.message = f.opt_str("message", 1 << 16).value_or("");
  if (const auto* figures = f.object("figures"))
    for (const auto& [k, v] : *figures) {
      if (v.is_int64())
        r.figures[k] = v.as_int64();
      else if (v.is_uint64() && v.as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        r.figures[k] = static_cast<std::int64_t>(v.as_uint64());
      else if (v.is_double())
        r.figures[k] = v.as_double();
      else if (v.is_string())
        r.figures[k] = std::string(v.as_string());
      else if (f.ok())
        f.fail("figures." + std::string(k), "must be a number or a string");
    }
  return r;
}

// ---- a series' noise (GET /api/v1/series; a verdict's insufficient_data) --------------

// How much A/A history a series (GPU model, driver, instance, dtype, shape) has and the
// band a change must leave: sigma and mde only once calibrated.
struct SeriesNoise {
  std::string gpu_model, driver, instance, dtype, shape;
  bool calibrated = false;  // status: "calibrated" or "insufficient_data"
  int figures = 0, codes = 0, degrees = 0, needed = 0;
  std::optional<double> sigma, mde;  // relative
  std::string summary;
};

inline boost::json::object to_json(const SeriesNoise& m) {
  using detail::or_null;
  return boost::json::object{{"gpu_model", m.gpu_model},  {"driver", m.driver},
                             {"instance", m.instance},    {"dtype", m.dtype},
                             {"shape", m.shape},          {"status", m.calibrated ? "calibrated" : "insufficient_data"},
                             {"figures", m.figures},      {"codes", m.codes},
                             {"degrees", m.degrees},      {"needed", m.needed},
                             {"sigma", or_null(m.sigma)}, {"mde", or_null(m.mde)},
                             {"summary", m.summary}};
}

inline SeriesNoise read_series_noise(Fields& f) {
  SeriesNoise m;
  m.gpu_model = f.str("gpu_model", 256);
  m.driver = f.opt_str("driver", 64).value_or("");
  m.instance = f.str("instance", 256);
  m.dtype = f.str("dtype", 32);
  m.shape = f.str("shape", 256);
  const auto status = f.str("status", 32);
  if (f.ok() && status != "calibrated" && status != "insufficient_data")
    f.fail("status", "must be calibrated or insufficient_data");
  m.calibrated = status == "calibrated";
  m.figures = static_cast<int>(f.opt_int("figures", 0, INT32_MAX).value_or(0));
  m.codes = static_cast<int>(f.opt_int("codes", 0, INT32_MAX).value_or(0));
  m.degrees = static_cast<int>(f.opt_int("degrees", 0, INT32_MAX).value_or(0));
  m.needed = static_cast<int>(f.opt_int("needed", 0, INT32_MAX).value_or(0));
  m.sigma = f.opt_num_min("sigma", 0);
  m.mde = f.opt_num_min("mde", 0);
  m.summary = f.opt_str("summary", 4096).value_or("");
  return m;
}

// A series a verdict could not judge: its noise, and the change seen (now / before - 1).
struct UnjudgedSeries {
  SeriesNoise series;
  std::string target;
  double change = 0;
  std::int64_t result = 0, baseline_result = 0;
};

inline boost::json::object to_json(const UnjudgedSeries& u) {
  boost::json::object o = to_json(u.series);
  o["target"] = u.target;
  o["change"] = u.change;
  o["result"] = u.result;
  o["baseline_result"] = u.baseline_result;
  return o;
}

inline UnjudgedSeries read_unjudged_series(Fields& f) {
  UnjudgedSeries u;
  u.series = read_series_noise(f);
  u.target = f.opt_str("target", 64).value_or("");
  u.change = f.opt_num("change").value_or(0);
  u.result = f.opt_int("result", 0, INT64_MAX).value_or(0);
  u.baseline_result = f.opt_int("baseline_result", 0, INT64_MAX).value_or(0);
  return u;
}

// ---- flaky failures and the machine's ------------------------------------------------

// A new failure of a quarantined case: listed, not counted.
struct FlakyFailure {
  std::string target, gpu_model, instance, dtype, shape;
  std::string status;  // the result's status: failed, crashed, timeout
  std::int64_t result = 0;
  std::optional<std::int64_t> seed;  // the seed's bit pattern, as the store keeps it
  std::string since;                 // ISO 8601 UTC: when the case was first seen flaking
  int runs = 0, failures = 0, to_release = 0;
};

inline boost::json::object to_json(const FlakyFailure& x) {
  using detail::or_null;
  return boost::json::object{{"target", x.target}, {"gpu_model", x.gpu_model}, {"instance", x.instance},
                             {"dtype", x.dtype},   {"shape", x.shape},         {"status", x.status},
                             {"result", x.result}, {"seed", or_null(x.seed)},  {"since", x.since},
                             {"runs", x.runs},     {"failures", x.failures},   {"to_release", x.to_release}};
}

inline FlakyFailure read_flaky_failure(Fields& f) {
  FlakyFailure x;
  x.target = f.opt_str("target", 64).value_or("");
  x.gpu_model = f.str("gpu_model", 256);
  x.instance = f.str("instance", 256);
  x.dtype = f.str("dtype", 32);
  x.shape = f.str("shape", 256);
  x.status = f.str("status", 32);
  x.result = f.opt_int("result", 0, INT64_MAX).value_or(0);
  x.seed = f.opt_int("seed");
  x.since = f.opt_str("since", 64).value_or("");
  x.runs = static_cast<int>(f.opt_int("runs", 0, INT32_MAX).value_or(0));
  x.failures = static_cast<int>(f.opt_int("failures", 0, INT32_MAX).value_or(0));
  x.to_release = static_cast<int>(f.opt_int("to_release", 0, INT32_MAX).value_or(0));
  return x;
}

// A failure that is the machine's (a job's lease, runner or GPU health; a mass failure).
struct InfrastructureFailure {
  std::string target, gpu_model;
  std::int64_t job = 0;
  std::optional<std::int64_t> result;
  std::string message;
};

inline boost::json::object to_json(const InfrastructureFailure& i) {
  return boost::json::object{{"target", i.target},
                             {"gpu_model", i.gpu_model},
                             {"job", i.job},
                             {"result", detail::or_null(i.result)},
                             {"message", i.message}};
}

inline InfrastructureFailure read_infrastructure_failure(Fields& f) {
  InfrastructureFailure i;
  i.target = f.opt_str("target", 64).value_or("");
  i.gpu_model = f.opt_str("gpu_model", 256).value_or("");
  i.job = f.opt_int("job", 0, INT64_MAX).value_or(0);
  i.result = f.opt_int("result", 0, INT64_MAX);
  i.message = f.opt_str("message", 1 << 16).value_or("");
  return i;
}

// ---- the verdict ---------------------------------------------------------------------

struct CommitVerdict {
  std::string commit;
  std::optional<std::string> baseline;  // the closest validated ancestor compared with
  VerdictStatus status = VerdictStatus::pending;
  std::vector<VerdictReason> reasons;
  std::vector<std::string> waiting;  // why it is not final
  std::vector<std::string> notes;    // seen but not counted
  std::vector<UnjudgedSeries> insufficient_data;
  std::vector<FlakyFailure> flaky;
  std::vector<InfrastructureFailure> infrastructure;
  std::int64_t compared_builds = 0, compared_results = 0;  // records looked at
  std::string rule;                                        // the thresholds, in words
};

inline boost::json::object to_json(const CommitVerdict& v) {
  auto strings = [](const std::vector<std::string>& list) {
    boost::json::array a;
    for (const auto& s : list) a.emplace_back(s);
    return a;
  };
  auto each = [](const auto& x) { return to_json(x); };
  return boost::json::object{
      {"commit", v.commit},
      {"baseline", detail::or_null(v.baseline)},
      {"status", to_string(v.status)},
      {"reasons", write_list(v.reasons, each)},
      {"waiting", strings(v.waiting)},
      {"notes", strings(v.notes)},
      {"insufficient_data", write_list(v.insufficient_data, each)},
      {"flaky", write_list(v.flaky, each)},
      {"infrastructure", write_list(v.infrastructure, each)},
      {"compared", boost::json::object{{"builds", v.compared_builds}, {"results", v.compared_results}}},
      {"rule", v.rule}};
}

inline CommitVerdict read_commit_verdict(Fields& f) {
  CommitVerdict v;
  v.commit = f.str("commit", 64);
  v.baseline = f.opt_str("baseline", 64);
  const auto status = f.str("status", 32);
  if (auto s = parse_verdict_status(status))
    v.status = *s;
  else if (f.ok())
    f.fail("status", "must be pending, pass, fail or insufficient_data");
  v.reasons = read_list(f, "reasons", read_verdict_reason);
  v.waiting = f.str_list("waiting", 1 << 16);
  v.notes = f.str_list("notes", 1 << 16);
  v.insufficient_data = read_list(f, "insufficient_data", read_unjudged_series);
  v.flaky = read_list(f, "flaky", read_flaky_failure);
  v.infrastructure = read_list(f, "infrastructure", read_infrastructure_failure);
  struct Compared {
    std::int64_t builds = 0, results = 0;
  };
  const Compared c = read_object(f, "compared", [](Fields& cf) {
    return Compared{cf.opt_int("builds", 0, INT64_MAX).value_or(0), cf.opt_int("results", 0, INT64_MAX).value_or(0)};
  });
  v.compared_builds = c.builds;
  v.compared_results = c.results;
  v.rule = f.opt_str("rule", 1 << 16).value_or("");
  return v;
}

inline Result<CommitVerdict> parse_commit_verdict(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_commit_verdict);
}

// ---- GET /api/v1/series --------------------------------------------------------------

struct SeriesList {
  std::vector<SeriesNoise> items;
  std::string rule;
};

inline boost::json::object to_json(const SeriesList& s) {
  return boost::json::object{{"items", write_list(s.items, [](const SeriesNoise& m) { return to_json(m); })},
                             {"rule", s.rule}};
}

inline SeriesList read_series_list(Fields& f) {
  SeriesList s;
  s.items = read_list(f, "items", read_series_noise);
  s.rule = f.opt_str("rule", 1 << 16).value_or("");
  return s;
}

// ---- GET /api/v1/flakes --------------------------------------------------------------

// One failure of a flaky case: its result, seed, commit and status.
struct FlakeFailure {
  std::int64_t result = 0;
  std::optional<std::int64_t> seed;
  std::string commit, status;
};

// A case (GPU model, instance, dtype, shape) whose same code both passed and failed.
struct FlakeCase {
  std::string gpu_model, instance, dtype, shape;
  std::string state;                 // flaky, released or stable
  std::optional<std::string> since;  // ISO 8601 UTC
  std::string first_commit;
  int runs = 0, failures = 0, clean_runs = 0, to_release = 0;
  std::vector<FlakeFailure> failed;
};

inline boost::json::object to_json(const FlakeCase& c) {
  boost::json::array failed;
  for (const auto& e : c.failed)
    failed.push_back(boost::json::object{
        {"result", e.result}, {"seed", detail::or_null(e.seed)}, {"commit", e.commit}, {"status", e.status}});
  return boost::json::object{{"gpu_model", c.gpu_model},
                             {"instance", c.instance},
                             {"dtype", c.dtype},
                             {"shape", c.shape},
                             {"state", c.state},
                             {"since", detail::or_null(c.since)},
                             {"first_commit", c.first_commit},
                             {"runs", c.runs},
                             {"failures", c.failures},
                             {"clean_runs", c.clean_runs},
                             {"to_release", c.to_release},
                             {"failed", std::move(failed)}};
}

inline FlakeCase read_flake_case(Fields& f) {
  FlakeCase c;
  c.gpu_model = f.str("gpu_model", 256);
  c.instance = f.str("instance", 256);
  c.dtype = f.str("dtype", 32);
  c.shape = f.str("shape", 256);
  c.state = f.str("state", 16);
  if (f.ok() && c.state != "flaky" && c.state != "released" && c.state != "stable")
    f.fail("state", "must be flaky, released or stable");
  c.since = f.opt_str("since", 64);
  c.first_commit = f.opt_str("first_commit", 64).value_or("");
  c.runs = static_cast<int>(f.opt_int("runs", 0, INT32_MAX).value_or(0));
  c.failures = static_cast<int>(f.opt_int("failures", 0, INT32_MAX).value_or(0));
  c.clean_runs = static_cast<int>(f.opt_int("clean_runs", 0, INT32_MAX).value_or(0));
  c.to_release = static_cast<int>(f.opt_int("to_release", 0, INT32_MAX).value_or(0));
  c.failed = read_list(f, "failed", [](Fields& ef) {
    FlakeFailure e;
    e.result = ef.opt_int("result", 0, INT64_MAX).value_or(0);
    e.seed = ef.opt_int("seed");
    e.commit = ef.opt_str("commit", 64).value_or("");
    e.status = ef.opt_str("status", 32).value_or("");
    return e;
  });
  return c;
}

struct FlakeList {
  std::vector<FlakeCase> items;
  int release_after = 0;  // passing runs in a row that release a flaky case
};

inline boost::json::object to_json(const FlakeList& l) {
  return boost::json::object{{"items", write_list(l.items, [](const FlakeCase& c) { return to_json(c); })},
                             {"release_after", l.release_after}};
}

inline FlakeList read_flake_list(Fields& f) {
  FlakeList l;
  l.items = read_list(f, "items", read_flake_case);
  l.release_after = static_cast<int>(f.opt_int("release_after", 0, INT32_MAX).value_or(0));
  return l;
}

}  // namespace kport::api
