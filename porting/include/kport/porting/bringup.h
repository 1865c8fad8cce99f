// Bring-up stages (docs/DESIGN.md, "Bring-up stage"): how far each variant got on a target.
// The one rule behind /api/v1/targets/{t}/bringup, `kport bringup`, the dashboard's
// target page and the overview's counts.
//
// Stages are those of the target's *stage commit*: its latest commit that has a build
// (or the commit asked for). What an older commit reached says nothing about the code
// that is there now; the history of first times is kept apart, for the burndown.
//   not_applicable   the build record says so; with no record, the planner (the variant
//                    declares a feature the target lacks)
//   pending          applicable, not built at the stage commit
//   build_failed     its build at the stage commit failed (compile error, timeout)
//   builds           built; resources_clean: built without register spills
//   numerics_failed  a check at the stage commit failed, crashed or timed out: never
//                    "numerics passed", however many other checks passed
//   numerics_passed  checks passed and none failed; measured: with a median time too;
//   selected_best    and fastest for some (GPU model, dtype, shape)
// Results count only on GPUs that run the target's code (the caller selects them).
// Pure and thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kport/porting/verdict.h"

namespace kport::porting {

enum class Stage {
  not_applicable,
  pending,
  build_failed,
  builds,
  resources_clean,
  numerics_failed,
  numerics_passed,
  measured,
  selected_best
};
const char* to_string(Stage s);

struct TargetFacts {
  std::string name;
  std::vector<std::string> features;        // the catalog's features of the target
  std::optional<std::string> stage_commit;  // none: never built
};

// One variant at the stage commit.
struct VariantFacts {
  std::string family, variant;
  std::optional<std::vector<std::string>> features;  // declared; none when unknown
  std::optional<BuildOutcome> build;                 // its build record; none: no record
  std::string build_message;                         // why not applicable / failed
  std::optional<std::int64_t> spill_bytes;
  // Latest result per (GPU model, instance, dtype, shape).
  std::int64_t passed = 0, failed = 0, measured = 0;  // failed: failed, crashed, timeout
  std::int64_t selected = 0;                          // shapes where it is the fastest
};

struct VariantStage {
  std::string family, variant;
  Stage stage = Stage::pending;
  bool applicable = true, built = false, resources_clean = false;
  bool numerics_passed = false, numerics_failed = false, measured = false, selected_best = false;
  std::string reason;  // not applicable: the missing features; build failed: the first line
};

struct StageCounts {
  std::int64_t variants = 0, applicable = 0, builds = 0, resources_clean = 0, numerics_passed = 0, measured = 0,
               selected_best = 0;
  void add(const VariantStage& v);
};

struct BringupStages {
  std::string target;
  std::optional<std::string> commit;   // the stage commit
  std::vector<VariantStage> variants;  // in input order
  StageCounts counts;
  std::map<std::string, StageCounts> families;
};

BringupStages decide_stages(const TargetFacts& target, const std::vector<VariantFacts>& variants);

}  // namespace kport::porting
