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
#include <type_traits>
#include <utility>

namespace kport::log {

enum class Level { trace, debug, info, warn, error, off };
// text: "2026-12-01T12:00:00.123Z info  kport-runner: message key=value";
// json: {"ts":"2026-12-01T12:00:00.123Z","level":"info","proc":"kport-runner","msg":"message","key":"value"}.
enum class Format { text, json };

// What a service's --log-level and --log-format said (kport/common/log_options.h).
struct Settings {
  Level level = Level::info;
  Format format = Format::text;
};

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

// Sets the process name shown in each line, the minimum level and the format. Log lines
// go to stderr; timestamps are UTC in both formats.
void init(std::string_view process, Level level = Level::info, Format format = Format::text);
// Parses "trace".."off"; returns false for anything else.
bool parse_level(std::string_view text, Level& out);
// Parses "text" or "json"; returns false for anything else.
bool parse_format(std::string_view text, Format& out);

void write(Level level, std::string_view message, Fields fields = {});
inline void trace(std::string_view m, Fields f = {}) { write(Level::trace, m, f); }
inline void debug(std::string_view m, Fields f = {}) { write(Level::debug, m, f); }
inline void info(std::string_view m, Fields f = {}) { write(Level::info, m, f); }
inline void warn(std::string_view m, Fields f = {}) { write(Level::warn, m, f); }
inline void error(std::string_view m, Fields f = {}) { write(Level::error, m, f); }
void flush();

}  // namespace kport::log
