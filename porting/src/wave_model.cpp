#include "kport/porting/wave_model.h"

#include <algorithm>
#include <cmath>

#include "kport/porting/op_shape.h"

namespace kport::porting {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool named(const std::vector<Geometry::Split>& splits, std::string_view dim) {
  for (const auto& s : splits)
    if (s.dim == dim) return true;
  return false;
}

// Whether `key` multiplies the blocks of wave_work(): neither tiled nor stepped, not a
// mode that must match exactly, not a bound on another dimension's extent.
bool multiplies(const Geometry& g, const ShapeRules& rules, std::string_view key) {
  return !named(g.tiles, key) && !named(g.steps, key) && !rules.exact(key) && !rules.bounds_another(key);
}

bool config_key(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

std::optional<GeometryProblem> geometry_problem(const GeometryKeys& keys, const std::vector<std::string>& dims) {
  std::string names;
  for (const auto& d : dims) names += (names.empty() ? "" : ", ") + d;
  const DimKeys* split = nullptr;
  for (std::size_t i = 0; i < keys.dims.size(); ++i) {
    const DimKeys& d = keys.dims[i];
    if (std::find(dims.begin(), dims.end(), d.dim) == dims.end())
      return GeometryProblem{d.dim, "'" + d.dim + "' is not a dimension of the family (" + names + ")"};
    for (std::size_t j = 0; j < i; ++j)
      if (keys.dims[j].dim == d.dim) return GeometryProblem{d.dim, "dimension '" + d.dim + "' is declared twice"};
    bool any = false;
    for (const auto& [role, slot] : k_dim_roles) {
      const std::vector<std::string>& list = d.*slot;
      any = any || !list.empty();
      const std::string at = d.dim + "." + std::string(role);
      if (list.size() > 8) return GeometryProblem{at, "names more than 8 config keys"};
      for (const auto& k : list)
        if (!config_key(k))
          return GeometryProblem{at, "'" + k + "' is not a config key (letters, digits and '_', 64 at most)"};
    }
    if (!any) return GeometryProblem{d.dim, "declares no config key: give one of " + dim_role_names()};
    if (!d.split.empty()) {
      if (d.step.empty())
        return GeometryProblem{d.dim + ".split",
                               "a split shares the steps along '" + d.dim + "' among blocks: declare its 'step' too"};
      if (split) return GeometryProblem{d.dim + ".split", "only one dimension may be split ('" + split->dim + "' is)"};
      split = &d;
    }
  }
  return std::nullopt;
}

std::optional<Geometry> geometry_from_config(
    const GeometryKeys& keys, const std::function<std::optional<std::int64_t>(std::string_view)>& config) {
  // The first alternative the config has, when it is > 0.
  auto read = [&](const std::vector<std::string>& alternatives) -> std::optional<std::int64_t> {
    for (const auto& k : alternatives)
      if (auto v = config(k)) return *v > 0 ? v : std::nullopt;
    return std::nullopt;
  };
  Geometry g;
  bool complete = true;  // every declared tile and step has its value
  for (const auto& d : keys.dims) {
    if (!d.tile.empty()) {
      if (auto v = read(d.tile))
        g.tiles.push_back({d.dim, *v});
      else
        complete = false;
    }
    if (!d.step.empty()) {
      if (auto v = read(d.step))
        g.steps.push_back({d.dim, *v});
      else
        complete = false;
    }
    for (const auto& k : d.split)  // the first alternative the config has; 0 fills the GPU
      if (auto v = config(k)) {
        if (*v >= 0) g.split = *v;
        break;
      }
    auto max_bytes = read(d.max_bytes), align = read(d.align_bytes);
    if (max_bytes || align) g.paths.push_back({d.dim, max_bytes.value_or(0), align.value_or(0)});
    if (auto v = read(d.max)) g.limits.push_back({d.dim, *v});
    auto run_min = read(d.run_min_bytes), run_max = read(d.run_max_bytes), run_align = read(d.run_align_bytes);
    if (run_min || run_max || run_align)
      g.byte_limits.push_back({d.dim, run_max.value_or(0), run_align.value_or(0), run_min.value_or(0)});
    if (auto v = read(d.run_multiple); v && *v > 1) g.multiples.push_back({d.dim, *v});
  }
  // Part of a tiling is no tiling: waves from a guessed tile would rank by the guess.
  if (!complete || g.tiles.empty()) {
    g.tiles.clear();
    g.steps.clear();
    g.split = 1;
  }
  if (g.tiles.empty() && g.paths.empty() && g.limits.empty() && g.byte_limits.empty() && g.multiples.empty())
    return std::nullopt;
  return g;
}

int element_bytes(std::string_view dtype) { return dtype_bytes(dtype); }

bool within(const Geometry::PathBound& b, std::int64_t extent, int element_bytes) {
  if (element_bytes <= 0 || extent <= 0) return true;
  const std::int64_t bytes = extent * element_bytes;
  if (b.max_bytes > 0 && bytes > b.max_bytes) return false;
  if (b.min_bytes > 0 && bytes < b.min_bytes) return false;
  return b.align_bytes <= 0 || bytes % b.align_bytes == 0;
}

bool runs_within(const Geometry& g, const Shape& s, int element_bytes) {
  for (const auto& l : g.limits)
    if (!within_limit(s.get(l.dim), l.size)) return false;
  for (const auto& l : g.multiples)
    if (!within_multiple(s.get(l.dim), l.size)) return false;
  for (const auto& b : g.byte_limits)
    if (!within(b, s.get(b.dim), element_bytes)) return false;
  return true;
}

std::string limit_reason(const Geometry& g, const Shape& s, int element_bytes) {
  for (const auto& l : g.limits)
    if (!within_limit(s.get(l.dim), l.size))
      return "runs " + l.dim + " up to " + std::to_string(l.size) + ", not " + std::to_string(s.get(l.dim));
  for (const auto& l : g.multiples)
    if (!within_multiple(s.get(l.dim), l.size))
      return "runs " + l.dim + " in multiples of " + std::to_string(l.size) + ", not " + std::to_string(s.get(l.dim));
  for (const auto& b : g.byte_limits) {
    const std::int64_t extent = s.get(b.dim);
    if (within(b, extent, element_bytes)) continue;
    std::string why = "runs " + b.dim;
    if (b.min_bytes > 0 && b.max_bytes > 0)
      why += " of " + std::to_string(b.min_bytes) + " to " + std::to_string(b.max_bytes) + " bytes";
    else if (b.min_bytes > 0)
      why += " of " + std::to_string(b.min_bytes) + " bytes or more";
    else if (b.max_bytes > 0)
      why += " of up to " + std::to_string(b.max_bytes) + " bytes";
    if (b.align_bytes > 0)
      why += " in multiples of " + std::to_string(b.align_bytes) + (b.min_bytes > 0 || b.max_bytes > 0 ? "" : " bytes");
    why += ", not " + std::to_string(extent) + " (" + std::to_string(extent * element_bytes) + " bytes)";
    return why;
  }
  return "";
}

std::string dim_role_names() {
  std::string out;
  for (const auto& [role, slot] : k_dim_roles) (out += out.empty() ? "" : ", ") += role;
  return out;
}

bool own_path(const Geometry& g, const Shape& s, int element_bytes) {
  for (const auto& b : g.paths)
    if (!within(b, s.get(b.dim), element_bytes)) return false;
  return true;
}

std::vector<char> own_paths(std::span<const InstanceGeometry> all, const Shape& s, int element_bytes) {
  std::vector<char> own;
  for (const auto& g : all)
    if (!g.geometry.paths.empty()) own.push_back(own_path(g.geometry, s, element_bytes) ? 1 : 0);
  return own;
}

int path_changes(const std::vector<char>& a, const std::vector<char>& b) {
  int n = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) n += a[i] != b[i];
  return n;
}

double wave_work(std::span<const Extent> tiled, std::span<const Extent> stepped, std::span<const std::int64_t> others,
                 int sm_count, std::int64_t split) {
  if (sm_count <= 0 || split < 0) return 0;
  double blocks = 1, steps = 1;
  for (const auto& [v, size] : tiled) {
    if (v <= 0) return 0;
    blocks *= static_cast<double>(ceil_div(v, size));
  }
  for (const auto& [v, size] : stepped) {
    if (v <= 0) return 0;
    steps *= static_cast<double>(ceil_div(v, size));
  }
  for (std::int64_t v : others) {
    if (v <= 0) return 0;
    blocks *= static_cast<double>(v);
  }
  if (split == 0) return std::ceil(blocks * steps / sm_count);  // every SM an even share
  if (split > 1) {                                              // each tile's steps shared among `split` blocks
    blocks *= static_cast<double>(split);
    steps = std::ceil(steps / static_cast<double>(split));
  }
  return std::ceil(blocks / sm_count) * steps;
}

double wave_work(const Geometry& g, const Shape& s, int sm_count, const ShapeRules& rules) {
  // On the stack: /api/v1/best moves every figure of an answer from another shape by
  // this, twice per figure, per request. Geometries and shapes this large are not made;
  // they still get the same answer, from the heap.
  constexpr std::size_t k_small = 16;
  if (g.tiles.size() > k_small || g.steps.size() > k_small || s.dims().size() > k_small) {
    std::vector<Extent> tiled, stepped;
    std::vector<std::int64_t> others;
    for (const auto& t : g.tiles) tiled.push_back({rules.extent(s, t.dim), t.size});  // -1 when absent
    for (const auto& t : g.steps) stepped.push_back({rules.extent(s, t.dim), t.size});
    for (const auto& [key, v] : s.dims())
      if (multiplies(g, rules, key)) others.push_back(rules.extent(s, key));
    return wave_work(tiled, stepped, others, sm_count, g.split);
  }
  Extent tiled[k_small], stepped[k_small];
  std::int64_t others[k_small];
  std::size_t n_tiled = 0, n_stepped = 0, n_others = 0;
  for (const auto& t : g.tiles) tiled[n_tiled++] = {rules.extent(s, t.dim), t.size};  // -1 when absent
  for (const auto& t : g.steps) stepped[n_stepped++] = {rules.extent(s, t.dim), t.size};
  for (const auto& [key, v] : s.dims())
    if (multiplies(g, rules, key)) others[n_others++] = rules.extent(s, key);
  return wave_work(std::span<const Extent>(tiled, n_tiled), std::span<const Extent>(stepped, n_stepped),
                   std::span<const std::int64_t>(others, n_others), sm_count, g.split);
}

double problem_size(const Shape& s, const ShapeRules& rules) {
  double size = 1;
  for (const auto& [key, v] : s.dims())
    if (!rules.exact(key) && !rules.bounds_another(key)) size *= static_cast<double>(rules.extent(s, key));
  return size;
}

double estimate_work(const Geometry* g, int sm_count, const Shape& s, const ShapeRules& rules) {
  return g && has_waves(*g) && sm_count > 0 ? wave_work(*g, s, sm_count, rules) : problem_size(s, rules);
}

double estimate_at(const Geometry* g, int sm_count, const Shape& from, double from_us, const Shape& to,
                   const ShapeRules& rules) {
  return scale_by_work(from_us, estimate_work(g, sm_count, from, rules), estimate_work(g, sm_count, to, rules));
}

const Geometry* find_geometry(std::span<const InstanceGeometry> all, std::string_view instance) {
  for (const auto& g : all)
    if (g.instance == instance) return &g.geometry;
  return nullptr;
}

}  // namespace kport::porting
