#include "json_text.h"

#include <boost/json.hpp>

#include <charconv>
#include <set>

namespace kport::db::detail {

Result<std::string> json_text(std::string_view field, std::string_view text, std::string_view empty_as) {
  if (text.empty()) return std::string(empty_as);
  boost::system::error_code ec;
  (void)boost::json::parse(text, ec);
  if (ec) return make_error(Errc::invalid_argument, std::string(field) + " is not valid JSON: " + ec.message());
  return std::string(text);
}

Result<Dims> parse_shape(std::string_view shape) {
  auto bad = [&](std::string_view why) {
    return make_error(Errc::invalid_argument, "shape \"" + std::string(shape) + "\" " + std::string(why) +
                                                  "; expected e.g. \"m=4096,n=4096,k=4096\"");
  };
  if (shape.empty()) return bad("is empty");
  Dims dims;
  std::set<std::string, std::less<>> seen;
  std::size_t pos = 0;
  while (pos <= shape.size()) {
    std::size_t end = shape.find(',', pos);
    if (end == std::string_view::npos) end = shape.size();
    const std::string_view part = shape.substr(pos, end - pos);
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0) return bad("has a dimension without a name=value form");
    const std::string_view name = part.substr(0, eq), value = part.substr(eq + 1);
    std::int64_t n = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || p != value.data() + value.size() || n < 0)
      return bad("has a dimension whose value is not a non-negative integer");
    if (!seen.emplace(name).second) return bad("repeats a dimension");
    dims.emplace_back(std::string(name), n);
    pos = end + 1;
  }
  return dims;
}

std::string dims_to_json(const Dims& dims) {
  boost::json::array a;
  for (const auto& [name, value] : dims) a.push_back(boost::json::array{boost::json::string(name), value});
  return boost::json::serialize(a);
}

Dims dims_from_json(std::string_view json) {
  Dims out;
  boost::system::error_code ec;
  auto v = boost::json::parse(json, ec);
  if (ec || !v.is_array()) return out;
  for (const auto& item : v.as_array()) {
    if (!item.is_array() || item.as_array().size() != 2) continue;
    const auto& pair = item.as_array();
    if (!pair[0].is_string() || !pair[1].is_int64()) continue;
    out.emplace_back(std::string(pair[0].as_string()), pair[1].as_int64());
  }
  return out;
}

std::string strings_to_json(const std::vector<std::string>& items) {
  boost::json::array a;
  for (const auto& s : items) a.push_back(boost::json::string(s));
  return boost::json::serialize(a);
}

std::vector<std::string> strings_from_json(std::string_view json) {
  boost::system::error_code ec;
  auto v = boost::json::parse(json, ec);
  std::vector<std::string> out;
  if (ec || !v.is_array()) return out;
  for (const auto& item : v.as_array())
    if (item.is_string()) out.emplace_back(item.as_string());
  return out;
}

}  // namespace kport::db::detail
