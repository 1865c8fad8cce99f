// A build record is what happened and wins over the planner; the planner speaks for a
// variant the stage commit has no record of (a target never built, a variant added
// since), so a new target's matrix is right before its first build.
#include "kport/porting/bringup.h"

#include <algorithm>

#include "kport/porting/planner.h"

namespace kport::porting {

const char* to_string(Stage s) {
  switch (s) {
    case Stage::not_applicable: return "not_applicable";
    case Stage::pending: return "pending";
    case Stage::build_failed: return "build_failed";
    case Stage::builds: return "builds";
    case Stage::resources_clean: return "resources_clean";
    case Stage::numerics_failed: return "numerics_failed";
    case Stage::numerics_passed: return "numerics_passed";
    case Stage::measured: return "measured";
    case Stage::selected_best: return "selected_best";
  }
  return "?";
}

void StageCounts::add(const VariantStage& v) {
  ++variants;
  applicable += v.applicable;
  builds += v.built;
  resources_clean += v.resources_clean;
  numerics_passed += v.numerics_passed;
  measured += v.measured;
  selected_best += v.selected_best;
}

namespace {

// "missing features: ..." from the planner; empty when every declared feature is there.
std::string planner_reason(const TargetFacts& t, const VariantFacts& f) {
  if (!f.features) return {};
  TargetEntry entry;
  entry.name = t.name;
  entry.features = t.features;
  std::sort(entry.features.begin(), entry.features.end());  // TargetEntry::has searches
  VariantSpec spec;
  spec.family = f.family;
  spec.variant = f.variant;
  spec.features = *f.features;
  Plan plan = make_plan(entry, {spec});
  return plan.not_applicable.empty() ? std::string() : plan.not_applicable.front().reason();
}

VariantStage stage_of(const TargetFacts& t, const VariantFacts& f) {
  VariantStage s;
  s.family = f.family;
  s.variant = f.variant;
  if (!f.build) {
    s.reason = planner_reason(t, f);
    s.applicable = s.reason.empty();
    s.stage = s.applicable ? Stage::pending : Stage::not_applicable;
    return s;
  }
  if (*f.build == BuildOutcome::not_applicable) {
    s.applicable = false;
    s.stage = Stage::not_applicable;
    s.reason = f.build_message;
    return s;
  }
  if (*f.build != BuildOutcome::ok) {
    s.stage = Stage::build_failed;
    s.reason = f.build_message.substr(0, f.build_message.find('\n'));
    return s;
  }
  s.built = true;
  s.resources_clean = f.spill_bytes.value_or(0) == 0;
  s.numerics_failed = f.failed > 0;
  s.numerics_passed = f.passed > 0 && !s.numerics_failed;
  s.measured = s.numerics_passed && f.measured > 0;
  s.selected_best = s.measured && f.selected > 0;
  s.stage = s.selected_best     ? Stage::selected_best
            : s.measured        ? Stage::measured
            : s.numerics_passed ? Stage::numerics_passed
            : s.numerics_failed ? Stage::numerics_failed
            : s.resources_clean ? Stage::resources_clean
                                : Stage::builds;
  return s;
}

}  // namespace

BringupStages decide_stages(const TargetFacts& target, const std::vector<VariantFacts>& variants) {
  BringupStages out;
  out.target = target.name;
  out.commit = target.stage_commit;
  for (const auto& f : variants) {
    VariantStage s = stage_of(target, f);
    out.counts.add(s);
    out.families[s.family].add(s);
    out.variants.push_back(std::move(s));
  }
  return out;
}

}  // namespace kport::porting
