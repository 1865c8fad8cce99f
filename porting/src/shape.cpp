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
  std::string out;
  for (const auto& [k, v] : m_dims) {
    if (!out.empty()) out.push_back(',');
    out += k;
    out.push_back('=');
    out += std::to_string(v);
  }
  return out;
}

double Shape::distance(const Shape& other) const {
  constexpr double k_inf = std::numeric_limits<double>::infinity();
  if (m_dims.size() != other.m_dims.size()) return k_inf;
  double total = 0;
  for (std::size_t i = 0; i < m_dims.size(); ++i) {
    const auto& [ka, va] = m_dims[i];
    const auto& [kb, vb] = other.m_dims[i];
    if (ka != kb) return k_inf;
    double term = dim_distance(ka, va, vb);
    if (term == k_inf) return k_inf;
    total += term;
  }
  return total;
}

// Dimensions that change which code runs, not only how much work there is: a
// measurement at another value says nothing about this one. gemm_fp8's `scale` is the
// scaling mode (per tensor, row-wise, 128-blocks): instances that accumulate on the tensor
// cores run the first two and refuse the third, so a row-wise figure never answers for
// block scales (it did, as the ratio 1:2 of two modes, before this rule knew the key).
bool Shape::must_match_exactly(std::string_view key) { return key == "d" || key == "causal" || key == "scale"; }

// How much a dimension decides which kernel is fastest, and the alignments across which
// kernels change path. Row length (`cols`) sets a row-wise kernel's vector and register
// path, so it counts twice a row count. An extent that is not a multiple of the tiles (128
// for m, n, k; 64 for a sequence) takes the kernels' predicated edge paths, which can cost
// one kernel far more than another (on the H200 the 128x128 wgmma tile was the fastest gemm
// at 3072^3 and 46 % slower than the 2x1-cluster tile at 3000^3). One that is not a
// multiple of 8 elements breaks 16-byte rows: TMA and vector kernels refuse it, so a
// measurement there ranks only the slow kernels (at 2500^3 only mma_sync and simt ran, and
// answered 3000^3 with a kernel 2.1x slower than the fastest). A measurement on the other
// side of such a line is a worse stand-in than its ratio says.
const Shape::DimRule& Shape::dim_rule(std::string_view key) {
  static const DimRule extent{1.0, {{128, 1.0}, {8, 2.0}}}, sequence{1.0, {{64, 1.0}}}, count{0.5, {}},
      row_length{2.0, {{8, 2.0}}}, plain{};
  if (key == "m" || key == "n" || key == "k") return extent;
  if (key == "l") return sequence;
  if (key == "b" || key == "h") return count;
  if (key == "cols") return row_length;
  return plain;
}

double Shape::dim_distance(std::string_view key, std::int64_t a, std::int64_t b) {
  constexpr double k_inf = std::numeric_limits<double>::infinity();
  if (a == b) return 0;
  if (must_match_exactly(key)) return k_inf;
  // A zero-sized dimension only matches itself.
  if (a == 0 || b == 0) return k_inf;
  const DimRule& rule = dim_rule(key);
  double term = rule.weight * std::abs(std::log(static_cast<double>(a) / static_cast<double>(b)));
  for (const auto& al : rule.alignments)
    if ((a % al.quantum == 0) != (b % al.quantum == 0)) term += al.penalty;
  return term;
}

}  // namespace kport::porting
