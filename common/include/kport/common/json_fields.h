// Reading fields of JSON documents from other processes (the coordinator's answers, the
// harness's reports), never by exception:
//  - the lenient readers (str, num, obj, number_at): a missing field or one of another
//    type reads as absent;
//  - the strict readers (required_*, optional_*): a field of the wrong type, a fractional
//    or out-of-range integer, or a missing required field is an Error (invalid_argument)
//    whose message names the field as `where.key`, what was expected and what came
//    ("job.attempt must be an integer, not 1.5").
// Header-only; users link Boost.JSON themselves.
#pragma once

#include <boost/json.hpp>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "kport/common/result.h"

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

// What a value is, for messages: "a string", "the number 1.5", "null", ...
inline std::string describe(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return v.as_bool() ? "true" : "false";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_: return "the number " + boost::json::serialize(v);
    case boost::json::kind::string: return "a string";
    case boost::json::kind::array: return "an array";
    case boost::json::kind::object: return "an object";
  }
  return "a value";
}

namespace detail {
inline std::string field_name(std::string_view where, std::string_view key) {
  return where.empty() ? std::string(key) : std::string(where) + "." + std::string(key);
}
inline Error wrong(std::string_view where, std::string_view key, std::string_view expected,
                   const boost::json::value* got) {
  return make_error(Errc::invalid_argument,
                    field_name(where, key) + (got ? " must be " + std::string(expected) + ", not " + describe(*got)
                                                  : " is missing (expected " + std::string(expected) + ")"));
}
// An integer in [lo, hi], from any JSON number that holds one exactly (3 and 3.0, not 3.5).
inline std::optional<std::int64_t> exact_integer(const boost::json::value& v, std::int64_t lo, std::int64_t hi) {
  if (v.is_int64()) {
    const auto i = v.as_int64();
    return i >= lo && i <= hi ? std::optional<std::int64_t>(i) : std::nullopt;
  }
  if (v.is_uint64()) {
    const auto u = v.as_uint64();
    return hi >= 0 && u <= static_cast<std::uint64_t>(hi) ? std::optional<std::int64_t>(static_cast<std::int64_t>(u))
                                                          : std::nullopt;
  }
  if (v.is_double()) {
    const double d = v.as_double();
    // 2^63 is exactly representable; every double below it converts without overflow.
    if (!std::isfinite(d) || d != std::trunc(d) || d < -9.2233720368547758e18 || d >= 9.2233720368547758e18)
      return std::nullopt;
    const auto i = static_cast<std::int64_t>(d);
    return i >= lo && i <= hi ? std::optional<std::int64_t>(i) : std::nullopt;
  }
  return std::nullopt;
}
inline std::string range_text(std::int64_t lo, std::int64_t hi) {
  return "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
}
}  // namespace detail

// The string at `key`; missing, null or another type is an Error. `non_empty`: "" is one too.
inline Result<std::string> required_string(const boost::json::object& o, std::string_view key, std::string_view where,
                                           bool non_empty = true) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_string()) return detail::wrong(where, key, non_empty ? "a non-empty string" : "a string", v);
  if (non_empty && v->as_string().empty())
    return make_error(Errc::invalid_argument, detail::field_name(where, key) + " is empty");
  return std::string(v->as_string());
}

// The integer at `key`, within [lo, hi]; a fraction, a string or a number out of range is an Error.
inline Result<std::int64_t> required_integer(const boost::json::object& o, std::string_view key, std::string_view where,
                                             std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                                             std::int64_t hi = std::numeric_limits<std::int64_t>::max()) {
  const auto* v = o.if_contains(key);
  if (!v) return detail::wrong(where, key, detail::range_text(lo, hi), nullptr);
  if (auto i = detail::exact_integer(*v, lo, hi)) return *i;
  return detail::wrong(where, key, detail::range_text(lo, hi), v);
}

// Absent or null: nullopt; otherwise as required_integer.
inline Result<std::optional<std::int64_t>> optional_integer(
    const boost::json::object& o, std::string_view key, std::string_view where,
    std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
    std::int64_t hi = std::numeric_limits<std::int64_t>::max()) {
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return std::optional<std::int64_t>{};
  auto i = required_integer(o, key, where, lo, hi);
  if (!i.ok()) return std::move(i).error();
  return std::optional<std::int64_t>(*i);
}

// Absent or null: nullopt; a bool: it; anything else is an Error.
inline Result<std::optional<bool>> optional_bool(const boost::json::object& o, std::string_view key,
                                                 std::string_view where) {
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return std::optional<bool>{};
  if (!v->is_bool()) return detail::wrong(where, key, "true or false", v);
  return std::optional<bool>(v->as_bool());
}

// Absent or null: nullptr; an object: it; anything else is an Error.
inline Result<const boost::json::object*> optional_object(const boost::json::object& o, std::string_view key,
                                                          std::string_view where) {
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return static_cast<const boost::json::object*>(nullptr);
  if (!v->is_object()) return detail::wrong(where, key, "an object", v);
  return &v->as_object();
}

}  // namespace kport::json_fields
