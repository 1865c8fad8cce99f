#include "kport/porting/shape.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

namespace kport::porting {
namespace {

bool valid_key(std::string_view key) {
  if (key.empty() || key.size() > 16) return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

}  // namespace

Result<Shape> Shape::parse(std::string_view text) {
  Shape shape;
  if (text.empty())
    return make_error(Errc::invalid_argument, "shape is empty; expected key=value,... such as m=4096,n=4096,k=4096");
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string_view part = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    std::size_t eq = part.find('=');
    if (eq == std::string_view::npos)
      return make_error(Errc::invalid_argument, "shape part '" + std::string(part) + "' is not key=value");
    std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    if (!valid_key(key))
      return make_error(Errc::invalid_argument, "shape key '" + std::string(key) + "' must be lowercase letters");
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 0 || value.empty())
      return make_error(Errc::invalid_argument, "shape value '" + std::string(value) + "' of '" + std::string(key) +
                                                    "' is not a non-negative integer");
    for (const auto& d : shape.m_dims)
      if (d.first == key)
        return make_error(Errc::invalid_argument, "shape key '" + std::string(key) + "' appears twice");
    shape.m_dims.emplace_back(std::string(key), v);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  std::sort(shape.m_dims.begin(), shape.m_dims.end());
  return shape;
}

std::int64_t Shape::get(std::string_view key) const {
  for (const auto& d : m_dims)
    if (d.first == key) return d.second;
  return -1;
}

std::string Shape::canonical() const {
  // Every answer names shapes by this text, several times a question: one allocation.
  std::size_t n = 0;
  for (const auto& [k, v] : m_dims) n += k.size() + 22;
  std::string out;
  out.reserve(n);
  char digits[24];
  for (const auto& [k, v] : m_dims) {
    if (!out.empty()) out.push_back(',');
    out += k;
    out.push_back('=');
    out.append(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
  }
  return out;
}

double Shape::distance(const Shape& other, const ShapeRules& rules) const {
  constexpr double k_inf = std::numeric_limits<double>::infinity();
  if (m_dims.size() != other.m_dims.size()) return k_inf;
  double total = 0;
  for (std::size_t i = 0; i < m_dims.size(); ++i) {
    const auto& [ka, va] = m_dims[i];
    const auto& [kb, vb] = other.m_dims[i];
    if (ka != kb) return k_inf;
    double term = rules.dim_distance(ka, va, vb);
    if (term == k_inf) return k_inf;
    total += term;
  }
  return total;
}

// Which dimensions must match, and how much each decides which kernel is fastest, is the
// family's to say: only its declaration knows that attention's `d` picks the code path
// or that a row-wise kernel's `cols` sets its vector width. kport's own families declare
// theirs in kernels/kport.json (docs/MANIFEST.md says why each).
double Shape::dim_distance(const DimRule& rule, std::int64_t a, std::int64_t b) {
  constexpr double k_inf = std::numeric_limits<double>::infinity();
  if (a == b) return 0;
  if (rule.exact) return k_inf;
  // A zero-sized dimension only matches itself.
  if (a == 0 || b == 0) return k_inf;
  double term = rule.weight * std::abs(std::log(static_cast<double>(a) / static_cast<double>(b)));
  for (const auto& al : rule.alignments)
    if ((a % al.quantum == 0) != (b % al.quantum == 0)) term += al.penalty;
  return term;
}

ShapeRules::ShapeRules(std::vector<std::pair<std::string, Shape::DimRule>> dims, std::vector<Cap> caps)
    : m_dims(std::move(dims)), m_caps(std::move(caps)) {}

bool ShapeRules::bounds_another(std::string_view key) const {
  for (const auto& c : m_caps)
    if (c.dim == key) return true;
  return false;
}

std::int64_t ShapeRules::extent(const Shape& s, std::string_view key) const {
  std::int64_t v = s.get(key);
  if (v < 0) return v;
  for (const auto& c : m_caps)
    if (c.bounds == key)
      if (std::int64_t cap = s.get(c.dim); cap >= 0 && cap < v) v = cap;
  return v;
}

const Shape::DimRule& ShapeRules::rule(std::string_view key) const {
  static const Shape::DimRule plain{};
  for (const auto& [name, r] : m_dims)
    if (name == key) return r;
  return plain;
}

}  // namespace kport::porting
