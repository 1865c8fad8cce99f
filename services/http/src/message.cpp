#include "kport/http/message.h"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "kport/common/utf8.h"
#include "kport/http/stop_signal.h"

namespace kport::http {
namespace {

// Header names are ASCII tokens; a locale-aware comparison would be slower and could
// differ between machines.
bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

std::string_view Request::header(std::string_view name) const noexcept {
  for (const auto& [key, value] : headers)
    if (iequals(key, name)) return value;
  return {};
}

// std::map<std::string, ...> without a transparent comparator needs a key string; keys
// are short, so it stays in the small-string buffer.
std::string_view Request::query_or(std::string_view key, std::string_view fallback) const {
  auto it = query.find(key);
  return it == query.end() ? fallback : std::string_view(it->second);
}

std::string_view Request::param(std::string_view key) const {
  auto it = params.find(key);
  return it == params.end() ? std::string_view{} : std::string_view(it->second);
}

std::string Request::media_type() const {
  std::string_view ct = header("Content-Type");
  ct = ct.substr(0, ct.find(';'));
  while (!ct.empty() && (ct.back() == ' ' || ct.back() == '\t')) ct.remove_suffix(1);
  while (!ct.empty() && (ct.front() == ' ' || ct.front() == '\t')) ct.remove_prefix(1);
  std::string out(ct);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool Request::stopping() const noexcept { return stop && stop->stopping(); }

Response& Response::set_header(std::string name, std::string value) {
  for (auto& [key, existing] : headers) {
    if (iequals(key, name)) {
      existing = std::move(value);
      return *this;
    }
  }
  headers.emplace_back(std::move(name), std::move(value));
  return *this;
}

// Error bodies go through Boost.JSON too, so a message quoting user input is escaped.
Response json_response(int status, const boost::json::value& body) {
  Response r;
  r.status = status;
  r.body = boost::json::serialize(body);
  return r;
}

Response error_response(const kport::Error& error) {
  return error_response(errc_http_status(error.code), errc_name(error.code), error.message);
}

Response error_response(int status, std::string_view code, std::string_view message) {
  boost::json::object inner;
  inner["code"] = code;
  // A message may quote what the client sent (a decoded path or query), which need not
  // be UTF-8; the answer must be.
  inner["message"] = kport::utf8::sanitize(message);
  boost::json::object outer;
  outer["error"] = std::move(inner);
  return json_response(status, outer);
}

Response text_response(int status, std::string body, std::string content_type) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

}  // namespace kport::http
