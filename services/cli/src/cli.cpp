// kport's entry point: the shared options, the command table, dispatch.
#include "kport/cli/cli.h"

#include <ostream>
#include <string>

#include "commands.h"

namespace kport::cli {
namespace {

const Command* const k_commands[] = {
#define KPORT_CLI_ENTRY(n) &n##_command,
    KPORT_CLI_COMMANDS(KPORT_CLI_ENTRY)
#undef KPORT_CLI_ENTRY
};

std::string summary() {
  std::string s = "kport command-line client.\n\nCommands:\n";
  for (const Command* c : k_commands) {
    std::string line = "  " + std::string(c->name) + " " + c->usage;
    if (line.size() < 48)
      line.resize(48, ' ');
    else
      line += "\n" + std::string(48, ' ');
    s += line + c->summary + "\n";
  }
  s +=
      "\nEvery command takes --json to print the coordinator's answer as JSON; kport COMMAND --help prints its usage.\n"
      "Exit codes: 0 success; 1 a build/job failed; 2 bad input; 3 coordinator unreachable or refused.";
  return s;
}

// `kport CMD --help`: the command's usage, summary and its own options; the shared
// ones are on kport --help.
std::string command_help(const Command& c) {
  Options own("kport " + std::string(c.name), c.summary);
  if (c.declare) c.declare(own);
  std::string out = "usage: kport " + std::string(c.name) + " " + c.usage + "\n" + c.summary + "\n";
  if (std::string lines = own.options_text(); !lines.empty()) out += "\noptions:\n" + lines;
  out +=
      "\nshared options: --server URL, --token TOKEN, --json, --commit REV, --target TARGET, --repo NAME "
      "(see kport --help)\n";
  return out;
}

const Command* find_command(std::string_view name) {
  for (const Command* c : k_commands)
    if (name == c->name) return c;
  return nullptr;
}

}  // namespace

void print_json(Context& ctx, const boost::json::value& v) { ctx.out << boost::json::serialize(v) << "\n"; }

bool check_args(Context& ctx, const Command& c, std::size_t min, std::size_t max) {
  if (ctx.args.size() >= min && ctx.args.size() <= max) return true;
  ctx.err << "kport " << c.name << ": "
          << (ctx.args.size() < min ? "missing argument" : "unexpected argument '" + ctx.args[max] + "'")
          << "; usage: kport " << c.name << " " << c.usage << "\n";
  return false;
}

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  Options o("kport", summary());
  o.add("server", "KPORT_SERVER", "http://127.0.0.1:8080", "coordinator URL")
      .add("token", "KPORT_TOKEN", "", "admin token (build and trigger need it)")
      .add("ca-file", "KPORT_CA_FILE", "",
           "https: PEM CA certificate(s) the coordinator's certificate must chain to (default: the system trust store)")
      .add_flag("json", "", false, "print the answer as JSON")
      .add("commit", "", "", "commit (sha, branch or tag)")
      .add("target", "", "", "nvcc target, e.g. sm_100a")
      .add("repo", "", "", "repository name (default: the only one registered)");
  for (const Command* c : k_commands)
    if (c->declare) c->declare(o);
  if (auto st = o.parse(argc, argv); !st.ok()) {
    err << "kport: " << st.error().message << "\n";
    return k_exit_usage;
  }
  if (o.version_requested()) {
    out << o.version_text();
    return k_exit_ok;
  }
  if (o.positional().empty()) {
    (o.help_requested() ? out : err) << o.help_text();
    return o.help_requested() ? k_exit_ok : k_exit_usage;
  }
  const std::string& name = o.positional()[0];
  const Command* c = find_command(name);
  if (!c) {
    err << "kport: unknown command '" << name << "'; try kport --help\n";
    return k_exit_usage;
  }
  if (o.help_requested()) {
    out << command_help(*c);
    return k_exit_ok;
  }
  Api api(o.get("server"), o.get("token"), o.get("ca-file"));
  Context ctx{api, o, {o.positional().begin() + 1, o.positional().end()}, o.flag("json"), out, err};
  return c->run(ctx);
}

}  // namespace kport::cli
