// UTF-8 text that stays valid when it is cut or when it came from outside.
//
// Every answer kport sends is JSON and must be valid UTF-8, so text that is shortened
// (commit messages, logs, notes) is cut on a character boundary, and text read from a
// source that does not promise UTF-8 (a git object, a subprocess) is repaired before it
// is stored or sent. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kport::utf8 {

// True when s is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool valid(std::string_view s) noexcept;

// The longest prefix of s of at most max_bytes bytes that ends on a character boundary.
// For valid input the prefix is valid; a partial character at the cut is dropped.
std::string_view truncate(std::string_view s, std::size_t max_bytes) noexcept;

// s with every ill-formed sequence replaced by U+FFFD (one per maximal invalid
// subpart, as the Unicode standard recommends); valid input comes back unchanged.
std::string sanitize(std::string_view s);

// sanitize(s), then truncate to max_bytes: the one call for text from outside that has
// a length limit.
std::string clip(std::string_view s, std::size_t max_bytes);

}  // namespace kport::utf8
