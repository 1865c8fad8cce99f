#include <charconv>

#include <boost/json/parse.hpp>

#include "kport/http/client.h"

namespace kport::http {
namespace {

bool istarts_with(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

Error bad_url(std::string_view url, std::string_view why) {
  return make_error(Errc::invalid_argument, "bad URL '" + std::string(url.substr(0, 200)) + "': " + std::string(why) +
                                                " (expected http://host:port/path or https://host:port/path)");
}

}  // namespace

Result<Url> parse_url(std::string_view url) {
  const bool secure = istarts_with(url, "https://");
  if (!secure && !istarts_with(url, "http://")) return bad_url(url, "the scheme must be http:// or https://");
  std::string_view rest = url.substr(secure ? 8 : 7);
  std::size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view tail = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  if (authority.find('@') != std::string_view::npos) return bad_url(url, "credentials in URLs are not supported");
  Url out;
  out.scheme = secure ? "https" : "http";
  out.port = secure ? 443 : 80;
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad_url(url, "unterminated IPv6 address");
    out.host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad_url(url, "junk after the IPv6 address");
      port_text = after.substr(1);
    }
  } else {
    // rfind: only the last colon can start a port (IPv6 literals are bracketed).
    std::size_t colon = authority.rfind(':');
    out.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (out.host.empty()) return bad_url(url, "the host is missing");
  if (out.host.find_first_of(" \t\r\n") != std::string::npos) return bad_url(url, "spaces in the host");
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc{} || ptr != port_text.data() + port_text.size() || value == 0 || value > 65535)
      return bad_url(url, "the port must be a number from 1 to 65535");
    out.port = static_cast<std::uint16_t>(value);
  }
  // The fragment is the browser's business and is never sent to the server.
  tail = tail.substr(0, tail.find('#'));
  if (tail.find_first_of(" \r\n") != std::string_view::npos)
    return bad_url(url, "spaces or line breaks in the path; percent-encode them");
  out.target.clear();
  if (tail.empty() || tail.front() == '?') out.target.push_back('/');
  out.target.append(tail);
  return out;
}

std::string_view ClientResponse::header(std::string_view name) const noexcept {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (const auto& [key, value] : headers) {
    if (key.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < key.size() && same; ++i) same = lower(key[i]) == lower(name[i]);
    if (same) return value;
  }
  return {};
}

Result<boost::json::value> ClientResponse::json() const {
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec);
  if (ec) return make_error(Errc::bad_json, "response body is not JSON: " + ec.message());
  return v;
}

}  // namespace kport::http
