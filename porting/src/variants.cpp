#include "kport/porting/variants.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kport::porting {
namespace fs = std::filesystem;

namespace {

// CMake argument words of one call: whitespace-separated, quotes keep spaces, '#' starts
// a comment to the end of the line.
std::vector<std::string> words(std::string_view args) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, have = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    char c = args[i];
    if (quoted) {
      if (c == '"')
        quoted = false;
      else
        cur += c;
      continue;
    }
    if (c == '#') {
      while (i < args.size() && args[i] != '\n') ++i;
      c = ' ';
    }
    if (c == '"') {
      quoted = have = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (have) out.push_back(cur);
      cur.clear();
      have = false;
    } else {
      cur += c;
      have = true;
    }
  }
  if (have) out.push_back(cur);
  return out;
}

}  // namespace

Result<std::vector<VariantSpec>> parse_variant_calls(std::string_view text, const std::string& origin) {
  std::vector<VariantSpec> out;
  static constexpr std::string_view k_call = "kport_kernel_variant";
  std::size_t pos = 0;
  while ((pos = text.find(k_call, pos)) != std::string_view::npos) {
    // Skip occurrences inside comments: the line before must not hold a '#'.
    auto line_start = text.rfind('\n', pos);
    line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
    bool commented = text.substr(line_start, pos - line_start).find('#') != std::string_view::npos;
    auto open = text.find_first_not_of(" \t", pos + k_call.size());
    pos += k_call.size();
    if (commented || open == std::string_view::npos || text[open] != '(') continue;
    auto close = text.find(')', open);
    if (close == std::string_view::npos)
      return make_error(Errc::invalid_argument, origin + ": kport_kernel_variant( is not closed");
    VariantSpec v;
    std::vector<std::string>* list = nullptr;
    std::string* single = nullptr;
    for (auto& w : words(text.substr(open + 1, close - open - 1))) {
      if (w == "FAMILY") {
        single = &v.family;
        list = nullptr;
      } else if (w == "VARIANT") {
        single = &v.variant;
        list = nullptr;
      } else if (w == "FEATURES") {
        list = &v.features;
        single = nullptr;
      } else if (w == "SOURCES") {
        list = &v.sources;
        single = nullptr;
      } else if (w == "OPTIONS") {
        list = &v.options;
        single = nullptr;
      } else if (single) {
        *single = w;
        single = nullptr;
      } else if (list)
        list->push_back(w);
    }
    if (v.family.empty() || v.variant.empty() || v.sources.empty())
      return make_error(Errc::invalid_argument, origin + ": kport_kernel_variant needs FAMILY, VARIANT and SOURCES");
    out.push_back(std::move(v));
    pos = close;
  }
  return out;
}

Result<std::vector<VariantSpec>> discover_variants(const fs::path& kernels_dir) {
  std::error_code ec;
  if (!fs::exists(kernels_dir / "cmake" / "kport_kernels.cmake", ec))
    return make_error(Errc::not_found, kernels_dir.string() + " is not a kernels tree (no cmake/kport_kernels.cmake)");
  std::vector<VariantSpec> out;
  for (const auto& family : fs::directory_iterator(kernels_dir, ec)) {
    if (!family.is_directory()) continue;
    for (const auto& variant : fs::directory_iterator(family.path(), ec)) {
      fs::path list = variant.path() / "CMakeLists.txt";
      if (!variant.is_directory() || !fs::exists(list)) continue;
      std::ifstream in(list);
      std::ostringstream s;
      s << in.rdbuf();
      auto calls = parse_variant_calls(s.str(), list.string());
      if (!calls.ok()) return std::move(calls).error();
      for (auto& v : *calls) {
        v.dir = variant.path();
        out.push_back(std::move(v));
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const VariantSpec& a, const VariantSpec& b) { return a.id() < b.id(); });
  return out;
}

}  // namespace kport::porting
