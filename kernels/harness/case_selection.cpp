#include "case_selection.h"

#include <algorithm>

#include "kport/kernels/family_def.h"

namespace kport::harness {

using kport::kernels::Instance;

namespace {

// Whether the first key of `text` is one of the declared family's dims.
bool shape_names_dim(const std::string& text, const kport::kernels::FamilyDef& def) {
  const std::string key = text.substr(0, text.find_first_of("=,"));
  for (const auto& d : def.dims)
    if (d.name == key) return true;
  return false;
}

bool has_dtype(const Instance& inst, DType t) {
  return std::find(inst.dtypes.begin(), inst.dtypes.end(), t) != inst.dtypes.end();
}

std::vector<DType> dtypes_for(const Options& o, const Instance& inst) {
  if (o.dtype == "all" || (o.dtype.empty() && o.command == "check")) return inst.dtypes;
  if (o.dtype.empty()) {
    if (has_dtype(inst, DType::bf16)) return {DType::bf16};
    return inst.dtypes.empty() ? std::vector<DType>{} : std::vector<DType>{inst.dtypes.front()};
  }
  const DType t = *parse_dtype(o.dtype);
  return has_dtype(inst, t) ? std::vector<DType>{t} : std::vector<DType>{};
}

}  // namespace

std::optional<HarnessError> select_cases(const Options& o, const std::vector<const Instance*>& all,
                                         std::vector<Case>& out) {
  out.clear();
  if (!o.cases.empty()) {
    // INSTANCE:DTYPE:SHAPE each (the parser checked the two colons), in the order given.
    for (const std::string& text : o.cases) {
      const auto a = text.find(':'), b = text.find(':', a + 1);
      const std::string name = text.substr(0, a), dtype_text = text.substr(a + 1, b - a - 1);
      const Instance* inst = nullptr;
      for (const Instance* i : all)
        if (i->name == name) inst = i;
      if (inst == nullptr)
        return HarnessError{"unknown_instance",
                            "--case '" + text + "': no instance named '" + name + "' in this harness (see `list`)",
                            k_exit_usage};
      const auto dtype = parse_dtype(dtype_text);
      if (!dtype)
        return HarnessError{
            "unknown_dtype",
            "--case '" + text + "': unknown dtype '" + dtype_text + "'; use bf16, fp16, fp32, e4m3 or e5m2",
            k_exit_usage};
      Shape s;
      if (auto err = parse_shape(inst->family, text.substr(b + 1), s, inst->def)) return err;
      out.push_back({inst, *dtype, s});
    }
    return std::nullopt;
  }
  if (!o.all) {
    const Instance* inst = nullptr;
    for (const Instance* i : all)
      if (i->name == o.instance) inst = i;
    if (inst == nullptr) {
      std::string names;
      for (const Instance* i : all) names += (names.empty() ? "" : ", ") + i->name;
      return HarnessError{"unknown_instance",
                          "no instance named '" + o.instance + "' in this harness; built: " +
                              (names.empty() ? std::string("none") : names) + " (see `list`)",
                          k_exit_usage};
    }
    const auto dtype = parse_dtype(o.dtype);
    if (!dtype)
      return HarnessError{"unknown_dtype", "unknown dtype '" + o.dtype + "'; use bf16, fp16, fp32, e4m3 or e5m2",
                          k_exit_usage};
    Shape s;
    if (auto err = parse_shape(inst->family, o.shape, s, inst->def)) return err;
    out.push_back({inst, *dtype, s});
    return std::nullopt;
  }
  bool shape_parsed_somewhere = o.shape.empty();
  bool instance_found = o.instance.empty();
  bool builtin_selected = false;
  const kport::kernels::FamilyDef* declared_guess = nullptr;  // for a --shape no family parses
  for (const Instance* inst : all) {
    if (!o.instance.empty() && inst->name != o.instance) continue;
    instance_found = true;
    if (!o.filter.empty() && inst->name.find(o.filter) == std::string::npos) continue;
    if (inst->family != Family::declared)
      builtin_selected = true;
    else if (declared_guess == nullptr ||
             (!shape_names_dim(o.shape, *declared_guess) && shape_names_dim(o.shape, *inst->def)))
      declared_guess = inst->def;  // the first declared family, or the first whose dim the shape names
    std::vector<Shape> shapes;
    if (o.shape.empty()) {
      shapes = o.command == "bench" ? bench_grid(inst->family, inst->def) : check_grid(inst->family, inst->def);
    } else {
      Shape s;
      if (parse_shape(inst->family, o.shape, s, inst->def)) continue;  // not this family's shape
      shapes.push_back(s);
      shape_parsed_somewhere = true;
    }
    for (DType t : dtypes_for(o, *inst))
      for (const Shape& s : shapes) out.push_back({inst, t, s});
  }
  if (!instance_found)
    return HarnessError{"unknown_instance", "no instance named '" + o.instance + "' in this harness (see `list`)",
                        k_exit_usage};
  if (!shape_parsed_somewhere && declared_guess != nullptr &&
      (!builtin_selected || shape_names_dim(o.shape, *declared_guess))) {
    // Only declared families selected, or the shape names one of their dims: that family's error.
    Shape s;
    if (auto err = parse_shape(Family::declared, o.shape, s, declared_guess)) return err;
  } else if (!shape_parsed_somewhere) {
    Shape s;
    const bool has_g = o.shape.rfind("g=", 0) == 0 || o.shape.find(",g=") != std::string::npos;
    const bool has_scale = o.shape.find("scale=") != std::string::npos;
    Family guess = has_g && has_scale                        ? Family::grouped_gemm_fp8
                   : has_scale                               ? Family::gemm_fp8
                   : has_g                                   ? Family::grouped_gemm
                   : o.shape.find("m=") != std::string::npos ? Family::gemm
                   : o.shape.find("l=") != std::string::npos ? Family::attention
                                                             : Family::rmsnorm;
    if (auto err = parse_shape(guess, o.shape, s)) return err;
  }
  if (out.empty())
    return HarnessError{"no_cases",
                        "nothing to run: no instance in this harness matches" +
                            (o.filter.empty() ? std::string() : " --filter '" + o.filter + "'") +
                            (o.dtype.empty() ? std::string() : " with --dtype " + o.dtype) + " (see `list`)",
                        k_exit_usage};
  return std::nullopt;
}

}  // namespace kport::harness
