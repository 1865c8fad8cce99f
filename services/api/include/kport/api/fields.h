// Reading JSON documents (request bodies, the runner's uploads, the harness's reports):
// typed field access over a Boost.JSON object that turns every mismatch into an
// invalid_argument Error naming the field and what was expected (null reads as absent).
//
//   Fields f(obj, "result");
//   auto name = f.str("instance");          // required
//   auto seed = f.opt_int("seed");          // optional
//   if (!f.ok()) return f.error();          // the first problem met
// Not thread-safe; one per parsed object.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kport/common/result.h"

namespace kport::api {

// Parses a request body as one JSON object; bad_json (with the parser's position) otherwise.
Result<boost::json::object> parse_object(std::string_view body);

// 7..64 lowercase hex digits: a full or abbreviated git object name.
bool is_commit_sha(std::string_view s) noexcept;

class Fields {
 public:
  Fields(const boost::json::object& obj, std::string context);

  std::string str(std::string_view key, std::size_t max_len = 4096);
  std::optional<std::string> opt_str(std::string_view key, std::size_t max_len = 4096);
  std::int64_t integer(std::string_view key);
  std::optional<std::int64_t> opt_int(std::string_view key);
  // An integer in min..max; anything else fails naming the field and the range.
  std::optional<std::int64_t> opt_int(std::string_view key, std::int64_t min, std::int64_t max);
  // A finite number >= min (counts, times, rates and errors are never negative).
  std::optional<double> opt_num_min(std::string_view key, double min);
  // A commit sha: 7..64 lowercase hex digits.
  std::string sha(std::string_view key);
  std::optional<std::string> opt_sha(std::string_view key);
  // An unsigned 64-bit integer (0 .. 2^64-1), such as a seed.
  std::optional<std::uint64_t> opt_uint64(std::string_view key);
  std::optional<double> opt_num(std::string_view key);
  bool boolean(std::string_view key, bool fallback);
  std::vector<std::string> str_list(std::string_view key, std::size_t max_items = 1024);
  // A nested object or array, serialized back to text ("{}" when absent).
  std::string json_text(std::string_view key);
  // A nested object or array as it came ({} when absent).
  boost::json::value json_value(std::string_view key);
  // A nested object (nullptr when absent or null; another type fails).
  const boost::json::object* object(std::string_view key);
  const boost::json::array* array(std::string_view key);

  bool ok() const { return !m_error.has_value(); }
  Error error() const { return m_error.value_or(Error{}); }
  // Records a problem found by the caller (the first one wins).
  void fail(std::string_view key, std::string_view expectation);
  // Records a nested reader's problem as it is (the first one wins).
  void fail_with(Error e) {
    if (!m_error) m_error = std::move(e);
  }
  // The object read, and the context a nested object's reader takes ("results[3].timing").
  const boost::json::object& source() const { return m_obj; }
  std::string path(std::string_view key) const {
    return m_context.empty() ? std::string(key) : m_context + "." + std::string(key);
  }

 private:
  const boost::json::value* find(std::string_view key);
  std::string where(std::string_view key) const;
  const boost::json::object& m_obj;
  std::string m_context;
  std::optional<Error> m_error;
};

// Reads the array under `key` with `read` (a `T read(Fields&)`), one element at a time,
// each named by its index ("items[3].commit"); an element that is not an object, or a
// problem `read` meets, goes into `f`. Absent or null reads as empty.
template <typename Read>
auto read_list(Fields& f, std::string_view key, Read read) -> std::vector<decltype(read(std::declval<Fields&>()))> {
  std::vector<decltype(read(std::declval<Fields&>()))> out;
  const boost::json::array* a = f.array(key);
  if (!a) return out;
  out.reserve(a->size());
  for (std::size_t i = 0; i < a->size() && f.ok(); ++i) {
    const std::string at = f.path(key) + "[" + std::to_string(i) + "]";
    if (!(*a)[i].is_object()) {
      f.fail_with(Error{Errc::invalid_argument, "field '" + at + "' must be an object"});
      break;
    }
    Fields item((*a)[i].as_object(), at);
    out.push_back(read(item));
    if (!item.ok()) f.fail_with(item.error());
  }
  return out;
}

// Reads a nested object under `key` with `read`, named by its path ("compared.builds");
// absent or null reads as `T{}`, and `present` (when given) says whether it was there.
template <typename Read>
auto read_object(Fields& f, std::string_view key, Read read, bool* present = nullptr)
    -> decltype(read(std::declval<Fields&>())) {
  const boost::json::object* o = f.object(key);
  if (present) *present = o != nullptr;
  if (!o) return {};
  Fields nested(*o, f.path(key));
  auto out = read(nested);
  if (!nested.ok()) f.fail_with(nested.error());
  return out;
}

// A whole document: `read` over `o`, its first problem as the Error.
template <typename Read>
auto parse_with(const boost::json::object& o, std::string where, Read read)
    -> Result<decltype(read(std::declval<Fields&>()))> {
  Fields f(o, std::move(where));
  auto out = read(f);
  if (!f.ok()) return f.error();
  return out;
}

// Writes `items` with `write` (a `boost::json::object write(const T&)`) as an array.
template <typename T, typename Write>
boost::json::array write_list(const std::vector<T>& items, Write write) {
  boost::json::array a;
  a.reserve(items.size());
  for (const auto& x : items) a.emplace_back(write(x));
  return a;
}

}  // namespace kport::api
