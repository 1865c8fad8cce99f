// kport-harness-<target>: lists, checks and times the kernel instances built for one target.
// Driven by kport-runner as a subprocess; JSON on stdout, exit codes in json_out.h.
#include <exception>
#include <string>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "json_out.h"
#include "target_info.h"
#include "version.h"

int main(int argc, char** argv) {
  using namespace kport::harness;
  const std::vector<std::string> args(argv + 1, argv + argc);
  Options options;
  if (auto err = parse_args(args, options)) return report_error(*err);
  try {
    if (options.command == "list") return run_list(options);
    if (options.command == "device") return run_device(options);
    if (options.command == "check") return run_check(options);
    if (options.command == "bench") return run_bench(options);
    if (options.command == "--version") {
      print_json(version_json(target_info().target));
      return k_exit_ok;
    }
    print_json(Json{{"usage", usage_text()}});
    return k_exit_ok;
  } catch (const std::exception& e) {  // a broken invariant: still answer in JSON
    return report_error({"internal", e.what(), k_exit_cuda});
  }
}
