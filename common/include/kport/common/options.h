// Command-line, environment and config-file options for kport executables.
//
// Each option is declared once (name, environment variable, default, help) and read,
// highest precedence first, from: the command line (--name VALUE or --name=VALUE),
// the environment, a config file (`name = value` lines, '#' comments) given with
// --config, then the default. Flags (boolean options) take no value on the command
// line (--name sets true, --no-name sets false) and "true/false/1/0/yes/no" elsewhere.
// Every program answers --help (help_text()) and --version (version_text(): name,
// version, git commit and build date).
//
// Not thread-safe; used once at start-up.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/result.h"

namespace kport {

class Options {
 public:
  Options(std::string program, std::string summary);

  Options& add(std::string name, std::string env, std::string default_value, std::string help);
  Options& add_flag(std::string name, std::string env, bool default_value, std::string help);

  // Parses argv (argv[0] skipped), the environment and the --config file. `--help`
  // sets help_requested(). Errors (invalid_argument) name the offending option.
  Status parse(int argc, const char* const* argv);

  bool help_requested() const { return m_help; }
  std::string help_text() const;
  // The declared options alone, one "  --name VALUE   help" line each (no --config,
  // --version, --help): for a help page that frames them itself.
  std::string options_text() const;
  // `--version` was given; print version_text() and exit 0 (before validating anything else).
  bool version_requested() const { return m_version; }
  std::string version_text() const;
  const std::string& program() const { return m_program; }

  const std::string& get(std::string_view name) const;
  bool flag(std::string_view name) const;
  // Integer value, or an invalid_argument error naming the option.
  Result<std::int64_t> integer(std::string_view name, std::int64_t min, std::int64_t max) const;
  // Where a value came from: "command line", "environment (KPORT_DB)", "config file", "default".
  const std::string& source(std::string_view name) const;
  // Positional arguments left after the options.
  const std::vector<std::string>& positional() const { return m_positional; }

 private:
  struct Spec {
    std::string name, env, value, help, source;
    bool is_flag = false;
  };
  Spec* find(std::string_view name);
  std::string option_lines(bool with_config) const;
  const Spec& at(std::string_view name) const;
  Status set(Spec& s, std::string_view value, std::string source);

  std::string m_program, m_summary;
  std::vector<Spec> m_specs;
  std::vector<std::string> m_positional;
  bool m_help = false;
  bool m_version = false;
};

// Splits "host:port" ("[::1]:80" for IPv6). Port 0 is allowed (pick a free one).
Result<std::pair<std::string, std::uint16_t>> parse_host_port(std::string_view text);

}  // namespace kport
