// URL pieces: percent-decoding, query strings, UTF-8 validation. Pure functions,
// thread-safe, no allocation beyond their results.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "kport/common/result.h"
#include "kport/http/message.h"

namespace kport::http {

// Decodes %XX escapes; in query mode ('+' -> ' ') as in application/x-www-form-urlencoded.
// Fails (invalid_argument) on a malformed escape, on NUL, or when the result is not
// valid UTF-8.
Result<std::string> percent_decode(std::string_view in, bool query_mode = false);
// Encodes everything except unreserved characters (RFC 3986) for use in a path or query.
std::string percent_encode(std::string_view in);
// The same, appended to `out`.
void percent_encode(std::string_view in, std::string& out);
// Parses "a=1&b=x%20y&flag" into {a:1, b:"x y", flag:""}; the last duplicate wins.
// Fails like percent_decode, naming the offending parameter.
Result<ParamMap> parse_query(std::string_view query);
// True when s is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool is_valid_utf8(std::string_view s) noexcept;

}  // namespace kport::http
