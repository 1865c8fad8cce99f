#include "kport/dispatch/snapshot_writer.h"

#include <boost/json.hpp>

#include <algorithm>
#include <map>
#include <tuple>

#include "checksum.h"
#include "kport/dispatch/dispatch.h"

namespace kport::dispatch {
namespace json = boost::json;
namespace {

using Key = std::pair<std::string, std::string>;  // op, dtype

// Commits newest first (by the time the rule orders them by), then drivers in the
// order of the commits that used them: the first of each list is the newest evidence.
void provenance(const std::vector<const SnapshotFigure*>& rows, json::array& commits, json::array& drivers) {
  std::map<std::string, std::int64_t> newest;
  for (const auto* f : rows) newest[f->m.commit] = std::max(newest[f->m.commit], f->m.commit_ms);
  std::vector<std::pair<std::int64_t, std::string>> order;
  for (const auto& [sha, ms] : newest) order.emplace_back(ms, sha);
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::vector<std::string> seen;
  for (const auto& [ms, sha] : order) {
    commits.emplace_back(sha);
    for (const auto* f : rows)
      if (f->m.commit == sha && std::find(seen.begin(), seen.end(), f->m.driver) == seen.end())
        seen.push_back(f->m.driver);
  }
  for (const auto& d : seen) drivers.emplace_back(d);
}

json::object figure_json(const porting::Measurement& m) {
  return json::object{{"shape", m.shape.canonical()},
                      {"instance", m.instance},
                      {"variant", m.variant},
                      {"target", m.target},
                      {"status", m.status},
                      {"median_us", m.median_us > 0 ? json::value(m.median_us) : json::value(nullptr)},
                      {"stddev_us", m.stddev_us},
                      {"samples", m.samples},
                      {"ratio", m.ratio ? json::value(*m.ratio) : json::value(nullptr)},
                      {"unstable", m.unstable},
                      {"result_id", m.result_id},
                      {"commit", m.commit},
                      {"commit_ms", m.commit_ms},
                      {"driver", m.driver},
                      {"runs", m.runs},
                      {"measured_at_ms", m.measured_at_ms}};
}

}  // namespace

std::string write_snapshot(const SnapshotSource& source) {
  std::map<Key, std::vector<const SnapshotFigure*>> tables;
  std::vector<const SnapshotFigure*> all;
  for (const auto& f : source.figures) {
    tables[{f.op, f.dtype}].push_back(&f);
    all.push_back(&f);
  }
  json::array out_tables;
  for (auto& [key, rows] : tables) {
    std::sort(rows.begin(), rows.end(), [](const SnapshotFigure* a, const SnapshotFigure* b) {
      return std::tuple(a->m.shape.canonical(), a->m.instance, a->m.result_id) <
             std::tuple(b->m.shape.canonical(), b->m.instance, b->m.result_id);
    });
    json::array commits, drivers, figures;
    provenance(rows, commits, drivers);
    for (const auto* f : rows) figures.push_back(figure_json(f->m));
    json::object table{{"op", key.first},
                       {"dtype", key.second},
                       {"commits", std::move(commits)},
                       {"drivers", std::move(drivers)},
                       {"figures", std::move(figures)}};
    // The family's dimension rules, so a lookup's distance is the coordinator's.
    // and the dimensions that bound another's extent in a work estimate (`full_at`).
    if (auto r = source.rules.find(key.first);
        r != source.rules.end() && !(r->second.dims().empty() && r->second.caps().empty())) {
      json::array dims;
      auto full_at = [&](json::object& d, const std::string& name) {
        for (const auto& c : r->second.caps())
          if (c.dim == name) d["full_at"] = c.bounds;
      };
      for (const auto& [name, rule] : r->second.dims()) {
        json::object d{{"name", name}};
        if (rule.exact) d["exact"] = true;
        if (rule.weight != 1.0) d["weight"] = rule.weight;
        if (!rule.alignments.empty()) {
          json::array align;
          for (const auto& a : rule.alignments)
            align.push_back(json::object{{"multiple", a.quantum}, {"penalty", a.penalty}});
          d["align"] = std::move(align);
        }
        full_at(d, name);
        dims.push_back(std::move(d));
      }
      for (const auto& c : r->second.caps())
        if (std::none_of(r->second.dims().begin(), r->second.dims().end(),
                         [&](const auto& d) { return d.first == c.dim; }))
          dims.push_back(json::object{{"name", c.dim}, {"full_at", c.bounds}});
      table["dims"] = std::move(dims);
    }
    if (auto r = source.requirements.find(key.first); r != source.requirements.end() && !r->second.empty()) {
      json::array list;
      for (const auto& req : r->second) {
        json::object o{{"dim", req.dim}, {"multiple", req.multiple}};
        if (!req.when.empty()) {
          json::object when;
          for (const auto& [dim, value] : req.when) when[dim] = value;
          o["when"] = std::move(when);
        }
        list.push_back(std::move(o));
      }
      table["requires"] = std::move(list);
    }
    out_tables.push_back(std::move(table));
  }
  json::array commits, drivers;
  provenance(all, commits, drivers);
  auto geometry = source.geometry;
  std::sort(geometry.begin(), geometry.end(), [](const auto& a, const auto& b) { return a.instance < b.instance; });
  json::array instances;
  for (const auto& g : geometry) {
    auto splits = [](const std::vector<porting::Geometry::Split>& list) {
      json::array out;
      for (const auto& s : list) out.push_back(json::object{{"dim", s.dim}, {"size", s.size}});
      return out;
    };
    json::object instance{
        {"name", g.instance}, {"tiles", splits(g.geometry.tiles)}, {"steps", splits(g.geometry.steps)}};
    if (g.geometry.split != 1) instance["split"] = g.geometry.split;
    // A byte range: min_bytes only when it has one, so a path bound reads as it always did.
    auto bounds = [](const std::vector<porting::Geometry::PathBound>& list) {
      json::array out;
      for (const auto& b : list) {
        json::object o{{"dim", b.dim}, {"max_bytes", b.max_bytes}, {"align_bytes", b.align_bytes}};
        if (b.min_bytes > 0) o["min_bytes"] = b.min_bytes;
        out.push_back(std::move(o));
      }
      return out;
    };
    if (!g.geometry.paths.empty()) instance["paths"] = bounds(g.geometry.paths);
    if (!g.geometry.limits.empty()) {
      json::array limits;
      for (const auto& l : g.geometry.limits) limits.push_back(json::object{{"dim", l.dim}, {"max", l.size}});
      instance["limits"] = std::move(limits);
    }
    if (!g.geometry.multiples.empty()) {
      json::array multiples;
      for (const auto& l : g.geometry.multiples)
        multiples.push_back(json::object{{"dim", l.dim}, {"multiple", l.size}});
      instance["multiples"] = std::move(multiples);
    }
    if (!g.geometry.byte_limits.empty()) instance["byte_limits"] = bounds(g.geometry.byte_limits);
    instances.push_back(std::move(instance));
  }
  json::object doc{
      {"schema_version", k_schema_version},
      {"kind", "kport.dispatch.snapshot"},
      {"gpu", json::object{{"model", source.gpu_model}, {"arch", source.arch}, {"sm_count", source.sm_count}}},
      {"generated_at", source.generated_at},
      {"generated_at_ms", source.generated_at_ms},
      {"commits", std::move(commits)},
      {"drivers", std::move(drivers)},
      {"rule",
       "per (op, dtype): the timed shape where the fewest instances leave their own code for a "
       "fallback (instances[].paths), then the nearest (Shape::distance, ties to the larger problem), and its "
       "fastest current figure by median, ties within noise to a stable figure (porting::select_best); "
       "from another shape each figure is moved to the query by its instance's waves of tiles over "
       "gpu.sm_count SMs (instances[]), else by problem size, and the estimates rank"},
      {"instances", std::move(instances)},
      {"tables", std::move(out_tables)},
      {"checksum", "fnv1a64:" + std::string(detail::k_checksum_zero)}};
  std::string text = json::serialize(doc);
  auto digits = detail::find_checksum_digits(text);
  // The writer's own output always has exactly one marker: instance names are JSON strings.
  if (digits && *digits != std::string::npos)
    text.replace(*digits, detail::k_checksum_zero.size(), detail::hex16(detail::fnv1a64_masked(text, *digits)));
  return text;
}

}  // namespace kport::dispatch
