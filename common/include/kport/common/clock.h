// Wall-clock helpers. Times in kport's API and database are Unix milliseconds (int64)
// and, for people, ISO-8601 UTC strings.
#pragma once

#include <cstdint>
#include <string>

namespace kport {

std::int64_t now_unix_ms() noexcept;
// "2026-11-29T14:42:40.123Z"
std::string iso8601_utc(std::int64_t unix_ms);

}  // namespace kport
