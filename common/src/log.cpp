#include "kport/common/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <mutex>

namespace kport::log {
namespace {

std::shared_ptr<spdlog::logger> g_logger;
bool g_json = false;
std::once_flag g_default_once;

spdlog::logger& logger() {
  std::call_once(g_default_once, [] {
    if (!g_logger) {
      g_logger = spdlog::stderr_logger_mt("kport");
      g_logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
    }
  });
  return *g_logger;
}

spdlog::level::level_enum to_spd(Level l) {
  switch (l) {
    case Level::trace: return spdlog::level::trace;
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warn: return spdlog::level::warn;
    case Level::error: return spdlog::level::err;
    case Level::off: return spdlog::level::off;
  }
  return spdlog::level::info;
}

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

}  // namespace

void init(std::string_view process, Level level, Format format) {
  const bool json = format == Format::json;
  std::call_once(g_default_once, [] {});
  spdlog::drop(std::string(process));
  g_logger = spdlog::stderr_logger_mt(std::string(process));
  g_json = json;
  if (json)
    g_logger->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","proc":"%n",%v})",
                          spdlog::pattern_time_type::utc);
  else
    g_logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%-5l%$ %n: %v", spdlog::pattern_time_type::utc);
  g_logger->set_level(to_spd(level));
  g_logger->flush_on(spdlog::level::warn);
}

bool parse_level(std::string_view text, Level& out) {
  static constexpr std::pair<std::string_view, Level> k_levels[] = {{"trace", Level::trace}, {"debug", Level::debug},
                                                                    {"info", Level::info},   {"warn", Level::warn},
                                                                    {"error", Level::error}, {"off", Level::off}};
  for (auto& [name, level] : k_levels)
    if (name == text) {
      out = level;
      return true;
    }
  return false;
}

bool parse_format(std::string_view text, Format& out) {
  if (text == "text") {
    out = Format::text;
    return true;
  }
  if (text == "json") {
    out = Format::json;
    return true;
  }
  return false;
}

void write(Level level, std::string_view message, Fields fields) {
  auto& lg = logger();
  if (!lg.should_log(to_spd(level))) return;
  std::string line;
  if (g_json) {
    line += "\"msg\":";
    append_json_string(line, message);
    for (const auto& f : fields) {
      line.push_back(',');
      append_json_string(line, f.key);
      line.push_back(':');
      append_json_string(line, f.value);
    }
  } else {
    line.assign(message);
    for (const auto& f : fields) {
      line.push_back(' ');
      line.append(f.key);
      line.push_back('=');
      bool quote = f.value.find_first_of(" \"=") != std::string::npos || f.value.empty();
      if (quote)
        append_json_string(line, f.value);
      else
        line += f.value;
    }
  }
  lg.log(to_spd(level), "{}", line);
}

void flush() { logger().flush(); }

}  // namespace kport::log
