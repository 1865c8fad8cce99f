#include "kport/porting/op_shape.h"

#include <algorithm>

namespace kport::porting {
namespace {

constexpr std::int64_t k_max_dim = std::int64_t{1} << 30;  // the harness's bound

struct FamilyDims {
  std::string_view family;
  std::vector<std::string_view> keys;  // in the harness's order
};

const std::vector<FamilyDims>& table() {
  // clang-format off
  static const std::vector<FamilyDims> k_table = {
      {"gemm", {"m", "n", "k"}},
      {"attention", {"b", "h", "l", "d", "causal"}},
      {"rmsnorm", {"rows", "cols"}},
      {"softmax", {"rows", "cols"}},
      {"gemm_fp8", {"m", "n", "k", "scale"}},
  };
  // clang-format on
  return k_table;
}

std::string key_list(const FamilyDims& f) {
  std::string out;
  for (auto k : f.keys) {
    if (!out.empty()) out += ",";
    out += k;
  }
  return out;
}

// Keys that may be left out (0 then) and take a small enumeration instead of a size: their
// largest value.
std::int64_t flag_max(std::string_view key) {
  if (key == "causal") return 1;
  if (key == "scale") return 2;  // gemm_fp8: 0 per tensor, 1 row-wise, 2 128-blocks
  return -1;
}

}  // namespace

const std::vector<std::string>& op_families() {
  static const std::vector<std::string> k_names = [] {
    std::vector<std::string> names;
    for (const auto& f : table()) names.emplace_back(f.family);
    return names;
  }();
  return k_names;
}

Result<OpShape> op_shape(std::string_view family, std::string_view text) {
  auto f = std::find_if(table().begin(), table().end(), [&](const FamilyDims& d) { return d.family == family; });
  if (f == table().end())
    return make_error(Errc::invalid_argument,
                      "op '" + std::string(family) + "' is not one of gemm, attention, rmsnorm, softmax, gemm_fp8");
  auto parsed = Shape::parse(text);
  if (!parsed.ok()) return std::move(parsed).error();
  const std::string expected = " (" + std::string(family) + " shapes are " + key_list(*f) + ")";
  for (const auto& [key, value] : parsed->dims()) {
    if (std::find(f->keys.begin(), f->keys.end(), key) == f->keys.end())
      return make_error(Errc::invalid_argument,
                        "shape key '" + key + "' is not a dimension of " + std::string(family) + expected);
    const std::int64_t flag = flag_max(key);
    if (flag >= 0 ? value > flag : (value < 1 || value > k_max_dim))
      return make_error(Errc::invalid_argument, "shape value " + std::to_string(value) + " of '" + key +
                                                    "' is out of range (" +
                                                    (flag == 1  ? std::string("0 or 1")
                                                     : flag > 1 ? "0 .. " + std::to_string(flag)
                                                                : std::string("1 .. 2^30")) +
                                                    ")");
  }
  OpShape out;
  for (auto key : f->keys) {
    std::int64_t v = parsed->get(key);
    if (v < 0 && flag_max(key) >= 0) v = 0;
    if (v < 0) return make_error(Errc::invalid_argument, "shape has no '" + std::string(key) + "'" + expected);
    if (!out.text.empty()) out.text += ",";
    out.text += std::string(key) + "=" + std::to_string(v);
  }
  auto full = Shape::parse(out.text);
  if (!full.ok()) return std::move(full).error();
  out.shape = std::move(*full);
  return out;
}

}  // namespace kport::porting
