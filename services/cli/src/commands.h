// The CLI's command table. A command is one file, src/cmd_<name>.cpp, defining
//
//   extern const Command <name>_command = {"name", "usage", "summary", declare, run};
//
// and one line in KPORT_CLI_COMMANDS below (and its file in CMakeLists.txt).
// run() answers an exit code (k_exit_*); it prints results to ctx.out (JSON with --json)
// and messages to ctx.err.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "api.h"
#include "kport/common/options.h"

namespace kport::cli {

struct Context {
  Api& api;
  const Options& opts;
  std::vector<std::string> args;  // positional arguments after the command name
  bool json = false;
  std::ostream& out;
  std::ostream& err;
};

struct Command {
  const char* name;
  const char* usage;          // arguments after the name, e.g. "TARGET [--commit REV]"
  const char* summary;        // one line for kport --help, and the head of kport NAME --help
  void (*declare)(Options&);  // the command's own options (may be null)
  int (*run)(Context&);
};

// Every command, in the order --help lists them. One line registers a command.
#define KPORT_CLI_COMMANDS(X) \
  X(build)                    \
  X(trigger)                  \
  X(best)                     \
  X(best_request)             \
  X(families)                 \
  X(gpus)                     \
  X(bringup)                  \
  X(runners)                  \
  X(logs)                     \
  X(status)                   \
  X(bisect)                   \
  X(admin)

#define KPORT_CLI_DECLARE(n) extern const Command n##_command;
KPORT_CLI_COMMANDS(KPORT_CLI_DECLARE)
#undef KPORT_CLI_DECLARE

// Writes a JSON value to ctx.out followed by a newline (the --json form of a command).
void print_json(Context& ctx, const boost::json::value& v);

// A left-aligned text table: a header row, then the rows, columns sized to fit.
std::string format_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// Rejects more positional arguments than `max`; prints the usage and returns false.
bool check_args(Context& ctx, const Command& c, std::size_t min, std::size_t max);

}  // namespace kport::cli
