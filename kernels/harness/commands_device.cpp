#include "commands.h"
#include "gpu_context.h"

namespace kport::harness {

int run_device(const Options&) {
  GpuContext ctx;
  if (auto err = open_gpu(ctx, false, false)) return report_error(*err);
  print_json(device_json(ctx));
  return k_exit_ok;
}

}  // namespace kport::harness
