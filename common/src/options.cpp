#include "kport/common/options.h"

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "kport/common/build_info.h"

namespace kport {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Appending into one string (rather than chaining operator+ on temporaries) also keeps
// GCC 12's -Wrestrict false positive out of optimized builds.
std::string quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('\'');
  out.append(s);
  out.push_back('\'');
  return out;
}

std::optional<bool> parse_bool(std::string_view v) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

}  // namespace

Options::Options(std::string program, std::string summary)
    : m_program(std::move(program)), m_summary(std::move(summary)) {
  add("config", "", "", "read options from this file (name = value per line)");
}

Options& Options::add(std::string name, std::string env, std::string default_value, std::string help) {
  m_specs.push_back(Spec{std::move(name), std::move(env), std::move(default_value), std::move(help), "default", false});
  return *this;
}

Options& Options::add_flag(std::string name, std::string env, bool default_value, std::string help) {
  m_specs.push_back(
      Spec{std::move(name), std::move(env), default_value ? "true" : "false", std::move(help), "default", true});
  return *this;
}

Options::Spec* Options::find(std::string_view name) {
  for (auto& s : m_specs)
    if (s.name == name) return &s;
  return nullptr;
}

const Options::Spec& Options::at(std::string_view name) const {
  for (const auto& s : m_specs)
    if (s.name == name) return s;
  // Asking for an undeclared option is a programming error, not user input.
  throw std::logic_error("undeclared option --" + std::string(name));
}

Status Options::set(Spec& s, std::string_view value, std::string source) {
  if (s.is_flag) {
    auto b = parse_bool(value);
    if (!b)
      return make_error(Errc::invalid_argument,
                        "--" + s.name + " from " + source + " expects true or false, got '" + std::string(value) + "'");
    s.value = *b ? "true" : "false";
  } else {
    s.value = std::string(value);
  }
  s.source = std::move(source);
  return {};
}

Status Options::parse(int argc, const char* const* argv) {
  // Command line first, remembering what it set so the environment and file cannot override it.
  std::map<std::string, std::string> cli;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      m_help = true;
      continue;
    }
    if (arg == "--version") {
      m_version = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      if (arg != "--")
        m_positional.emplace_back(arg);
      else
        for (++i; i < argc; ++i) m_positional.emplace_back(argv[i]);
      continue;
    }
    std::string_view body = arg.substr(2);
    std::string name(body.substr(0, body.find('=')));
    bool has_inline = body.find('=') != std::string_view::npos;
    Spec* s = find(name);
    if (!s && name.rfind("no-", 0) == 0 && (s = find(name.substr(3))) && s->is_flag && !has_inline) {
      cli[s->name] = "false";
      continue;
    }
    if (!s) return make_error(Errc::invalid_argument, "unknown option --" + name + "; see " + m_program + " --help");
    if (s->is_flag && !has_inline) {
      cli[name] = "true";
      continue;
    }
    if (has_inline) {
      cli[name] = std::string(body.substr(body.find('=') + 1));
      continue;
    }
    if (i + 1 >= argc) return make_error(Errc::invalid_argument, "option --" + name + " needs a value");
    cli[name] = argv[++i];
  }
  std::map<std::string, std::string> file;
  std::string config_path = cli.count("config") ? cli["config"] : "";
  if (config_path.empty())
    if (const char* e = std::getenv("KPORT_CONFIG")) config_path = e;
  if (!config_path.empty()) {
    std::ifstream in(config_path);
    if (!in) return make_error(Errc::invalid_argument, "cannot read config file " + config_path);
    std::string line;
    for (int lineno = 1; std::getline(in, line); ++lineno) {
      std::string_view l = trim(line);
      if (l.empty() || l.front() == '#') continue;
      auto eq = l.find('=');
      if (eq == std::string_view::npos)
        return make_error(Errc::invalid_argument,
                          config_path + ":" + std::to_string(lineno) + ": expected name = value");
      std::string name(trim(l.substr(0, eq)));
      if (!find(name) || name == "config")
        return make_error(Errc::invalid_argument,
                          config_path + ":" + std::to_string(lineno) + ": unknown option '" + name + "'");
      file[name] = std::string(trim(l.substr(eq + 1)));
    }
  }
  for (auto& s : m_specs) {
    if (auto it = cli.find(s.name); it != cli.end()) {
      KPORT_TRY(set(s, it->second, "command line"));
    } else if (const char* e = s.env.empty() ? nullptr : std::getenv(s.env.c_str())) {
      KPORT_TRY(set(s, e, "environment (" + s.env + ")"));
    } else if (auto f = file.find(s.name); f != file.end()) {
      KPORT_TRY(set(s, f->second, "config file"));
    }
  }
  return {};
}

std::string Options::help_text() const {
  std::string out = "usage: " + m_program + " [options]\n" + m_summary + "\n\noptions:\n";
  out += option_lines(true);
  // Padded like option_lines(): the help column starts at 30.
  out += std::string("  --version").append(19, ' ') + "print the version, git commit and build date\n";
  out += std::string("  --help").append(22, ' ') + "print this help\n";
  return out;
}

std::string Options::options_text() const { return option_lines(false); }

std::string Options::option_lines(bool with_config) const {
  std::string out;
  for (const auto& s : m_specs) {
    if (!with_config && s.name == "config") continue;
    std::string left = "  --" + s.name + (s.is_flag ? "" : " VALUE");
    if (left.size() < 30)
      left.resize(30, ' ');
    else
      left += "\n" + std::string(30, ' ');
    out += left + s.help;
    if (!s.env.empty()) out += " [env " + s.env + "]";
    if (!s.value.empty() && s.name != "config") out += " (default " + s.value + ")";
    out += "\n";
  }
  return out;
}

std::string Options::version_text() const { return kport::version_text(m_program); }

const std::string& Options::get(std::string_view name) const { return at(name).value; }
bool Options::flag(std::string_view name) const { return at(name).value == "true"; }
const std::string& Options::source(std::string_view name) const { return at(name).source; }

Result<std::int64_t> Options::integer(std::string_view name, std::int64_t min, std::int64_t max) const {
  const auto& s = at(name);
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.value.data(), s.value.data() + s.value.size(), v);
  if (ec != std::errc() || end != s.value.data() + s.value.size() || v < min || v > max)
    return make_error(Errc::invalid_argument, "--" + s.name + " (from " + s.source + ") must be an integer in [" +
                                                  std::to_string(min) + ", " + std::to_string(max) + "], got '" +
                                                  s.value + "'");
  return v;
}

Result<std::pair<std::string, std::uint16_t>> parse_host_port(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return make_error(Errc::invalid_argument, quoted(text) + " is not HOST:PORT (e.g. 127.0.0.1:8080)");
  std::string_view host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned p = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (ec != std::errc() || end != port.data() + port.size() || p > 65535 || port.empty())
    return make_error(Errc::invalid_argument, "port " + quoted(port) + " in " + quoted(text) + " is not 0..65535");
  return std::pair<std::string, std::uint16_t>{std::string(host), static_cast<std::uint16_t>(p)};
}

}  // namespace kport
