#include "commands.h"
#include "kport/kernels/registry.h"
#include "case_selection.h"
#include "target_info.h"

namespace kport::harness {

int print_plan(const Options& o, const std::vector<Case>& cases) {
  Json plan = Json::array();
  for (const Case& c : cases)
    plan.push_back({{"instance", c.instance->name},
                    {"family", kport::kernels::family_name(*c.instance)},
                    {"variant", c.instance->variant},
                    {"dtype", kport::kernels::dtype_name(c.dtype)},
                    {"shape_text", shape_string(c.shape)}});
  print_json(Json{{"command", o.command}, {"target", target_info().target}, {"plan", plan}});
  return k_exit_ok;
}

}  // namespace kport::harness
