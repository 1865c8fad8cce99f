// Placeholder for the commands that need a GPU; replaced by the real drivers.
#include "commands.h"

namespace kport::harness {
static int not_yet(const Options& o) {
  return report_error({"not_implemented", "command '" + o.command + "' is not built yet",
                       k_exit_usage});
}
int run_device(const Options& o) { return not_yet(o); }
int run_check(const Options& o) { return not_yet(o); }
int run_bench(const Options& o) { return not_yet(o); }
}  // namespace kport::harness
