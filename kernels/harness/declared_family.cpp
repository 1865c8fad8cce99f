#include "declared_family.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "shapes.h"
#include "tolerance.h"

namespace kport::harness {

using kport::kernels::DType;
using kport::kernels::FamilyDef;
using kport::kernels::FamilyOverride;
using kport::kernels::Instance;
using kport::kernels::TensorRole;
using kport::kernels::TensorType;

namespace {

// As kport's families: a tensor must stay indexable and allocatable.
constexpr double k_max_elements = 4e10;

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

std::string example_shape(const FamilyDef& def) {
  if (!def.bench_grid.empty()) return def.bench_grid.front();
  std::string text;
  for (const auto& d : def.dims) text += (text.empty() ? "" : ",") + d.name + "=" + std::to_string(d.min);
  return text;
}

HarnessError bad_shape(const FamilyDef& def, const std::string& text, const std::string& why) {
  return {"bad_shape",
          "shape '" + text + "' for " + def.name + ": " + why + " (expected e.g. " + example_shape(def) + ")",
          k_exit_usage};
}

HarnessError bad_family(const std::string& family, const std::string& why) {
  return {"bad_family",
          "family '" + family + "' is declared wrong in this harness: " + why +
              " (fix its FamilyDef or FamilyOverride and rebuild; kport/kernels/family_def.h)",
          k_exit_cuda};
}

bool builtin_family(const std::string& name) {
  for (auto f : {kport::kernels::Family::gemm, kport::kernels::Family::attention, kport::kernels::Family::rmsnorm,
                 kport::kernels::Family::softmax, kport::kernels::Family::gemm_fp8,
                 kport::kernels::Family::grouped_gemm, kport::kernels::Family::grouped_gemm_fp8})
    if (name == kport::kernels::family_name(f)) return true;
  return false;
}

// The def's own structure, before its grids can be parsed.
std::string def_problem(const FamilyDef& def) {
  if (def.dims.empty()) return "it has no dims";
  if (def.dims.size() > std::size_t(kport::kernels::k_max_family_dims))
    return "it has " + std::to_string(def.dims.size()) + " dims, more than " +
           std::to_string(kport::kernels::k_max_family_dims);
  std::set<std::string> dims, tensors;
  for (const auto& d : def.dims) {
    if (!is_identifier(d.name)) return "dim '" + d.name + "' is not a name of letters, digits and '_'";
    if (!dims.insert(d.name).second) return "dim '" + d.name + "' is declared twice";
    if (d.min < 0 || d.max < d.min || d.max > (1LL << 30))
      return "dim '" + d.name + "' has the range [" + std::to_string(d.min) + ", " + std::to_string(d.max) +
             "]; it must lie within [0, 2^30]";
    if (d.default_value && (*d.default_value < d.min || *d.default_value > d.max))
      return "dim '" + d.name + "' has a default outside its range";
  }
  if (def.dtypes.empty()) return "it lists no dtypes";
  if (def.tensors.size() > std::size_t(kport::kernels::k_max_family_tensors))
    return "it has " + std::to_string(def.tensors.size()) + " tensors, more than " +
           std::to_string(kport::kernels::k_max_family_tensors);
  bool output = false;
  for (const auto& t : def.tensors) {
    if (!is_identifier(t.name)) return "tensor '" + t.name + "' is not a name of letters, digits and '_'";
    if (!tensors.insert(t.name).second) return "tensor '" + t.name + "' is declared twice";
    for (const auto& e : t.extent)
      if (!dims.count(e)) return "tensor '" + t.name + "' spans '" + e + "', which is not one of its dims";
    if (t.role == TensorRole::input && !(t.lo < t.hi)) return "input '" + t.name + "' has an empty value range";
    output = output || t.role == TensorRole::output;
  }
  if (!output) return "it has no output tensor";
  if (def.reference == nullptr) return "it has no reference";
  for (const auto& t : def.tolerances)
    if (!(t.normwise > 0) || !(t.max_abs_rel > 0))
      return std::string("its ") + kport::kernels::dtype_name(t.dtype) + " tolerance is not positive";
  if (def.bench_grid.empty()) return "its bench grid is empty";
  return "";
}

std::string grid_problem(kport::kernels::Family f, const FamilyDef* def, const std::vector<std::string>& grid,
                         const char* which) {
  for (const std::string& text : grid) {
    Shape s;
    if (auto err = parse_shape(f, text, s, def)) return std::string("its ") + which + " grid: " + err->message;
  }
  return "";
}

}  // namespace

int dim_index(const FamilyDef& def, std::string_view name) {
  for (std::size_t i = 0; i < def.dims.size(); ++i)
    if (def.dims[i].name == name) return static_cast<int>(i);
  return -1;
}

double tensor_elements(const FamilyDef& def, std::size_t i, const std::vector<long long>& dims) {
  double n = 1;
  for (const auto& e : def.tensors[i].extent) {
    const int d = dim_index(def, e);
    n *= d >= 0 && std::size_t(d) < dims.size() ? double(dims[std::size_t(d)]) : 0.0;
  }
  return n;
}

DType tensor_dtype(const FamilyDef& def, std::size_t i, DType dtype) {
  return def.tensors[i].type == TensorType::f32 ? DType::f32 : dtype;
}

std::optional<HarnessError> parse_declared_shape(const FamilyDef& def, const std::string& text, Shape& out) {
  std::map<std::string, long long> values;
  const auto unknown = [&](const std::string& key) {
    if (dim_index(def, key) >= 0) return std::string();
    std::string keys;
    for (const auto& dim : def.dims) keys += (keys.empty() ? "" : ", ") + dim.name;
    return "unknown key '" + key + "' (the family's dims are " + keys + ")";
  };
  const auto out_of_range = [&](const std::string& key, long long v) {
    const auto& dim = def.dims[std::size_t(dim_index(def, key))];
    return v < dim.min || v > dim.max
               ? key + " must be between " + std::to_string(dim.min) + " and " + std::to_string(dim.max)
               : std::string();
  };
  if (auto why = read_shape_values(text, unknown, out_of_range, values)) return bad_shape(def, text, *why);
  Shape s;
  s.family = kport::kernels::Family::declared;
  s.def = &def;
  for (const auto& dim : def.dims) {
    const auto it = values.find(dim.name);
    if (it != values.end())
      s.dims.push_back(it->second);
    else if (dim.default_value)
      s.dims.push_back(*dim.default_value);
    else
      return bad_shape(def, text, "missing key '" + dim.name + "'");
  }
  for (std::size_t i = 0; i < def.tensors.size(); ++i)
    if (tensor_elements(def, i, s.dims) > k_max_elements)
      return bad_shape(def, text, "problem too large (tensor '" + def.tensors[i].name + "')");
  out = s;
  return std::nullopt;
}

const FamilyOverride* find_override(std::string_view family) {
  for (const FamilyOverride* o : kport::kernels::family_overrides())
    if (o->family == family) return o;
  return nullptr;
}

std::optional<HarnessError> check_declared_families(const std::vector<const Instance*>& instances) {
  std::set<std::string> names;
  for (const FamilyDef* def : kport::kernels::family_registry()) {
    if (!is_identifier(def->name)) return bad_family(def->name, "its name is not letters, digits and '_'");
    if (builtin_family(def->name))
      return bad_family(def->name, "the name is one of kport's own families; pick a name of your own");
    if (!names.insert(def->name).second) return bad_family(def->name, "two FamilyDefs have this name");
    if (const std::string why = def_problem(*def); !why.empty()) return bad_family(def->name, why);
    for (const auto* grid : {&def->bench_grid, &def->check_grid}) {
      const char* which = grid == &def->bench_grid ? "bench" : "check";
      if (auto why = grid_problem(kport::kernels::Family::declared, def, *grid, which); !why.empty())
        return bad_family(def->name, why);
    }
  }
  std::set<std::string> overridden;
  for (const FamilyOverride* o : kport::kernels::family_overrides()) {
    const FamilyDef* def = kport::kernels::find_family(o->family);
    const auto builtin = parse_family(o->family);
    if (def == nullptr && !builtin)
      return bad_family(o->family, "a FamilyOverride names it, but it is neither kport's nor a registered family");
    if (!overridden.insert(o->family).second) return bad_family(o->family, "it has two FamilyOverrides");
    for (const auto& t : o->tolerances)
      if (!(t.normwise > 0) || !(t.max_abs_rel > 0))
        return bad_family(o->family, std::string("its override's ") + kport::kernels::dtype_name(t.dtype) +
                                         " tolerance is not positive");
    const auto f = def != nullptr ? kport::kernels::Family::declared : *builtin;
    for (const auto* grid : {&o->bench_grid, &o->check_grid}) {
      const char* which = grid == &o->bench_grid ? "overridden bench" : "overridden check";
      if (auto why = grid_problem(f, def, *grid, which); !why.empty()) return bad_family(o->family, why);
    }
  }
  for (const Instance* inst : instances) {
    if (inst->family != kport::kernels::Family::declared) continue;
    if (inst->def == nullptr)
      return bad_family(inst->name, "instance '" + inst->name + "' is of Family::declared but names no FamilyDef");
    const auto& reg = kport::kernels::family_registry();
    if (std::find(reg.begin(), reg.end(), inst->def) == reg.end())
      return bad_family(inst->def->name, "instance '" + inst->name +
                                             "' names a FamilyDef that is not registered (KPORT_REGISTER_FAMILY)");
    for (DType t : inst->dtypes)
      if (std::find(inst->def->dtypes.begin(), inst->def->dtypes.end(), t) == inst->def->dtypes.end())
        return bad_family(inst->def->name, "instance '" + inst->name + "' runs " + kport::kernels::dtype_name(t) +
                                               ", which is not among the family's dtypes");
  }
  return std::nullopt;
}

Json family_json(const FamilyDef& def) {
  Json dims = Json::array();
  for (const auto& d : def.dims) {
    Json j = {{"name", d.name}, {"min", d.min}, {"max", d.max}};
    if (d.default_value) j["default"] = *d.default_value;
    dims.push_back(j);
  }
  Json dtypes = Json::array(), tolerances = Json::object();
  for (DType t : def.dtypes) {
    dtypes.push_back(kport::kernels::dtype_name(t));
    const Tolerance tol = tolerance_for(kport::kernels::Family::declared, t, &def);
    tolerances[kport::kernels::dtype_name(t)] = {{"normwise", tol.normwise}, {"max_abs_rel", tol.max_abs_rel}};
  }
  Json tensors = Json::array();
  for (const auto& t : def.tensors) {
    Json j = {{"name", t.name},
              {"role", t.role == TensorRole::input ? "input" : "output"},
              {"extent", t.extent},
              {"dtype", t.type == TensorType::f32 ? "fp32" : "case"}};
    if (t.role == TensorRole::input) j["range"] = {t.lo, t.hi};
    tensors.push_back(j);
  }
  const auto grid_json = [&](const std::vector<Shape>& grid) {
    Json g = Json::array();
    for (const Shape& s : grid) g.push_back(shape_string(s));
    return g;
  };
  return {{"name", def.name},
          {"description", def.description},
          {"dims", dims},
          {"dtypes", dtypes},
          {"tensors", tensors},
          {"counts_flops", def.flops != nullptr},
          {"tolerances", tolerances},
          {"check_grid", grid_json(check_grid(kport::kernels::Family::declared, &def))},
          {"bench_grid", grid_json(bench_grid(kport::kernels::Family::declared, &def))}};
}

}  // namespace kport::harness
