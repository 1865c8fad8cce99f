// The planner: for one target, which variants apply, which do not and why, and which
// variant each op family falls back to.
//
// A variant applies when the target has every feature it declares. Per family, the
// variants that apply are ranked most specialized first (more declared features, then
// id); the first is the family's choice. The choice is a *fallback* when a more
// specialized variant of that family exists but does not apply: e.g. gemm on sm_120
// falls back to mma_sync because wgmma_tma and tcgen05 need features it lacks.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "kport/porting/catalog.h"
#include "kport/porting/variants.h"

namespace kport::porting {

struct NotApplicable {
  VariantSpec variant;
  std::vector<std::string> missing;  // declared features the target lacks
  std::string reason() const;        // "missing features: wgmma, setmaxnreg"
};

struct FamilyPlan {
  std::string family;
  std::string chosen;                   // variant id chosen for the target; empty if none applies
  bool is_fallback = false;             // a more specialized variant exists but does not apply
  std::vector<std::string> instead_of;  // those more specialized variant ids
  std::string explanation;              // one sentence for humans
};

struct Plan {
  std::string target;
  std::vector<VariantSpec> applicable;  // sorted by id
  std::vector<NotApplicable> not_applicable;
  std::vector<FamilyPlan> families;  // sorted by family

  const FamilyPlan* family(const std::string& name) const;
};

Plan make_plan(const TargetEntry& target, const std::vector<VariantSpec>& variants);

}  // namespace kport::porting
