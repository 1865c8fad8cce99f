// Reading optional fields of JSON documents from other processes (the coordinator's
// answers, the harness's reports): a missing field or one of another type reads as
// absent, never as an exception. Header-only; users link Boost.JSON themselves.
#pragma once

#include <boost/json.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace kport::json_fields {

// The string at `key`, or "" when it is missing or not a string.
inline std::string str(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}
inline std::string str(const boost::json::value& v, std::string_view key) {
  return v.is_object() ? str(v.as_object(), key) : std::string();
}

// The number at `key` as a double, when it is one.
inline std::optional<double> num(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->to_number<double>();
}

// The object at `key`, or nullptr.
inline const boost::json::object* obj(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_object() ? &v->as_object() : nullptr;
}

// The number at a path of keys ({"timing", "median_ms"}), when every step is there.
inline std::optional<double> number_at(const boost::json::object& o, std::initializer_list<std::string_view> path) {
  const boost::json::object* cur = &o;
  std::size_t left = path.size();
  for (std::string_view key : path) {
    if (--left == 0) return num(*cur, key);
    cur = obj(*cur, key);
    if (!cur) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace kport::json_fields
