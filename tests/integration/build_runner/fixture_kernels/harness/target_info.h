// What a harness binary was built for: its nvcc target, the catalog entry of that target
// (porting/catalog/targets.json) and which variants were built or left out and why.
// Generated per target at configure time (kport_write_target_info).
#pragma once

#include <string>
#include <vector>

namespace kport::harness {

struct VariantBuild {
  std::string id;        // "gemm.wgmma_tma"
  std::string features;  // what it needs, comma separated
  std::string reason;    // why it is not built here; empty when built
};

struct TargetInfo {
  std::string target;  // "sm_90a"
  std::string arch;    // "9.0"
  long max_dynamic_smem_per_block;
  std::vector<std::string> features;
  std::vector<VariantBuild> built;
  std::vector<VariantBuild> not_applicable;
};

const TargetInfo& target_info();

}  // namespace kport::harness
