#include "kport/http/uri.h"

#include <cstdint>

namespace kport::http {
namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_unreserved(unsigned char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

}  // namespace

bool is_valid_utf8(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07u;
    } else
      return false;
    if (static_cast<std::size_t>(end - p) < len) return false;
    for (std::size_t i = 1; i < len; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    // Overlong forms and surrogates are how filters get bypassed; reject them.
    static constexpr std::uint32_t k_min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < k_min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p += len;
  }
  return true;
}

Result<std::string> percent_decode(std::string_view in, bool query_mode) {
  std::string out;
  // Most components have nothing to decode: taken whole.
  if (in.find_first_of(query_mode ? std::string_view("%+\0", 3) : std::string_view("%\0", 2)) ==
      std::string_view::npos) {
    out.assign(in);
    if (!is_valid_utf8(out)) return make_error(Errc::invalid_argument, "URL component is not valid UTF-8");
    return out;
  }
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      int hi = i + 2 < in.size() ? hex_value(in[i + 1]) : -1;
      int lo = i + 2 < in.size() ? hex_value(in[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        return make_error(Errc::invalid_argument,
                          "malformed percent escape in '" + std::string(in) + "': use %XX with two hex digits");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && query_mode) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  // NUL truncates strings in C APIs (paths, SQLite text) behind our back: refuse it early.
  if (out.find('\0') != std::string::npos) return make_error(Errc::invalid_argument, "NUL character in URL component");
  if (!is_valid_utf8(out)) return make_error(Errc::invalid_argument, "URL component is not valid UTF-8");
  return out;
}

// Encoding everything outside the unreserved set is always safe, in paths and queries.
std::string percent_encode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  percent_encode(in, out);
  return out;
}

void percent_encode(std::string_view in, std::string& out) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  for (char ch : in) {
    auto c = static_cast<unsigned char>(ch);
    if (is_unreserved(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(k_hex[c >> 4]);
      out.push_back(k_hex[c & 15]);
    }
  }
}

Result<ParamMap> parse_query(std::string_view query) {
  ParamMap out;
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;  // "a=1&&b=2" is common from string-building clients
    std::size_t eq = pair.find('=');
    auto key = percent_decode(pair.substr(0, eq), true);
    if (!key) return make_error(Errc::invalid_argument, "query parameter name: " + key.error().message);
    std::string_view raw_value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    auto value = percent_decode(raw_value, true);
    if (!value) return make_error(Errc::invalid_argument, "query parameter '" + *key + "': " + value.error().message);
    out.insert_or_assign(std::move(*key), std::move(*value));
  }
  return out;
}

}  // namespace kport::http
