// Loading a snapshot: every check happens here, once, so a lookup can trust the index.
// The rule itself is porting's: current_figures() reduces the rows and select_best()
// picks each timed shape's winner from that shape's figures (its answer at a shape
// depends on nothing else), exactly as GET /api/v1/best does for a query at that shape.
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "checksum.h"
#include "impl.h"
#include "kport/porting/selection.h"

namespace kport::dispatch {
namespace json = boost::json;
namespace {

Error fail(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

const char* kind_of(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

// Reads the fields of one object; the first problem is kept, naming the field's path.
class Fields {
 public:
  Fields(const json::object& o, std::string path) : m_o(o), m_path(std::move(path)) {}

  const json::value* get(std::string_view key) {
    auto* v = m_o.if_contains(key);
    if (!v) fail_once(ErrorCode::missing_field, where(key) + " is missing");
    return v;
  }
  std::string str(std::string_view key, bool allow_empty = false) {
    auto* v = get(key);
    if (!v) return {};
    if (!v->is_string()) return wrong(key, *v, "a string"), std::string();
    std::string s(v->as_string());
    if (s.empty() && !allow_empty) fail_once(ErrorCode::bad_value, where(key) + " is empty");
    return s;
  }
  std::int64_t integer(std::string_view key, std::int64_t min = 0) {
    auto* v = get(key);
    if (!v) return 0;
    std::int64_t out = 0;
    if (v->is_int64())
      out = v->as_int64();
    else if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
      out = static_cast<std::int64_t>(v->as_uint64());
    else
      return wrong(key, *v, "an integer"), 0;
    if (out < min)
      fail_once(ErrorCode::bad_value,
                where(key) + " is " + std::to_string(out) + "; it must be at least " + std::to_string(min));
    return out;
  }
  std::optional<double> number(std::string_view key, bool nullable) {
    auto* v = get(key);
    if (!v) return std::nullopt;
    if (v->is_null()) {
      if (!nullable) wrong(key, *v, "a number");
      return std::nullopt;
    }
    if (!v->is_number()) return wrong(key, *v, "a number"), std::nullopt;
    double d = v->to_number<double>();
    if (!std::isfinite(d) || d < 0) fail_once(ErrorCode::bad_value, where(key) + " must be a finite number >= 0");
    return d;
  }
  bool boolean(std::string_view key) {
    auto* v = get(key);
    if (!v) return false;
    if (!v->is_bool()) return wrong(key, *v, "a boolean"), false;
    return v->as_bool();
  }
  std::vector<std::string> strings(std::string_view key) {
    auto* v = get(key);
    std::vector<std::string> out;
    if (!v) return out;
    if (!v->is_array()) return wrong(key, *v, "an array of strings"), out;
    for (const auto& s : v->as_array()) {
      if (!s.is_string()) return wrong(key, s, "an array of strings"), out;
      out.emplace_back(s.as_string());
    }
    return out;
  }
  const json::array* array(std::string_view key) {
    auto* v = get(key);
    if (!v) return nullptr;
    if (!v->is_array()) return wrong(key, *v, "an array"), nullptr;
    return &v->as_array();
  }
  const json::object* object(std::string_view key) {
    auto* v = get(key);
    if (!v) return nullptr;
    if (!v->is_object()) return wrong(key, *v, "an object"), nullptr;
    return &v->as_object();
  }

  std::string where(std::string_view key) const {
    return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
  }
  void fail_once(ErrorCode code, std::string message) {
    if (!m_error) m_error = Error{code, std::move(message)};
  }
  const std::optional<Error>& error() const { return m_error; }

 private:
  void wrong(std::string_view key, const json::value& v, const char* want) {
    fail_once(ErrorCode::bad_json, where(key) + " is " + kind_of(v) + "; expected " + want);
  }
  const json::object& m_o;
  std::string m_path;
  std::optional<Error> m_error;
};

constexpr std::string_view k_statuses[] = {"passed", "failed", "crashed", "timeout", "unsupported"};

// A table's `dims`: its family's declared rule of each dimension that is not plain
// (porting::OpFamily::shape_rules). Absent: every dimension plain.
Expected<porting::ShapeRules> read_rules(const json::object& table, const std::string& path) {
  const json::value* dims = table.if_contains("dims");
  if (!dims) return porting::ShapeRules{};
  if (!dims->is_array()) return fail(ErrorCode::bad_json, path + ".dims is " + kind_of(*dims) + "; expected an array");
  std::vector<std::pair<std::string, porting::Shape::DimRule>> out;
  std::vector<porting::ShapeRules::Cap> caps;
  for (std::size_t i = 0; i < dims->as_array().size(); ++i) {
    const std::string at = path + ".dims[" + std::to_string(i) + "]";
    const json::value& d = dims->as_array()[i];
    if (!d.is_object()) return fail(ErrorCode::bad_json, at + " is " + kind_of(d) + "; expected an object");
    Fields f(d.as_object(), at);
    porting::Shape::DimRule rule;
    std::string name = f.str("name");
    if (d.as_object().contains("exact")) rule.exact = f.boolean("exact");
    // full_at came later within schema_version 2: a snapshot without it bounds nothing.
    if (d.as_object().contains("full_at")) caps.push_back({name, f.str("full_at")});
    if (d.as_object().contains("weight")) rule.weight = f.number("weight", false).value_or(1.0);
    if (d.as_object().contains("align"))
      if (const json::array* align = f.array("align"))
        for (std::size_t k = 0; k < align->size(); ++k) {
          const std::string aat = at + ".align[" + std::to_string(k) + "]";
          if (!(*align)[k].is_object()) return fail(ErrorCode::bad_json, aat + " is not an object");
          Fields a((*align)[k].as_object(), aat);
          const std::int64_t multiple = a.integer("multiple", 2);
          const double penalty = a.number("penalty", false).value_or(0);
          if (a.error()) return *a.error();
          rule.alignments.push_back({multiple, penalty});
        }
    if (f.error()) return *f.error();
    if (!(rule.weight > 0) || rule.alignments.size() > k_max_alignments)
      return fail(ErrorCode::bad_value, at + ": a weight above 0 and at most " + std::to_string(k_max_alignments) +
                                            " alignments, as the coordinator writes");
    if (!caps.empty() && caps.back().dim == name) {
      const auto& b = caps.back().bounds;
      const bool twice = std::any_of(caps.begin(), caps.end() - 1, [&](const auto& c) { return c.bounds == b; });
      if (b.empty() || b == name || twice)
        return fail(ErrorCode::bad_value,
                    at + ".full_at must name another dimension, one no other bounds, as the coordinator writes");
    }
    const auto& o = d.as_object();
    if (o.contains("exact") || o.contains("weight") || o.contains("align"))
      out.emplace_back(std::move(name), std::move(rule));
  }
  return porting::ShapeRules(std::move(out), std::move(caps));
}

// A table's `requires`: what a shape needs for any instance to run it. Absent: nothing.
Expected<std::vector<porting::ShapeRequirement>> read_requirements(const json::object& table, const std::string& path) {
  std::vector<porting::ShapeRequirement> out;
  const json::value* list = table.if_contains("requires");
  if (!list) return out;
  if (!list->is_array())
    return fail(ErrorCode::bad_json, path + ".requires is " + kind_of(*list) + "; expected an array");
  if (list->as_array().size() > 8) return fail(ErrorCode::bad_value, path + ".requires has more than 8 entries");
  for (std::size_t i = 0; i < list->as_array().size(); ++i) {
    const std::string at = path + ".requires[" + std::to_string(i) + "]";
    const json::value& v = list->as_array()[i];
    if (!v.is_object()) return fail(ErrorCode::bad_json, at + " is " + kind_of(v) + "; expected an object");
    Fields f(v.as_object(), at);
    porting::ShapeRequirement r;
    r.dim = f.str("dim");
    r.multiple = f.integer("multiple", 2);
    if (f.error()) return *f.error();
    if (const json::value* when = v.as_object().if_contains("when")) {
      if (!when->is_object() || when->as_object().size() > 4)
        return fail(ErrorCode::bad_value, at + ".when: an object of at most 4 dims, as the coordinator writes");
      for (const auto& m : when->as_object()) {
        if (!m.value().is_int64() || m.value().as_int64() < 0)
          return fail(ErrorCode::bad_value, at + ".when." + std::string(m.key()) + ": a non-negative integer");
        r.when.emplace_back(std::string(m.key()), m.value().as_int64());
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

Expected<porting::Measurement> read_figure(const json::value& v, const std::string& path, const std::string& gpu,
                                           const std::string& arch) {
  if (!v.is_object()) return fail(ErrorCode::bad_json, path + " is " + kind_of(v) + "; expected an object");
  Fields f(v.as_object(), path);
  porting::Measurement m;
  auto shape_text = f.str("shape");
  m.instance = f.str("instance");
  m.variant = f.str("variant");
  m.target = f.str("target", true);
  m.status = f.str("status");
  m.median_us = f.number("median_us", true).value_or(0);
  m.stddev_us = f.number("stddev_us", false).value_or(0);
  m.samples = f.integer("samples");
  m.ratio = f.number("ratio", true);
  m.unstable = f.boolean("unstable");
  m.result_id = f.integer("result_id", 1);
  m.commit = f.str("commit");
  m.commit_ms = f.integer("commit_ms");
  m.driver = f.str("driver", true);
  m.runs = f.integer("runs", 1);
  m.measured_at_ms = f.integer("measured_at_ms");
  if (f.error()) return *f.error();
  if (std::find(std::begin(k_statuses), std::end(k_statuses), m.status) == std::end(k_statuses))
    return fail(ErrorCode::bad_value,
                path + ".status is '" + m.status + "'; expected passed, failed, crashed, timeout or unsupported");
  auto shape = porting::Shape::parse(shape_text);
  if (!shape.ok()) return fail(ErrorCode::bad_value, path + ".shape: " + shape.error().message);
  if (shape->dims().size() > k_max_dims)
    return fail(ErrorCode::bad_value, path + ".shape has " + std::to_string(shape->dims().size()) +
                                          " dimensions; kport-dispatch reads at most " + std::to_string(k_max_dims));
  m.shape = std::move(*shape);
  m.gpu_model = gpu;
  m.arch = arch;
  return m;
}

bool dim_key(std::string_view key) {
  return !key.empty() && key.size() <= 16 &&
         std::all_of(key.begin(), key.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

// {"name", "tiles": [{"dim", "size"}], "steps": [...]}: how an instance divides a problem.
Expected<porting::InstanceGeometry> read_geometry(const json::value& v, const std::string& path) {
  if (!v.is_object()) return fail(ErrorCode::bad_json, path + " is " + kind_of(v) + "; expected an object");
  Fields f(v.as_object(), path);
  porting::InstanceGeometry g;
  g.instance = f.str("name");
  const json::array* tiles = f.array("tiles");
  const json::array* steps = f.array("steps");
  if (f.error()) return *f.error();
  for (auto [list, into, name] :
       {std::tuple{tiles, &g.geometry.tiles, "tiles"}, std::tuple{steps, &g.geometry.steps, "steps"}}) {
    if (list->size() > k_max_dims)
      return fail(ErrorCode::bad_value,
                  path + "." + name + " has more than " + std::to_string(k_max_dims) + " entries");
    for (std::size_t i = 0; i < list->size(); ++i) {
      std::string at = path + "." + name + "[" + std::to_string(i) + "]";
      if (!(*list)[i].is_object())
        return fail(ErrorCode::bad_json, at + " is " + kind_of((*list)[i]) + "; expected an object");
      Fields e((*list)[i].as_object(), at);
      porting::Geometry::Split split{e.str("dim"), e.integer("size", 1)};
      if (e.error()) return *e.error();
      if (!dim_key(split.dim))
        return fail(ErrorCode::bad_value, at + ".dim '" + split.dim + "' is not a shape dimension");
      into->push_back(std::move(split));
    }
  }
  // Split K came later within schema_version 2: a snapshot without it splits nothing.
  if (const auto* split = v.as_object().if_contains("split")) {
    if (!split->is_int64() || split->as_int64() < 0 || split->as_int64() > 64)
      return fail(ErrorCode::bad_value,
                  path + ".split is not a whole number of blocks per tile from 1 to 64, or 0 (fills the GPU)");
    g.geometry.split = split->as_int64();
  }
  // Byte ranges (porting::Geometry::PathBound) under `key`, `min_bytes` optional.
  auto bounds = [&](const char* key, std::vector<porting::Geometry::PathBound>& into) -> std::optional<Error> {
    const auto* found = v.as_object().if_contains(key);
    if (!found) return std::nullopt;
    const std::string lpath = path + "." + key;
    if (!found->is_array()) return fail(ErrorCode::bad_json, lpath + " is " + kind_of(*found) + "; expected an array");
    const auto& list = found->as_array();
    if (list.size() > k_max_dims)
      return fail(ErrorCode::bad_value, lpath + " has more than " + std::to_string(k_max_dims) + " entries");
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string at = lpath + "[" + std::to_string(i) + "]";
      if (!list[i].is_object())
        return fail(ErrorCode::bad_json, at + " is " + kind_of(list[i]) + "; expected an object");
      Fields e(list[i].as_object(), at);
      porting::Geometry::PathBound b{e.str("dim"), e.integer("max_bytes", 0), e.integer("align_bytes", 0)};
      if (list[i].as_object().contains("min_bytes")) b.min_bytes = e.integer("min_bytes", 0);
      if (e.error()) return *e.error();
      if (!dim_key(b.dim)) return fail(ErrorCode::bad_value, at + ".dim '" + b.dim + "' is not a shape dimension");
      if (b.min_bytes == 0 && b.max_bytes == 0 && b.align_bytes == 0)
        return fail(ErrorCode::bad_value, at + " bounds nothing: give min_bytes, max_bytes or align_bytes above 0");
      into.push_back(std::move(b));
    }
    return std::nullopt;
  };
  // Path bounds and byte limits came later within schema_version 2: a snapshot without
  // them has none.
  if (auto e = bounds("paths", g.geometry.paths)) return *e;
  if (auto e = bounds("byte_limits", g.geometry.byte_limits)) return *e;
  // Extents along a dimension under `key`, each a positive `field`: "limits" (the largest,
  // "max") and "multiples" (the multiple it runs, "multiple").
  auto extents = [&](const char* key, const char* field,
                     std::vector<porting::Geometry::Split>& into) -> std::optional<Error> {
    const auto* found = v.as_object().if_contains(key);
    if (!found) return std::nullopt;
    const std::string lpath = path + "." + key;
    if (!found->is_array()) return fail(ErrorCode::bad_json, lpath + " is " + kind_of(*found) + "; expected an array");
    const auto& list = found->as_array();
    if (list.size() > k_max_dims)
      return fail(ErrorCode::bad_value, lpath + " has more than " + std::to_string(k_max_dims) + " entries");
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string at = lpath + "[" + std::to_string(i) + "]";
      if (!list[i].is_object())
        return fail(ErrorCode::bad_json, at + " is " + kind_of(list[i]) + "; expected an object");
      Fields e(list[i].as_object(), at);
      porting::Geometry::Split lim{e.str("dim"), e.integer(field, 0)};
      if (e.error()) return *e.error();
      if (!dim_key(lim.dim)) return fail(ErrorCode::bad_value, at + ".dim '" + lim.dim + "' is not a shape dimension");
      if (lim.size < 1) return fail(ErrorCode::bad_value, at + "." + field + " is not a positive extent");
      into.push_back(std::move(lim));
    }
    return std::nullopt;
  };
  // Limits, then multiples, came later within schema_version 2: a snapshot without them
  // limits nothing.
  if (auto e = extents("limits", "max", g.geometry.limits)) return *e;
  if (auto e = extents("multiples", "multiple", g.geometry.multiples)) return *e;
  return g;
}

// The work plan of one instance over a layout's keys: the products porting::wave_work
// (with a geometry and an SM count) or porting::problem_size takes, in the same order.
WorkPlan plan_for(const Layout& l, const porting::Geometry* g, int sm_count) {
  WorkPlan p;
  auto index_of = [&](const std::string& dim) -> int {
    for (std::size_t i = 0; i < l.keys.size(); ++i)
      if (l.keys[i] == dim) return static_cast<int>(i);
    return -1;
  };
  p.waves = g && porting::has_waves(*g) && sm_count > 0;
  if (p.waves) {
    p.split = g->split;
    for (const auto& t : g->tiles) {
      int at = index_of(t.dim);
      if (at < 0) {
        p.missing = true;
        return p;
      }
      p.tile_at[p.n_tiles] = static_cast<std::uint8_t>(at);
      p.tile_cap[p.n_tiles] = l.bound_by[static_cast<std::size_t>(at)];
      p.tile[p.n_tiles++] = t.size;
    }
    for (const auto& t : g->steps) {
      int at = index_of(t.dim);
      if (at < 0) {
        p.missing = true;
        return p;
      }
      p.step_at[p.n_steps] = static_cast<std::uint8_t>(at);
      p.step_cap[p.n_steps] = l.bound_by[static_cast<std::size_t>(at)];
      p.step[p.n_steps++] = t.size;
    }
  }
  if (g)
    for (const auto& lim : g->limits)
      if (int at = index_of(lim.dim); at >= 0) {
        p.limit_at[p.n_limits] = static_cast<std::uint8_t>(at);
        p.limit[p.n_limits++] = lim.size;
      }
  if (g)
    for (const auto& lim : g->multiples)
      if (int at = index_of(lim.dim); at >= 0) {
        p.multiple_at[p.n_multiples] = static_cast<std::uint8_t>(at);
        p.multiple[p.n_multiples++] = lim.size;
      }
  if (g)
    for (const auto& b : g->byte_limits)
      if (int at = index_of(b.dim); at >= 0) {
        p.byte_limit_at[p.n_byte_limits] = static_cast<std::uint8_t>(at);
        p.byte_limit[p.n_byte_limits++] = &b;
      }
  auto named = [&](const std::vector<porting::Geometry::Split>& splits, const std::string& key) {
    return std::any_of(splits.begin(), splits.end(), [&](const auto& s) { return s.dim == key; });
  };
  for (std::size_t i = 0; i < l.keys.size(); ++i) {
    if (l.exact[i] || l.bounds_another[i]) continue;
    if (p.waves && (named(g->tiles, l.keys[i]) || named(g->steps, l.keys[i]))) continue;
    p.other_at[p.n_others] = static_cast<std::uint8_t>(i);
    p.other_cap[p.n_others++] = l.bound_by[i];
  }
  return p;
}

void add_shape(ShapeSet& set, const porting::Shape& shape) {
  for (const auto& [key, value] : shape.dims()) {
    set.values.push_back(value);
    set.logs.push_back(value > 0 ? std::log(static_cast<double>(value)) : -std::numeric_limits<double>::infinity());
  }
  set.canonical.push_back(shape.canonical());
}

// ShapeSet's distinct values per dimension and each value's index among them: a gemm
// table's 160 shapes hold some 30 distinct extents, so a lookup takes 30 terms, not 480.
void index_distinct(ShapeSet& set, const Layout& l) {
  const std::size_t n = l.keys.size();
  set.distinct.clear();
  set.distinct_logs.clear();
  set.distinct_aligned.clear();
  set.distinct_first.clear();
  set.slot.clear();
  if (n == 0) return;
  std::vector<std::int64_t> distinct;
  std::vector<std::uint32_t> first;
  for (std::size_t i = 0; i < n; ++i) {
    first.push_back(static_cast<std::uint32_t>(distinct.size()));
    std::vector<std::int64_t> dim;
    for (std::size_t j = 0; j < set.size(); ++j) dim.push_back(set.values[j * n + i]);
    std::sort(dim.begin(), dim.end());
    dim.erase(std::unique(dim.begin(), dim.end()), dim.end());
    distinct.insert(distinct.end(), dim.begin(), dim.end());
  }
  first.push_back(static_cast<std::uint32_t>(distinct.size()));
  if (distinct.size() > k_max_distinct) return;
  std::vector<std::uint16_t> slot;
  slot.reserve(set.values.size());
  for (std::size_t j = 0; j < set.values.size(); ++j) {
    const std::size_t i = j % n;
    auto at = std::lower_bound(distinct.begin() + first[i], distinct.begin() + first[i + 1], set.values[j]);
    slot.push_back(static_cast<std::uint16_t>(at - distinct.begin()));
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::uint32_t k = first[i]; k < first[i + 1]; ++k) {
      const std::int64_t v = distinct[k];
      set.distinct_logs.push_back(v > 0 ? std::log(static_cast<double>(v)) : -std::numeric_limits<double>::infinity());
      set.distinct_aligned.push_back(alignment_bits(l.rules[i], v));
    }
  // Runs by the dimension with the most distinct values.
  std::size_t g = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (first[i + 1] - first[i] > first[g + 1] - first[g]) g = i;
  set.group_dim = static_cast<std::uint8_t>(g);
  set.order.clear();
  set.run_first.clear();
  for (std::uint32_t k = first[g]; k < first[g + 1]; ++k) {
    set.run_first.push_back(static_cast<std::uint32_t>(set.order.size()));
    for (std::size_t j = 0; j < set.size(); ++j)
      if (slot[j * n + g] == k) set.order.push_back(static_cast<std::uint32_t>(j));
  }
  set.run_first.push_back(static_cast<std::uint32_t>(set.order.size()));
  set.distinct = std::move(distinct);
  set.distinct_first = std::move(first);
  set.slot = std::move(slot);
}

Layout& layout_for(Snapshot::Table& t, const porting::Shape& shape) {
  for (auto& l : t.layouts) {
    if (l.keys.size() != shape.dims().size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < l.keys.size() && same; ++i) same = l.keys[i] == shape.dims()[i].first;
    if (same) return l;
  }
  Layout l;
  for (const auto& [key, _] : shape.dims()) {
    l.keys.push_back(key);
    const auto& rule = t.rules.rule(key);
    l.exact.push_back(rule.exact ? 1 : 0);
    l.rules.push_back(rule);
    l.bounds_another.push_back(t.rules.bounds_another(key) ? 1 : 0);
  }
  // The first bound of each key that the layout has (porting::ShapeRules::extent takes the
  // smallest of all; kport's families bound a dimension by one other at most).
  l.bound_by.assign(l.keys.size(), k_unbounded);
  for (const auto& c : t.rules.caps())
    for (std::size_t i = 0; i < l.keys.size(); ++i)
      if (l.keys[i] == c.bounds && l.bound_by[i] == k_unbounded)
        for (std::size_t j = 0; j < l.keys.size(); ++j)
          if (l.keys[j] == c.dim) l.bound_by[i] = static_cast<std::uint8_t>(j);
  t.layouts.push_back(std::move(l));
  return t.layouts.back();
}

// Reduces a table's rows as the API does and precomputes every timed shape's winner.
Expected<std::unique_ptr<Snapshot::Table>> index_table(std::string op, std::string dtype,
                                                       std::vector<porting::Measurement> rows,
                                                       porting::ShapeRules rules, const Snapshot::Impl& snap,
                                                       const std::string& path) {
  const std::string& gpu = snap.gpu_model;
  const std::string& arch = snap.arch;
  auto table = std::make_unique<Snapshot::Table>();
  table->op = std::move(op);
  table->dtype = std::move(dtype);
  table->rules = std::move(rules);
  auto current = porting::current_figures(rows);
  // The instances with a ranking figure, by name: an index into them orders as names do.
  std::map<std::string, std::string> ranking_instances;
  for (const auto& m : current)
    if (m.ranks()) ranking_instances.emplace(m.instance, m.variant);
  std::map<std::string, std::uint32_t> instance_index;
  for (const auto& [name, variant] : ranking_instances) {
    instance_index[name] = static_cast<std::uint32_t>(table->instances.size());
    table->instances.push_back(TableInstance{name, variant, porting::find_geometry(snap.geometry, name)});
  }
  std::map<std::string, std::vector<porting::Measurement>> by_shape;
  for (auto& m : current) by_shape[m.shape.canonical()].push_back(std::move(m));
  std::set<std::string> winners;
  for (auto& [canonical, figures] : by_shape) {
    const porting::Shape shape = figures.front().shape;
    Layout& layout = layout_for(*table, shape);
    bool timed = std::any_of(figures.begin(), figures.end(), [](const porting::Measurement& m) { return m.ranks(); });
    if (!timed) {
      add_shape(layout.untimed, shape);
      continue;
    }
    porting::SelectionQuery q{gpu, arch, "", shape, table->dtype};
    porting::SelectionInputs in;
    in.on_gpu = figures;
    in.rules = &table->rules;
    auto sel = porting::select_best(q, in);
    const porting::Ranked* best = sel.best();
    if (sel.kind != porting::Selection::Kind::measured || !best || !best->evidence)
      return fail(ErrorCode::bad_value,
                  path + ": the rule found no measured best at " + canonical +
                      " although it has a timed figure; this snapshot does not fit this library's rule");
    const auto& e = *best->evidence;
    layout.winners.push_back(
        Winner{best->instance, best->variant, e.median_us, e.stddev_us, best->tie_with_best, e.unstable, e.result_id});
    if (layout.plans.empty())
      for (const auto& ti : table->instances) layout.plans.push_back(plan_for(layout, ti.geometry, snap.sm_count));
    if (layout.first.empty()) layout.first.push_back(0);
    for (const auto& m : figures) {
      if (!m.ranks()) continue;
      std::uint32_t at = instance_index.at(m.instance);
      std::array<std::int64_t, k_max_dims> values{};
      for (std::size_t i = 0; i < m.shape.dims().size(); ++i) values[i] = m.shape.dims()[i].second;
      layout.figures.push_back(Figure{at, m.median_us, m.stddev_us,
                                      plan_work(layout.plans[at], values.data(), snap.sm_count), m.unstable,
                                      m.result_id});
    }
    if (layout.figures.size() - layout.first.back() > k_max_figures)
      return fail(ErrorCode::bad_value, path + ": " + canonical + " has more than " + std::to_string(k_max_figures) +
                                            " ranking figures; kport-dispatch ranks at most that many at one shape");
    layout.first.push_back(static_cast<std::uint32_t>(layout.figures.size()));
    add_shape(layout.timed, shape);
    winners.insert(best->instance);
  }
  const int element_bytes = porting::element_bytes(table->dtype);
  for (auto& l : table->layouts) {
    // The instances' path bounds on this layout's keys, and every shape's own-path bits.
    l.element_bytes = element_bytes;
    std::size_t bounded = 0;
    for (const auto& ti : table->instances) {
      if (!ti.geometry || ti.geometry->paths.empty()) continue;
      if (bounded == k_max_bounded)
        return fail(ErrorCode::bad_value,
                    path + ": more than " + std::to_string(k_max_bounded) +
                        " instances with path bounds; kport-dispatch places shapes for at most that many");
      for (const auto& b : ti.geometry->paths)
        for (std::size_t i = 0; i < l.keys.size(); ++i)
          if (l.keys[i] == b.dim)
            l.paths.push_back(PathCheck{static_cast<std::uint8_t>(bounded), static_cast<std::uint8_t>(i), b});
      ++bounded;
    }
    if (!l.paths.empty())
      for (ShapeSet* set : {&l.timed, &l.untimed})
        for (std::size_t j = 0; j < set->size(); ++j) set->own.push_back(own_paths(l, &set->values[j * l.keys.size()]));
    // The fast pass's flat copy of the rules, and every shape's alignment bits.
    for (const auto& rule : l.rules) {
      l.weight.push_back(rule.weight);
      std::array<double, 4> pen{0, 0, 0, 0};
      for (unsigned x = 0; x < 4; ++x)
        for (std::size_t k = 0; k < rule.alignments.size() && k < k_max_alignments; ++k)
          if (x & (1u << k)) pen[x] += rule.alignments[k].penalty;
      l.penalty.push_back(pen);
    }
    for (ShapeSet* set : {&l.timed, &l.untimed}) {
      set->aligned.clear();
      for (std::size_t j = 0; j < set->values.size(); ++j)
        set->aligned.push_back(alignment_bits(l.rules[j % l.rules.size()], set->values[j]));
      index_distinct(*set, l);
    }
  }
  table->info.op = table->op;
  table->info.dtype = table->dtype;
  table->info.figures = current.size();
  table->info.shapes = by_shape.size();
  for (const auto& l : table->layouts) table->info.timed_shapes += l.timed.size();
  table->info.instances.assign(winners.begin(), winners.end());
  return table;
}

bool hex_prefix(std::string_view s) {
  return s.size() >= 7 && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::int64_t system_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Expected<std::unique_ptr<Snapshot::Impl>> read(std::string_view text, const LoadOptions& opt) {
  boost::system::error_code ec;
  json::value doc = json::parse(text, ec);
  if (ec)
    return fail(ErrorCode::bad_json, "snapshot is not JSON (" + ec.message() +
                                         "); fetch it again from GET /api/v1/dispatch/snapshot?gpu=MODEL");
  if (!doc.is_object())
    return fail(ErrorCode::bad_json, std::string("snapshot is ") + kind_of(doc) + "; expected a JSON object");
  const auto& root = doc.as_object();
  auto* version = root.if_contains("schema_version");
  if (!version)
    return fail(ErrorCode::missing_field, "schema_version is missing: this is not a kport-dispatch snapshot");
  if (!version->is_int64() || version->as_int64() != k_schema_version)
    return fail(ErrorCode::schema_version,
                "schema_version is " + json::serialize(*version) + "; this kport-dispatch reads " +
                    std::to_string(k_schema_version) +
                    " (fetch a snapshot from a matching coordinator, or upgrade kport-dispatch)");
  // Whitespace after the document (an editor's final newline) is not part of what was served.
  std::string_view served = text.substr(0, text.find_last_not_of(" \t\r\n") + 1);
  auto digits = detail::find_checksum_digits(served);
  if (!digits)
    return fail(ErrorCode::missing_field,
                "checksum is missing; a snapshot as served carries \"checksum\":\"fnv1a64:...\"");
  if (*digits == std::string_view::npos)
    return fail(ErrorCode::checksum, "checksum is not one \"fnv1a64:<16 hex digits>\" value");
  auto want = detail::hex16(detail::fnv1a64_masked(served, *digits));
  if (served.substr(*digits, 16) != want)
    return fail(ErrorCode::checksum,
                "checksum mismatch: the snapshot says fnv1a64:" + std::string(served.substr(*digits, 16)) +
                    " but its bytes hash to fnv1a64:" + want +
                    "; it was truncated or edited after it was served; fetch it again");

  auto impl = std::make_unique<Snapshot::Impl>();
  Fields f(root, "");
  if (auto* kind = root.if_contains("kind");
      kind && !(kind->is_string() && kind->as_string() == "kport.dispatch.snapshot"))
    return fail(ErrorCode::bad_value, "kind is " + json::serialize(*kind) + "; expected \"kport.dispatch.snapshot\"");
  const json::object* gpu = f.object("gpu");
  impl->generated_at_ms = f.integer("generated_at_ms", 1);
  impl->commits = f.strings("commits");
  impl->drivers = f.strings("drivers");
  const json::array* tables = f.array("tables");
  if (f.error()) return *f.error();
  Fields g(*gpu, "gpu");
  impl->gpu_model = g.str("model");
  impl->arch = g.str("arch", true);
  std::int64_t sms = g.integer("sm_count");
  if (g.error()) return *g.error();
  if (sms > 100'000)
    return fail(ErrorCode::bad_value, "gpu.sm_count is " + std::to_string(sms) + "; no GPU has that many SMs");
  impl->sm_count = static_cast<int>(sms);
  const json::array* instances = f.array("instances");
  if (f.error()) return *f.error();
  std::set<std::string> named;
  for (std::size_t i = 0; i < instances->size(); ++i) {
    std::string path = "instances[" + std::to_string(i) + "]";
    auto geometry = read_geometry((*instances)[i], path);
    if (!geometry.ok()) return geometry.error();
    if (!named.insert(geometry->instance).second)
      return fail(ErrorCode::bad_value, path + " repeats instance " + geometry->instance);
    impl->geometry.push_back(std::move(*geometry));
  }

  if (opt.expect_gpu && *opt.expect_gpu != impl->gpu_model)
    return fail(ErrorCode::wrong_gpu,
                "snapshot is for GPU model '" + impl->gpu_model + "', not '" + *opt.expect_gpu + "'");
  if (opt.max_age_s) {
    std::int64_t now = opt.now_ms ? opt.now_ms : system_now_ms();
    std::int64_t age_s = (now - impl->generated_at_ms) / 1000;
    if (now - impl->generated_at_ms > *opt.max_age_s * 1000)
      return fail(ErrorCode::stale, "snapshot of " + impl->gpu_model + " was generated " + std::to_string(age_s) +
                                        " s ago, more than the max age of " + std::to_string(*opt.max_age_s) +
                                        " s; fetch a new one (GET /api/v1/dispatch/snapshot?gpu=MODEL)");
    if (impl->generated_at_ms - now > 5 * 60 * 1000)
      return fail(ErrorCode::stale,
                  "snapshot of " + impl->gpu_model + " was generated " + std::to_string(-age_s) +
                      " s in the future; this clock and the coordinator's disagree, so its age is unknown");
  }
  if (opt.expect_commit) {
    if (!hex_prefix(*opt.expect_commit))
      return fail(ErrorCode::wrong_commit,
                  "expected commit '" + *opt.expect_commit + "' is not 7 to 64 lowercase hex digits");
    if (impl->commits.empty())
      return fail(ErrorCode::wrong_commit, "snapshot of " + impl->gpu_model +
                                               " has no measurement, so no commit; expected " + *opt.expect_commit);
    if (impl->commits.front().rfind(*opt.expect_commit, 0) != 0)
      return fail(ErrorCode::wrong_commit, "snapshot's newest commit on " + impl->gpu_model + " is " +
                                               impl->commits.front() + ", not the expected " + *opt.expect_commit +
                                               "; fetch a snapshot after that commit was measured");
  }

  std::set<std::pair<std::string, std::string>> seen;
  for (std::size_t i = 0; i < tables->size(); ++i) {
    std::string path = "tables[" + std::to_string(i) + "]";
    const auto& tv = (*tables)[i];
    if (!tv.is_object()) return fail(ErrorCode::bad_json, path + " is " + kind_of(tv) + "; expected an object");
    Fields t(tv.as_object(), path);
    auto op = t.str("op");
    auto dtype = t.str("dtype");
    const json::array* figures = t.array("figures");
    if (t.error()) return *t.error();
    if (!seen.insert({op, dtype}).second)
      return fail(ErrorCode::bad_value, path + " repeats op " + op + " dtype " + dtype);
    std::vector<porting::Measurement> rows;
    rows.reserve(figures->size());
    for (std::size_t j = 0; j < figures->size(); ++j) {
      auto m = read_figure((*figures)[j], path + ".figures[" + std::to_string(j) + "]", impl->gpu_model, impl->arch);
      if (!m.ok()) return m.error();
      rows.push_back(std::move(*m));
    }
    auto rules = read_rules(tv.as_object(), path);
    if (!rules.ok()) return rules.error();
    auto requirements = read_requirements(tv.as_object(), path);
    if (!requirements.ok()) return requirements.error();
    auto table = index_table(op, dtype, std::move(rows), std::move(*rules), *impl, path);
    if (!table.ok()) return table.error();
    (*table)->requirements = std::move(*requirements);
    impl->tables.push_back(std::move(*table));
  }
  return impl;
}

}  // namespace

Snapshot::Snapshot(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Snapshot::Snapshot(Snapshot&&) noexcept = default;
Snapshot& Snapshot::operator=(Snapshot&&) noexcept = default;
Snapshot::~Snapshot() = default;

Expected<Snapshot> Snapshot::parse(std::string_view text, const LoadOptions& options) {
  try {
    auto impl = read(text, options);
    if (!impl.ok()) return impl.error();
    return Snapshot(std::move(*impl));
  } catch (const std::exception& e) {  // allocation failure on a huge document
    return Error{ErrorCode::bad_json, std::string("snapshot could not be read: ") + e.what()};
  }
}

Expected<Snapshot> Snapshot::load_file(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorCode::io, "cannot open snapshot '" + path + "'"};
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Error{ErrorCode::io, "cannot read snapshot '" + path + "'"};
  auto snap = parse(buf.str(), options);
  if (!snap.ok()) return Error{snap.error().code, path + ": " + snap.error().message};
  return snap;
}

const std::string& Snapshot::gpu_model() const noexcept { return m_impl->gpu_model; }
const std::string& Snapshot::arch() const noexcept { return m_impl->arch; }
std::int64_t Snapshot::generated_at_ms() const noexcept { return m_impl->generated_at_ms; }
const std::vector<std::string>& Snapshot::commits() const noexcept { return m_impl->commits; }
const std::vector<std::string>& Snapshot::drivers() const noexcept { return m_impl->drivers; }

std::vector<TableInfo> Snapshot::tables() const {
  std::vector<TableInfo> out;
  for (const auto& t : m_impl->tables) out.push_back(t->info);
  return out;
}

const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::io: return "io";
    case ErrorCode::bad_json: return "bad_json";
    case ErrorCode::schema_version: return "schema_version";
    case ErrorCode::missing_field: return "missing_field";
    case ErrorCode::bad_value: return "bad_value";
    case ErrorCode::checksum: return "checksum";
    case ErrorCode::stale: return "stale";
    case ErrorCode::wrong_commit: return "wrong_commit";
    case ErrorCode::wrong_gpu: return "wrong_gpu";
  }
  return "bad_json";
}

}  // namespace kport::dispatch
