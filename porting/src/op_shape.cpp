#include "kport/porting/op_shape.h"

#include <algorithm>

namespace kport::porting {
namespace {

bool identifier(std::string_view s) {
  if (s.empty() || s.size() > 64 || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string key_list(const OpFamily& f) {
  std::string out;
  for (const auto& d : f.dims) out += (out.empty() ? "" : ",") + d.name;
  return out;
}

std::string range_text(const OpDim& d) {
  if (d.max == d.min + 1) return std::to_string(d.min) + " or " + std::to_string(d.max);
  return std::to_string(d.min) + " .. " + (d.max == k_max_dim ? std::string("2^30") : std::to_string(d.max));
}

// The default of `f`'s dimension `name`, -1 when it has none.
std::int64_t default_of(const OpFamily& f, std::string_view name) {
  for (const auto& d : f.dims)
    if (d.name == name) return d.default_value.value_or(-1);
  return -1;
}

std::optional<double> work_at(const std::string& text, const OpFamily& f, const Shape& s, std::string_view dtype) {
  if (text.empty()) return std::nullopt;
  auto expr = WorkExpr::parse(text, f.dim_names());
  if (!expr.ok()) return std::nullopt;
  return expr->eval([&](std::string_view name) -> std::optional<double> {
    if (name == k_bytes_per_elem) {
      const int b = dtype_bytes(dtype);
      return b > 0 ? std::optional<double>(b) : std::nullopt;
    }
    std::int64_t v = s.get(name);
    if (v < 0) v = default_of(f, name);
    return v >= 0 ? std::optional<double>(static_cast<double>(v)) : std::nullopt;
  });
}

}  // namespace

const std::vector<DtypeSize>& known_dtypes() {
  static const std::vector<DtypeSize> k{{"bf16", 2}, {"fp16", 2}, {"fp32", 4}, {"fp64", 8},
                                        {"e4m3", 1}, {"e5m2", 1}, {"int8", 1}};
  return k;
}

int dtype_bytes(std::string_view dtype) {
  for (const auto& d : known_dtypes())
    if (d.name == dtype) return d.bytes;
  if (dtype.starts_with("fp8")) return 1;
  return 0;
}

const char* to_string(Bound b) { return b == Bound::memory ? "memory" : "compute"; }

std::optional<Bound> parse_bound(std::string_view text) {
  if (text == "memory") return Bound::memory;
  if (text == "compute") return Bound::compute;
  return std::nullopt;
}

Bound OpFamily::bound() const {
  if (bound_hint) return *bound_hint;
  return flops.empty() && !bytes.empty() ? Bound::memory : Bound::compute;
}

std::vector<std::string> OpFamily::dim_names() const {
  std::vector<std::string> out;
  for (const auto& d : dims) out.push_back(d.name);
  return out;
}

std::optional<double> OpFamily::flops_at(const Shape& s, std::string_view dtype) const {
  return work_at(flops, *this, s, dtype);
}
std::optional<double> OpFamily::bytes_at(const Shape& s, std::string_view dtype) const {
  return work_at(bytes, *this, s, dtype);
}

ShapeRules OpFamily::shape_rules() const {
  std::vector<std::pair<std::string, Shape::DimRule>> out;
  std::vector<ShapeRules::Cap> caps;
  for (const auto& d : dims) {
    if (d.rule != Shape::DimRule{}) out.emplace_back(d.name, d.rule);
    if (!d.full_at.empty()) caps.push_back({d.name, d.full_at});
  }
  return ShapeRules(std::move(out), std::move(caps));
}

std::optional<DimRuleProblem> dim_rule_problem(const Shape::DimRule& r) {
  if (r.exact && (r.weight != 1.0 || !r.alignments.empty()))
    return DimRuleProblem{"exact", "an exact dimension is never near another value: give it no weight or align"};
  if (!(r.weight > 0 && r.weight <= 100)) return DimRuleProblem{"weight", "must be a number above 0 and at most 100"};
  if (r.alignments.size() > 2) return DimRuleProblem{"align", "must list at most 2 alignments"};
  for (std::size_t i = 0; i < r.alignments.size(); ++i) {
    const auto& a = r.alignments[i];
    const std::string at = "align[" + std::to_string(i) + "]";
    if (a.quantum < 2 || a.quantum > k_max_dim)
      return DimRuleProblem{at + ".multiple", "must be an integer in 2 .. 2^30"};
    for (std::size_t j = 0; j < i; ++j)
      if (r.alignments[j].quantum == a.quantum)
        return DimRuleProblem{at + ".multiple", std::to_string(a.quantum) + " is given twice"};
    if (!(a.penalty >= 0 && a.penalty <= 100)) return DimRuleProblem{at + ".penalty", "must be a number in 0 .. 100"};
  }
  return std::nullopt;
}

std::optional<RequirementProblem> requirement_problem(const ShapeRequirement& r, std::span<const std::string> dims) {
  auto declared = [&](const std::string& name) { return std::find(dims.begin(), dims.end(), name) != dims.end(); };
  if (!declared(r.dim)) return RequirementProblem{"dim", "'" + r.dim + "' is not one of the family's dims"};
  if (r.multiple < 2 || r.multiple > k_max_dim)
    return RequirementProblem{"multiple", "must be an integer in 2 .. 2^30"};
  if (r.when.size() > 4) return RequirementProblem{"when", "must name at most 4 dims"};
  for (const auto& [name, value] : r.when) {
    if (!declared(name)) return RequirementProblem{"when." + name, "'" + name + "' is not one of the family's dims"};
    if (name == r.dim) return RequirementProblem{"when." + name, "a requirement of '" + name + "' cannot depend on it"};
    if (value < 0 || value > k_max_dim) return RequirementProblem{"when." + name, "must be an integer in 0 .. 2^30"};
  }
  if (r.why.size() > 200) return RequirementProblem{"why", "must be 200 bytes at most"};
  return std::nullopt;
}

std::optional<std::string> unmet_requirement(const OpFamily& f, const Shape& s) {
  for (const auto& r : f.requirements) {
    const auto value_of = [&](std::string_view dim) {
      const std::int64_t v = s.get(dim);
      return v >= 0 ? v : default_of(f, dim);
    };
    if (!rules_out(r, value_of)) continue;
    std::string when;
    for (const auto& [name, value] : r.when)
      when += (when.empty() ? " when " : ",") + name + "=" + std::to_string(value);
    return r.dim + "=" + std::to_string(value_of(r.dim)) + " is not a multiple of " + std::to_string(r.multiple) +
           ", which " + f.name + " needs" + when + (r.why.empty() ? std::string() : ": " + r.why);
  }
  return std::nullopt;
}

Status check_family(const OpFamily& f) {
  auto bad = [](const std::string& what) { return make_error(Errc::invalid_argument, what); };
  if (!identifier(f.name))
    return bad("family name '" + f.name + "' must be a name of letters, digits and '_' (64 at most)");
  const std::string of = " of family " + f.name;
  if (f.dims.empty() || f.dims.size() > 16) return bad("field 'dims'" + of + " must list 1 to 16 dimensions");
  for (std::size_t i = 0; i < f.dims.size(); ++i) {
    const OpDim& d = f.dims[i];
    const std::string at = "field 'dims[" + std::to_string(i) + "]'" + of;
    if (!identifier(d.name)) return bad(at + ": '" + d.name + "' must be a name of letters, digits and '_'");
    if (d.name == k_bytes_per_elem) return bad(at + ": '" + d.name + "' is the dtype's element size, not a dimension");
    for (std::size_t j = 0; j < i; ++j)
      if (f.dims[j].name == d.name) return bad(at + ": dimension '" + d.name + "' is listed twice");
    if (d.min < 0 || d.min > d.max || d.max > k_max_dim)
      return bad(at + ": the range " + std::to_string(d.min) + " .. " + std::to_string(d.max) + " of '" + d.name +
                 "' must be within 0 .. 2^30 and not empty");
    if (d.default_value && (*d.default_value < d.min || *d.default_value > d.max))
      return bad(at + ": the default " + std::to_string(*d.default_value) + " of '" + d.name +
                 "' is out of its range (" + range_text(d) + ")");
    if (d.omit_default && !d.default_value)
      return bad(at + ": '" + d.name + "' is left out at its default (omit_default) but has no default");
    if (!d.full_at.empty()) {
      if (!d.default_value) return bad(at + ": '" + d.name + "' has a full_at but no default");
      const bool other = d.full_at != d.name &&
                         std::any_of(f.dims.begin(), f.dims.end(), [&](const OpDim& x) { return x.name == d.full_at; });
      if (!other)
        return bad(at + ": full_at '" + d.full_at + "' of '" + d.name + "' must name another dimension of " + f.name);
      for (std::size_t j = 0; j < i; ++j)
        if (f.dims[j].full_at == d.full_at)
          return bad(at + ": '" + d.full_at + "' is already the full_at of '" + f.dims[j].name +
                     "'; a dimension is bounded by one other at most");
    }
    if (auto p = dim_rule_problem(d.rule))
      return bad("field 'dims[" + std::to_string(i) + "]." + p->key + "'" + of + ": " + p->what);
  }
  if (f.dtypes.empty()) return bad("field 'dtypes'" + of + " must not be empty");
  for (std::size_t i = 0; i < f.dtypes.size(); ++i) {
    if (dtype_bytes(f.dtypes[i]) == 0 || f.dtypes[i].starts_with("fp8")) {
      std::string allowed;
      for (const auto& d : known_dtypes()) allowed += (allowed.empty() ? "" : ", ") + std::string(d.name);
      return bad("field 'dtypes[" + std::to_string(i) + "]'" + of + ": '" + f.dtypes[i] +
                 "' is not a dtype kport knows (" + allowed + ")");
    }
    for (std::size_t j = 0; j < i; ++j)
      if (f.dtypes[j] == f.dtypes[i])
        return bad("field 'dtypes[" + std::to_string(i) + "]'" + of + ": '" + f.dtypes[i] + "' is listed twice");
  }
  for (auto [key, text] : {std::pair{"flops", &f.flops}, std::pair{"bytes", &f.bytes}})
    if (!text->empty())
      if (auto e = WorkExpr::parse(*text, f.dim_names()); !e.ok())
        return bad("field '" + std::string(key) + "'" + of + ": '" + *text + "' " + e.error().message);
  if (auto p = geometry_problem(f.geometry, f.dim_names()))
    return bad("field 'geometry." + p->key + "'" + of + ": " + p->what);
  if (f.requirements.size() > 8) return bad("field 'requires'" + of + " must list at most 8 requirements");
  const std::vector<std::string> names = f.dim_names();
  for (std::size_t i = 0; i < f.requirements.size(); ++i)
    if (auto p = requirement_problem(f.requirements[i], names))
      return bad("field 'requires[" + std::to_string(i) + "]." + p->key + "'" + of + ": " + p->what);
  if (!f.example.empty())
    if (auto s = op_shape(f, f.example); !s.ok())
      return bad("field 'example'" + of + ": '" + f.example + "': " + s.error().message);
  return {};
}

FamilySet::FamilySet(std::vector<OpFamily> families) {
  for (auto& f : families) {
    auto same = std::find_if(m_families.begin(), m_families.end(), [&](const OpFamily& g) { return g.name == f.name; });
    if (same != m_families.end())
      *same = std::move(f);
    else
      m_families.push_back(std::move(f));
  }
}

const OpFamily* FamilySet::find(std::string_view name) const {
  for (const auto& f : m_families)
    if (f.name == name) return &f;
  return nullptr;
}

std::string FamilySet::names() const {
  std::string out;
  for (const auto& f : m_families) out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

Result<const OpFamily*> FamilySet::family(std::string_view name) const {
  if (const OpFamily* f = find(name)) return f;
  if (m_families.empty())
    return make_error(Errc::invalid_argument, "op '" + std::string(name) + "' is not known: no op family is known yet");
  return make_error(Errc::invalid_argument, "op '" + std::string(name) + "' is not one of " + names());
}

Result<OpShape> op_shape(const OpFamily& family, std::string_view text) {
  auto parsed = Shape::parse(text);
  if (!parsed.ok()) return std::move(parsed).error();
  // Written only for an error: every unmeasured /api/v1/best question comes here.
  const auto expected = [&] { return " (" + family.name + " shapes are " + key_list(family) + ")"; };
  for (const auto& dim : parsed->dims()) {
    const std::string& key = dim.first;  // not a structured binding: the lambda below captures it
    const std::int64_t value = dim.second;
    auto d = std::find_if(family.dims.begin(), family.dims.end(), [&](const OpDim& x) { return x.name == key; });
    if (d == family.dims.end())
      return make_error(Errc::invalid_argument,
                        "shape key '" + key + "' is not a dimension of " + family.name + expected());
    if (value < d->min || value > d->max)
      return make_error(Errc::invalid_argument, "shape value " + std::to_string(value) + " of '" + key +
                                                    "' is out of range (" + range_text(*d) + ")");
  }
  OpShape out;
  bool defaulted = false;  // the text's keys differ from the parsed shape's
  for (const auto& d : family.dims) {
    std::int64_t v = parsed->get(d.name);
    const bool given = v >= 0;
    if (!given && d.default_value) v = *d.default_value;
    if (v < 0) return make_error(Errc::invalid_argument, "shape has no '" + d.name + "'" + expected());
    if (given && !d.full_at.empty() && v != *d.default_value) {  // at its full value the default's case; above, none
      std::int64_t full = parsed->get(d.full_at);
      if (full < 0) {
        auto o =
            std::find_if(family.dims.begin(), family.dims.end(), [&](const OpDim& x) { return x.name == d.full_at; });
        if (o != family.dims.end() && o->default_value) full = *o->default_value;
      }
      if (full >= 0 && v > full)
        return make_error(Errc::invalid_argument, "shape value " + std::to_string(v) + " of '" + d.name +
                                                      "' is above " + d.full_at + "=" + std::to_string(full) +
                                                      ", its largest (" + d.name + "=" + d.full_at +
                                                      " is the same case as leaving " + d.name + " out)");
      if (full >= 0 && v == full) {
        v = *d.default_value;
        defaulted = true;  // the text changes: the parsed shape is not the whole shape
      }
    }
    if (d.omit_default && v == *d.default_value) {  // left out of the text, given or not
      defaulted = defaulted || given;
      continue;
    }
    defaulted = defaulted || !given;
    if (!out.text.empty()) out.text += ',';
    out.text += d.name;
    out.text += '=';
    out.text += std::to_string(v);
  }
  // Every key was checked to be the family's: with none defaulted, the parsed shape is
  // the whole shape already (every unmeasured /api/v1/best question comes here).
  if (!defaulted) {
    out.shape = std::move(*parsed);
    return out;
  }
  auto full = Shape::parse(out.text);
  if (!full.ok()) return std::move(full).error();
  out.shape = std::move(*full);
  return out;
}

Result<OpShape> op_shape(const FamilySet& known, std::string_view family, std::string_view text) {
  auto f = known.family(family);
  if (!f.ok()) return std::move(f).error();
  return op_shape(**f, text);
}

}  // namespace kport::porting
