#include <algorithm>

#include "commands.h"
#include "kport/kernels/registry.h"
#include "target_info.h"

namespace kport::harness {

using kport::kernels::registry;

int run_list(const Options& o) {
  const TargetInfo& info = target_info();
  Json doc;
  doc["target"] = info.target;
  doc["arch"] = info.arch;
  doc["target_features"] = info.features;
  doc["max_dynamic_smem_per_block"] = info.max_dynamic_smem_per_block;
  Json variants = Json::array();
  for (const VariantBuild& v : info.built) {
    Json instances = Json::array();
    for (const auto* inst : registry()) {
      const std::string id = std::string(kport::kernels::family_name(inst->family)) + "." + inst->variant;
      if (id != v.id) continue;
      if (!o.filter.empty() && inst->name.find(o.filter) == std::string::npos) continue;
      Json dtypes = Json::array();
      for (auto t : inst->dtypes) dtypes.push_back(kport::kernels::dtype_name(t));
      Json config = Json::parse(inst->config_json.empty() ? "{}" : inst->config_json, nullptr, false);
      instances.push_back({{"name", inst->name},
                           {"family", kport::kernels::family_name(inst->family)},
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
  print_json(doc);
  return k_exit_ok;
}

}  // namespace kport::harness
