#include "kport/api/fields.h"

#include <cmath>

namespace kport::api {

Result<boost::json::object> parse_object(std::string_view body) {
  if (body.empty()) return make_error(Errc::bad_json, "request body is empty; expected a JSON object");
  boost::system::error_code ec;
  boost::json::parse_options opts;
  opts.max_depth = 32;
  boost::json::value v = boost::json::parse(body, ec, {}, opts);
  if (ec) return make_error(Errc::bad_json, "request body is not valid JSON: " + ec.message());
  if (!v.is_object()) return make_error(Errc::bad_json, "request body must be a JSON object");
  return std::move(v.as_object());
}

Fields::Fields(const boost::json::object& obj, std::string context) : m_obj(obj), m_context(std::move(context)) {}

std::string Fields::where(std::string_view key) const {
  return m_context.empty() ? "'" + std::string(key) + "'" : "'" + m_context + "." + std::string(key) + "'";
}

void Fields::fail(std::string_view key, std::string_view expectation) {
  if (!m_error) m_error = Error{Errc::invalid_argument, "field " + where(key) + " " + std::string(expectation)};
}

const boost::json::value* Fields::find(std::string_view key) {
  auto it = m_obj.find(key);
  if (it == m_obj.end() || it->value().is_null()) return nullptr;
  return &it->value();
}

std::string Fields::str(std::string_view key, std::size_t max_len) {
  auto v = opt_str(key, max_len);
  if (!v) {
    if (!find(key)) fail(key, "is required (a string)");
    return {};
  }
  return *v;
}

std::optional<std::string> Fields::opt_str(std::string_view key, std::size_t max_len) {
  auto* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    fail(key, "must be a string");
    return std::nullopt;
  }
  const auto& s = v->as_string();
  if (s.size() > max_len) {
    fail(key, "is longer than " + std::to_string(max_len) + " bytes");
    return std::nullopt;
  }
  if (std::string_view(s).find('\0') != std::string_view::npos) {
    fail(key, "must not contain NUL");
    return std::nullopt;
  }
  return std::string(s);
}

std::int64_t Fields::integer(std::string_view key) {
  auto v = opt_int(key);
  if (!v) {
    if (!find(key)) fail(key, "is required (an integer)");
    return 0;
  }
  return *v;
}

std::optional<std::int64_t> Fields::opt_int(std::string_view key) {
  auto* v = find(key);
  if (!v) return std::nullopt;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(v->as_uint64());
  if (v->is_double()) {
    double d = v->as_double();
    if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9e15) return static_cast<std::int64_t>(d);
  }
  fail(key, "must be an integer");
  return std::nullopt;
}

std::optional<std::int64_t> Fields::opt_int(std::string_view key, std::int64_t min, std::int64_t max) {
  auto v = opt_int(key);
  if (v && (*v < min || *v > max)) {
    fail(key,
         "must be an integer in " + std::to_string(min) + ".." + std::to_string(max) + ", got " + std::to_string(*v));
    return std::nullopt;
  }
  return v;
}

std::optional<double> Fields::opt_num_min(std::string_view key, double min) {
  auto v = opt_num(key);
  if (v && *v < min) {
    fail(key, "must be a number >= " + boost::json::serialize(boost::json::value(min)) + ", got " +
                  boost::json::serialize(boost::json::value(*v)));
    return std::nullopt;
  }
  return v;
}

bool is_commit_sha(std::string_view s) noexcept {
  if (s.size() < 7 || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string Fields::sha(std::string_view key) {
  auto v = opt_sha(key);
  if (!v) {
    if (!find(key)) fail(key, "is required (a commit sha)");
    return {};
  }
  return *v;
}

std::optional<std::string> Fields::opt_sha(std::string_view key) {
  auto v = opt_str(key, 64);
  if (v && !is_commit_sha(*v)) {
    fail(key, "must be a commit sha (7..64 lowercase hex digits)");
    return std::nullopt;
  }
  return v;
}

std::optional<std::uint64_t> Fields::opt_uint64(std::string_view key) {
  auto* v = find(key);
  if (!v) return std::nullopt;
  if (v->is_uint64()) return v->as_uint64();
  if (v->is_int64() && v->as_int64() >= 0) return static_cast<std::uint64_t>(v->as_int64());
  if (v->is_double()) {
    double d = v->as_double();
    if (std::isfinite(d) && d >= 0 && d == std::floor(d) && d < 9e15) return static_cast<std::uint64_t>(d);
  }
  fail(key, "must be an unsigned integer in 0..18446744073709551615");
  return std::nullopt;
}

std::optional<double> Fields::opt_num(std::string_view key) {
  auto* v = find(key);
  if (!v) return std::nullopt;
  if (v->is_double()) {
    if (!std::isfinite(v->as_double())) {
      fail(key, "must be finite");
      return std::nullopt;
    }
    return v->as_double();
  }
  if (v->is_int64()) return static_cast<double>(v->as_int64());
  if (v->is_uint64()) return static_cast<double>(v->as_uint64());
  fail(key, "must be a number");
  return std::nullopt;
}

bool Fields::boolean(std::string_view key, bool fallback) {
  auto* v = find(key);
  if (!v) return fallback;
  if (!v->is_bool()) {
    fail(key, "must be true or false");
    return fallback;
  }
  return v->as_bool();
}

std::vector<std::string> Fields::str_list(std::string_view key, std::size_t max_items) {
  std::vector<std::string> out;
  auto* v = find(key);
  if (!v) return out;
  if (!v->is_array()) {
    fail(key, "must be an array of strings");
    return out;
  }
  if (v->as_array().size() > max_items) {
    fail(key, "has more than " + std::to_string(max_items) + " items");
    return out;
  }
  for (const auto& item : v->as_array()) {
    if (!item.is_string()) {
      fail(key, "must be an array of strings");
      return {};
    }
    out.emplace_back(item.as_string());
  }
  return out;
}

std::string Fields::json_text(std::string_view key) {
  auto* v = find(key);
  if (!v) return "{}";
  if (!v->is_object() && !v->is_array()) {
    fail(key, "must be a JSON object or array");
    return "{}";
  }
  return boost::json::serialize(*v);
}

boost::json::value Fields::json_value(std::string_view key) {
  auto* v = find(key);
  if (!v) return boost::json::object{};
  if (!v->is_object() && !v->is_array()) {
    fail(key, "must be a JSON object or array");
    return boost::json::object{};
  }
  return *v;
}

const boost::json::object* Fields::object(std::string_view key) {
  auto* v = find(key);
  if (!v) return nullptr;
  if (!v->is_object()) {
    fail(key, "must be an object");
    return nullptr;
  }
  return &v->as_object();
}

const boost::json::array* Fields::array(std::string_view key) {
  auto* v = find(key);
  if (!v) return nullptr;
  if (!v->is_array()) {
    fail(key, "must be an array");
    return nullptr;
  }
  return &v->as_array();
}

}  // namespace kport::api
