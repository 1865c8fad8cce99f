#include "dashboard_views.h"

#include "bringup_stages.h"
#include "reproduce.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

namespace kport::coordinator {
namespace json = boost::json;

namespace {

template <typename T>
json::value opt(const std::optional<T>& v) {
  return v ? json::value(*v) : json::value(nullptr);
}

// Four significant digits: plenty for a chart, and a quarter of the JSON of a full
// double (the serializer prints the shortest text that reads back the same value).
double sig4(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  double scale = std::pow(10.0, 3 - std::floor(std::log10(std::abs(v))));
  return std::round(v * scale) / scale;
}

json::value opt4(const std::optional<double>& v) { return v ? json::value(sig4(*v)) : json::value(nullptr); }

json::object evidence_json(const db::ResultRecord& r, bool timing) {
  return json::object{{"id", r.id},
                      {"url", "/api/v1/results/" + std::to_string(r.id)},
                      {"instance", r.instance},
                      {"dtype", r.dtype},
                      {"shape", r.shape},
                      {"gpu_model", r.gpu_model},
                      {"driver", r.driver},
                      {"commit", r.commit_sha},
                      {"status", db::to_string(r.status)},
                      {"message", r.message},
                      {"max_abs_err", opt(r.max_abs_err)},
                      {"normwise_rel_err", opt(r.normwise_rel_err)},
                      {"tolerance", opt(r.tolerance)},
                      {"median_us", opt(r.median_us)},
                      {"stddev_us", opt(r.stddev_us)},
                      {"samples", opt(r.samples)},
                      {"tflops", opt(r.tflops)},
                      {"gbps", opt(r.gbps)},
                      {"baseline", r.baseline_name},
                      {"ratio", opt(r.ratio)},
                      {"command", reproduce_command(r, timing)}};
}

json::value evidence_for(const std::optional<std::int64_t>& id,
                         const std::map<std::int64_t, db::ResultRecord>& evidence, bool timing) {
  if (!id) return nullptr;
  auto it = evidence.find(*id);
  return it == evidence.end() ? json::value(nullptr) : json::value(evidence_json(it->second, timing));
}

json::object cells_json(const db::VariantBoard& v, const porting::VariantStage& f, const std::string& target,
                        const std::map<std::int64_t, db::ResultRecord>& evidence) {
  const bool na = !f.applicable;
  auto state = [&](bool ok, bool failed) { return na ? "na" : ok ? "ok" : failed ? "fail" : "pending"; };
  json::object build{
      {"state", state(f.built, f.stage == porting::Stage::build_failed)},
      {"status", opt(v.build_status)},
      {"record", opt(v.build_id)},
      {"job", opt(v.build_job_id)},
      {"commit", opt(v.build_commit)},
      {"reason", f.reason},
      {"log", v.build_job_id ? json::value("/api/v1/jobs/" + std::to_string(*v.build_job_id) + "/log?format=text")
                             : json::value(nullptr)},
      {"command", "cmake -S . -B build -DKPORT_CUDA_TARGETS=" + target +
                      " && cmake --build build --target kport-harness-" + target}};
  json::object resources{{"state", state(f.resources_clean, f.built && !f.resources_clean)},
                         {"registers", opt(v.registers)},
                         {"spill_bytes", opt(v.spill_bytes)},
                         {"shared_mem_bytes", opt(v.shared_mem_bytes)},
                         {"record", opt(v.build_id)}};
  json::object numerics{{"state", state(f.numerics_passed, f.numerics_failed)},
                        {"passed", v.passed},
                        {"failed", v.failed},
                        {"evidence", evidence_for(v.pass_result_id, evidence, false)},
                        {"failure", evidence_for(v.fail_result_id, evidence, false)}};
  json::object timing{
      {"state", state(f.measured, false)}, {"measured", v.measured},
      {"max_ratio", opt(v.max_ratio)},     {"max_tflops", opt(v.max_tflops)},
      {"max_gbps", opt(v.max_gbps)},       {"evidence", evidence_for(v.pass_result_id, evidence, true)}};
  // Measured and the fastest nowhere measured is no stage still to come: "none" (a reference
  // variant may never be the fastest), not "pending".
  json::object selected{{"state", !na && f.measured && !f.selected_best ? "none" : state(f.selected_best, false)},
                        {"count", v.selected}};
  return json::object{{"build", std::move(build)},
                      {"resources", std::move(resources)},
                      {"numerics", std::move(numerics)},
                      {"timing", std::move(timing)},
                      {"selected", std::move(selected)}};
}

// Cumulative counts of variants that reached each stage on any commit, one point per
// distinct time: the history, apart from the current stages.
json::array burndown_json(const db::TargetBoard& board, const porting::BringupStages& stages) {
  std::vector<std::pair<std::int64_t, int>> events;  // time, stage 0..2
  for (std::size_t i = 0; i < board.variants.size(); ++i) {
    const auto& v = board.variants[i];
    if (!stages.variants[i].applicable) continue;
    if (v.built_ms) events.emplace_back(*v.built_ms, 0);
    if (v.numerics_ms) events.emplace_back(*v.numerics_ms, 1);
    if (v.measured_ms) events.emplace_back(*v.measured_ms, 2);
  }
  std::sort(events.begin(), events.end());
  json::array out;
  std::int64_t n[3] = {0, 0, 0};
  for (std::size_t i = 0; i < events.size(); ++i) {
    ++n[events[i].second];
    if (i + 1 < events.size() && events[i + 1].first == events[i].first) continue;
    out.push_back(
        json::object{{"time_ms", events[i].first}, {"builds", n[0]}, {"numerics_passed", n[1]}, {"measured", n[2]}});
  }
  return out;
}

}  // namespace

json::object target_board_json(const db::TargetBoard& board, const porting::BringupStages& stages,
                               const std::map<std::int64_t, db::ResultRecord>& evidence) {
  json::array rows;
  for (std::size_t i = 0; i < board.variants.size(); ++i) {
    const auto& v = board.variants[i];
    const auto& f = stages.variants[i];
    rows.push_back(json::object{
        {"family", v.family},
        {"variant", v.variant},
        {"stage", porting::to_string(f.stage)},
        {"reason", f.reason},
        {"cells", cells_json(v, f, board.target.name, evidence)},
        {"milestones",
         {{"builds", opt(v.built_ms)}, {"numerics_passed", opt(v.numerics_ms)}, {"measured", opt(v.measured_ms)}}}});
  }
  json::array arches, libraries;
  for (const auto& a : board.check_arches) arches.emplace_back(a);
  for (const auto& r : board.repositories) libraries.emplace_back(r);
  return json::object{{"target",
                       {{"name", board.target.name},
                        {"arch", board.target.arch},
                        {"toolkit", board.target.toolkit},
                        {"is_new", board.target.is_new}}},
                      {"commit", opt(stages.commit)},
                      {"repo", opt(board.repo)},
                      {"repositories", std::move(libraries)},
                      {"check_arches", std::move(arches)},
                      {"progress", counts_json(stages.counts)},
                      {"families", families_json(stages)},
                      {"variants", std::move(rows)},
                      {"burndown", burndown_json(board, stages)}};
}

namespace {

using DiffKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;

DiffKey key_of(const porting::ResultFact& r) { return {r.target, r.gpu_model, r.instance, r.dtype, r.shape}; }

json::value side_json(const porting::ResultFact* r) {
  if (!r) return nullptr;
  return json::object{{"id", r->id},
                      {"status", porting::to_string(r->status)},
                      {"median_us", opt(r->median_us)},
                      {"stddev_us", opt(r->stddev_us)},
                      {"unstable", r->unstable}};
}

constexpr const char* k_kinds[] = {"new_failure", "regressed",         "fixed",        "improved",
                                   "unstable",    "insufficient_data", "still_failing"};
constexpr const char* k_counted[] = {"fixed",    "new_failure",       "still_failing", "regressed", "improved",
                                     "unstable", "insufficient_data", "unchanged",     "added",     "dropped"};

}  // namespace

json::object commit_diff_json(const std::vector<porting::ResultFact>& after,
                              const std::vector<porting::ResultFact>& before, const porting::VerdictPolicy& policy,
                              std::size_t max_changes, const porting::NoiseBook* noise) {
  std::map<DiffKey, const porting::ResultFact*> old;
  for (const auto& b : before) old[key_of(b)] = &b;
  struct Change {
    const char* kind;
    const porting::ResultFact* before;
    const porting::ResultFact* after;
    double delta;
  };
  struct Group {
    std::map<std::string, std::int64_t> counts;
    std::vector<Change> changes;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  std::map<std::string, std::int64_t> totals;
  auto count = [&](Group& g, const char* kind) {
    ++g.counts[kind];
    ++totals[kind];
  };
  for (const auto& a : after) {
    Group& g = groups[{a.target, a.gpu_model}];
    auto it = old.find(key_of(a));
    const porting::ResultFact* b = it == old.end() ? nullptr : it->second;
    if (it != old.end()) old.erase(it);
    std::optional<porting::NoiseModel> model;
    if (noise) {
      auto found = noise->find(porting::series_of(a));
      model = found != noise->end() ? found->second : porting::learn_noise(porting::series_of(a), {}, policy.noise);
    }
    const porting::Change change = porting::classify(b, a, policy, model ? &*model : nullptr);
    const char* kind = porting::to_string(change);
    count(g, kind);
    if (change == porting::Change::unchanged || change == porting::Change::added) continue;
    double delta = (b && b->median_us && a.median_us && *b->median_us > 0) ? *a.median_us / *b->median_us - 1 : 0;
    g.changes.push_back({kind, b, &a, delta});
  }
  for (const auto& [key, b] : old) count(groups[{std::get<0>(key), std::get<1>(key)}], "dropped");
  json::array out;
  for (auto& [key, g] : groups) {
    // Failures first, then the largest time changes.
    auto rank = [](const char* k) {
      return std::find_if(std::begin(k_kinds), std::end(k_kinds),
                          [&](const char* x) { return std::string_view(x) == k; }) -
             std::begin(k_kinds);
    };
    std::stable_sort(g.changes.begin(), g.changes.end(), [&](const Change& x, const Change& y) {
      if (rank(x.kind) != rank(y.kind)) return rank(x.kind) < rank(y.kind);
      return std::abs(x.delta) > std::abs(y.delta);
    });
    json::array changes;
    for (std::size_t i = 0; i < g.changes.size() && i < max_changes; ++i) {
      const auto& c = g.changes[i];
      changes.push_back(json::object{{"kind", c.kind},
                                     {"family", c.after->family},
                                     {"variant", c.after->variant},
                                     {"instance", c.after->instance},
                                     {"dtype", c.after->dtype},
                                     {"shape", c.after->shape},
                                     {"before", side_json(c.before)},
                                     {"after", side_json(c.after)},
                                     {"delta", c.delta},
                                     {"repo", c.after->repo}});
    }
    json::object counts;
    for (const char* k : k_counted) counts[k] = g.counts[k];
    out.push_back(json::object{{"target", key.first},
                               {"gpu_model", key.second},
                               {"counts", std::move(counts)},
                               {"changes", std::move(changes)},
                               {"truncated", g.changes.size() > max_changes}});
  }
  json::object total_counts;
  for (const char* k : k_counted) total_counts[k] = totals[k];
  return json::object{{"groups", std::move(out)},
                      {"totals", std::move(total_counts)},
                      {"rule", porting::describe(policy, noise != nullptr)}};
}

json::array kernel_series_json(const std::vector<db::KernelPoint>& points, const std::vector<db::GpuPeak>& peaks,
                               bool memory_bound) {
  std::map<std::string, std::optional<double>> peak_of;
  for (const auto& p : peaks) peak_of[p.gpu_model] = memory_bound ? p.gbps : p.tflops;
  constexpr const char* k_columns[] = {"commit", "time_ms",   "results",    "median_us", "low_us", "high_us",
                                       "share",  "share_low", "share_high", "ratio",     "result"};
  json::array out;
  for (std::size_t i = 0; i < points.size();) {
    const std::string& gpu = points[i].gpu_model;
    std::optional<double> peak = peak_of[gpu];
    // Column arrays rather than one object per point: the keys are not repeated 600 times.
    std::map<std::string, json::array> col;
    for (; i < points.size() && points[i].gpu_model == gpu; ++i) {
      const auto& p = points[i];
      std::optional<double> figure = memory_bound ? p.gbps : p.tflops;
      json::value share = nullptr, share_low = nullptr, share_high = nullptr;
      // Throughput scales with 1/time, so the time band maps onto the share band.
      if (figure && peak && *peak > 0) {
        double s = *figure / *peak;
        share = sig4(s);
        share_low = sig4(s * p.median_us / std::max(p.high_us, 1e-9));
        share_high = sig4(s * p.median_us / std::max(p.low_us, 1e-9));
      }
      col["commit"].emplace_back(p.commit_sha);
      col["time_ms"].emplace_back(p.commit_time_ms);
      col["results"].emplace_back(p.results);
      col["median_us"].emplace_back(sig4(p.median_us));
      col["low_us"].emplace_back(sig4(p.low_us));
      col["high_us"].emplace_back(sig4(p.high_us));
      col["share"].push_back(share);
      col["share_low"].push_back(share_low);
      col["share_high"].push_back(share_high);
      col["ratio"].push_back(opt4(p.ratio));
      col["result"].emplace_back(p.latest_result_id);
    }
    json::object columns;
    for (const char* name : k_columns) columns[name] = std::move(col[name]);
    out.push_back(json::object{{"gpu_model", gpu},
                               {"peak", opt4(peak)},
                               {"unit", memory_bound ? "GB/s" : "TFLOP/s"},
                               {"points", std::move(columns)}});
  }
  return out;
}

}  // namespace kport::coordinator
