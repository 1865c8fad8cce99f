// Structured logging for every kport process. The only header that stands between
// kport code and spdlog: nothing else includes spdlog.
//
// Messages use fmt syntax and may carry key=value fields:
//   kport::log::info("claimed job", {{"job", id}, {"runner", name}});
// Thread-safe.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace kport::log {

enum class Level { trace, debug, info, warn, error, off };

struct Field {
  std::string_view key;
  std::string value;
  Field(std::string_view k, std::string_view v) : key(k), value(v) {}
  Field(std::string_view k, const char* v) : key(k), value(v) {}
  Field(std::string_view k, const std::string& v) : key(k), value(v) {}
  template <typename N, typename = std::enable_if_t<std::is_arithmetic_v<N>>>
  Field(std::string_view k, N v) : key(k), value(std::to_string(v)) {}
};
using Fields = std::initializer_list<Field>;

// Sets the process name shown in each line, the minimum level and the format
// ("text": human-readable key=value; "json": one JSON object per line). Log lines
// go to stderr.
void init(std::string_view process, Level level = Level::info, bool json = false);
// Parses "trace".."off"; returns false for anything else.
bool parse_level(std::string_view text, Level& out);

void write(Level level, std::string_view message, Fields fields = {});
inline void trace(std::string_view m, Fields f = {}) { write(Level::trace, m, f); }
inline void debug(std::string_view m, Fields f = {}) { write(Level::debug, m, f); }
inline void info(std::string_view m, Fields f = {}) { write(Level::info, m, f); }
inline void warn(std::string_view m, Fields f = {}) { write(Level::warn, m, f); }
inline void error(std::string_view m, Fields f = {}) { write(Level::error, m, f); }
void flush();

}  // namespace kport::log
