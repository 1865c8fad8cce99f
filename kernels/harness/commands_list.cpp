#include <algorithm>

#include "commands.h"
#include "declared_family.h"
#include "shapes.h"
#include "kport/kernels/registry.h"
#include "target_info.h"

namespace kport::harness {

using kport::kernels::registry;

int run_list(const Options& o) {
  if (auto err = check_declared_families(registry())) return report_error(*err);
  const TargetInfo& info = target_info();
  // A variant of a family that is not kport's needs that family's FamilyDef in the binary
  // (kport_harness_family compiles it into every build of the harness).
  for (const VariantBuild& v : info.built) {
    const std::string family = v.id.substr(0, v.id.find('.'));
    if (!parse_family(family) && kport::kernels::find_family(family) == nullptr)
      return report_error({"bad_family",
                           "variant " + v.id + " is of family '" + family +
                               "', but no FamilyDef of that name is registered in this harness: define it in "
                               "the sources of kport_harness_family(... FAMILY " +
                               family + " SOURCES ...) and register it with KPORT_REGISTER_FAMILY",
                           k_exit_cuda});
  }
  Json doc;
  doc["target"] = info.target;
  doc["arch"] = info.arch;
  doc["target_features"] = info.features;
  doc["max_dynamic_smem_per_block"] = info.max_dynamic_smem_per_block;
  Json variants = Json::array();
  for (const VariantBuild& v : info.built) {
    Json instances = Json::array();
    for (const auto* inst : registry()) {
      const std::string id = std::string(kport::kernels::family_name(*inst)) + "." + inst->variant;
      if (id != v.id) continue;
      if (!o.filter.empty() && inst->name.find(o.filter) == std::string::npos) continue;
      Json dtypes = Json::array();
      for (auto t : inst->dtypes) dtypes.push_back(kport::kernels::dtype_name(t));
      Json config = Json::parse(inst->config_json.empty() ? "{}" : inst->config_json, nullptr, false);
      instances.push_back({{"name", inst->name},
                           {"family", kport::kernels::family_name(*inst)},
                           {"variant", inst->variant},
                           {"features", inst->features},
                           {"dtypes", dtypes},
                           {"config", config.is_discarded() ? Json(inst->config_json) : config}});
    }
    variants.push_back({{"variant", v.id}, {"features", v.features}, {"status", "built"}, {"instances", instances}});
  }
  for (const VariantBuild& v : info.not_applicable)
    variants.push_back({{"variant", v.id},
                        {"features", v.features},
                        {"status", v.reason.rfind("excluded", 0) == 0 ? "excluded" : "not_applicable"},
                        {"reason", v.reason}});
  doc["variants"] = variants;
  doc["instance_count"] = registry().size();
  // The families the library declares (only when it declares some, so kport's own list is
  // unchanged).
  if (!kport::kernels::family_registry().empty()) {
    Json families = Json::array();
    for (const auto* def : kport::kernels::family_registry()) families.push_back(family_json(*def));
    doc["families"] = families;
  }
  print_json(doc);
  return k_exit_ok;
}

}  // namespace kport::harness
