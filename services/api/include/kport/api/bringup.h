// A target to register (`TargetInput`: PUT /api/v1/targets/{t}, written by the watcher's
// toolkit watch), a target as the coordinator answers it (`TargetInfo`: GET
// /api/v1/targets, a bring-up's target) and a target's bring-up (`BringupAnswer`: GET /api/v1/targets/{t}/bringup): how
// far every variant got, stage by stage, at the target's latest commit with a build. The
// coordinator writes them from porting::decide_stages; `kport bringup` reads the bring-up
// and the watcher's toolkit watch the targets. The wire forms are the contracts the
// OpenAPI document describes (`Target`, `Bringup`): every field always present, null when
// unset, in the order written here.
//
// Reading is strict: a stage kport does not know, a count that is not a non-negative
// integer or a field of the wrong type is an invalid_argument Error naming the field
// ("field 'variants[2].stage' must be one of ..."); unknown fields are ignored. Values; no
// thread affinity.
#pragma once

#include <boost/json.hpp>

#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/api/fields.h"
#include "kport/api/job.h"

namespace kport::api {

// ---- a target ------------------------------------------------------------------------

struct TargetInfo {
  std::string name;                                     // sm_90a
  std::string arch;                                     // the compute capability its SASS runs on, "9.0"
  boost::json::value features = boost::json::object{};  // {"wgmma": true, ...} as registered
  std::string toolkit;                                  // the toolkit that first listed it
  std::optional<std::string> first_seen;                // ISO 8601 UTC
  bool is_new = false;                                  // flagged new until acknowledged
};

inline boost::json::object to_json(const TargetInfo& t) {
  return boost::json::object{{"name", t.name},
                             {"arch", t.arch},
                             {"features", t.features},
                             {"toolkit", t.toolkit},
                             {"first_seen", detail::or_null(t.first_seen)},
                             {"is_new", t.is_new}};
}

inline TargetInfo read_target_info(Fields& f) {
  TargetInfo t;
  t.name = f.str("name", 64);
  if (f.ok() && !detail::is_target_name(t.name)) f.fail("name", "must be an nvcc target such as sm_90a");
  t.arch = f.opt_str("arch", 16).value_or("");
  t.features = f.json_value("features");
  t.toolkit = f.opt_str("toolkit", 64).value_or("");
  t.first_seen = f.opt_str("first_seen", 64);
  t.is_new = f.boolean("is_new", false);
  return t;
}

// GET /api/v1/targets: {"items": [...]}.
inline Result<std::vector<TargetInfo>> parse_target_list(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), [](Fields& f) { return read_list(f, "items", read_target_info); });
}

// PUT /api/v1/targets/{t}: a target to register (the watcher's toolkit watch, an
// operator), read by the coordinator; the name is the path's.
struct TargetInput {
  std::string arch;                                     // required, "10.0"
  boost::json::value features = boost::json::object{};  // {"tcgen05": true, ...} or ["tcgen05", ...]
  std::string toolkit;
  std::vector<std::string> check_arches;  // the GPU arches that check it; empty: leave them as they are
};

inline boost::json::object to_json(const TargetInput& t) {
  boost::json::object o{{"arch", t.arch}, {"features", t.features}, {"toolkit", t.toolkit}};
  if (!t.check_arches.empty()) {
    boost::json::array a;
    for (const auto& x : t.check_arches) a.emplace_back(x);
    o["check_arches"] = std::move(a);
  }
  return o;
}

inline TargetInput read_target_input(Fields& f) {
  TargetInput t;
  t.arch = f.str("arch", 16);
  t.features = f.json_value("features");
  t.toolkit = f.opt_str("toolkit", 64).value_or("");
  t.check_arches = f.str_list("check_arches", 32);
  return t;
}

inline Result<TargetInput> parse_target_input(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_target_input);
}

// ---- a bring-up ----------------------------------------------------------------------

// The stages in order (porting::Stage, by the same names).
inline constexpr std::array<std::string_view, 9> k_bringup_stages{
    "not_applicable",  "pending",         "build_failed", "builds",       "resources_clean",
    "numerics_failed", "numerics_passed", "measured",     "selected_best"};

// How many variants reached each stage (of a target, or of one family).
struct StageCounts {
  std::int64_t variants = 0, applicable = 0, builds = 0, resources_clean = 0, numerics_passed = 0, measured = 0,
               selected_best = 0;
};

inline boost::json::object to_json(const StageCounts& c) {
  return boost::json::object{{"variants", c.variants},
                             {"applicable", c.applicable},
                             {"builds", c.builds},
                             {"resources_clean", c.resources_clean},
                             {"numerics_passed", c.numerics_passed},
                             {"measured", c.measured},
                             {"selected_best", c.selected_best}};
}

inline StageCounts read_stage_counts(Fields& f) {
  StageCounts c;
  auto count = [&f](std::string_view key) { return f.opt_int(key, 0, INT64_MAX).value_or(0); };
  c.variants = count("variants");
  c.applicable = count("applicable");
  c.builds = count("builds");
  c.resources_clean = count("resources_clean");
  c.numerics_passed = count("numerics_passed");
  c.measured = count("measured");
  c.selected_best = count("selected_best");
  return c;
}

struct FamilyStages {
  std::string family;
  StageCounts counts;
};

inline boost::json::object to_json(const FamilyStages& s) {
  boost::json::object o = to_json(s.counts);
  o["family"] = s.family;
  return o;
}

inline FamilyStages read_family_stages(Fields& f) {
  FamilyStages s;
  s.counts = read_stage_counts(f);
  s.family = f.str("family", 64);
  return s;
}

// One variant's stage, the facts it was decided from and why it stopped there.
struct VariantStage {
  std::string family, variant;
  std::string stage;  // one of k_bringup_stages
  bool not_applicable = false, built = false, resources_clean = false, numerics_passed = false, numerics_failed = false,
       measured = false, selected_best = false;
  std::string reason;
  std::optional<std::string> build_status;  // its build record's status at the commit
  std::optional<std::string> commit;        // the commit its build record is of
  std::int64_t results_passed = 0, results_failed = 0;
};

inline boost::json::object to_json(const VariantStage& v) {
  using detail::or_null;
  return boost::json::object{{"family", v.family},
                             {"variant", v.variant},
                             {"stage", v.stage},
                             {"not_applicable", v.not_applicable},
                             {"built", v.built},
                             {"resources_clean", v.resources_clean},
                             {"numerics_passed", v.numerics_passed},
                             {"numerics_failed", v.numerics_failed},
                             {"measured", v.measured},
                             {"selected_best", v.selected_best},
                             {"reason", v.reason},
                             {"build_status", or_null(v.build_status)},
                             {"commit", or_null(v.commit)},
                             {"results_passed", v.results_passed},
                             {"results_failed", v.results_failed}};
}

inline VariantStage read_variant_stage(Fields& f) {
  VariantStage v;
  v.family = f.str("family", 64);
  v.variant = f.str("variant", 128);
  v.stage = f.str("stage", 32);
  bool known = false;
  for (auto s : k_bringup_stages) known = known || s == v.stage;
  if (f.ok() && !known)
    f.fail("stage",
           "must be one of not_applicable, pending, build_failed, builds, resources_clean, numerics_failed, "
           "numerics_passed, measured, selected_best");
  v.not_applicable = f.boolean("not_applicable", false);
  v.built = f.boolean("built", false);
  v.resources_clean = f.boolean("resources_clean", false);
  v.numerics_passed = f.boolean("numerics_passed", false);
  v.numerics_failed = f.boolean("numerics_failed", false);
  v.measured = f.boolean("measured", false);
  v.selected_best = f.boolean("selected_best", false);
  v.reason = f.opt_str("reason", 1 << 16).value_or("");
  v.build_status = f.opt_str("build_status", 32);
  v.commit = f.opt_str("commit", 64);
  v.results_passed = f.opt_int("results_passed", 0, INT64_MAX).value_or(0);
  v.results_failed = f.opt_int("results_failed", 0, INT64_MAX).value_or(0);
  return v;
}

struct BringupAnswer {
  TargetInfo target;
  std::optional<std::string> commit;  // the commit the stages are of; none before the first build
  // The library (repository) the stages are of: the one asked for (?repo=), else the
  // stage commit's; none before the first build. `repositories`: every library with a
  // build of the target, each answered with ?repo=NAME.
  std::optional<std::string> repo;
  std::vector<std::string> repositories;
  StageCounts progress;
  std::vector<FamilyStages> families;  // by family name
  std::vector<VariantStage> variants;
};

inline boost::json::object to_json(const BringupAnswer& b) {
  auto each = [](const auto& x) { return to_json(x); };
  return boost::json::object{
      {"target", to_json(b.target)},
      {"commit", detail::or_null(b.commit)},
      {"repo", detail::or_null(b.repo)},
      {"repositories", write_list(b.repositories, [](const std::string& r) { return boost::json::value(r); })},
      {"progress", to_json(b.progress)},
      {"families", write_list(b.families, each)},
      {"variants", write_list(b.variants, each)}};
}

inline BringupAnswer read_bringup_answer(Fields& f) {
  BringupAnswer b;
  bool has_target = false;
  b.target = read_object(f, "target", read_target_info, &has_target);
  if (f.ok() && !has_target) f.fail("target", "is required (an object)");
  b.commit = f.opt_str("commit", 64);
  b.repo = f.opt_str("repo", 128);
  b.repositories = f.str_list("repositories");
  b.progress = read_object(f, "progress", read_stage_counts);
  b.families = read_list(f, "families", read_family_stages);
  b.variants = read_list(f, "variants", read_variant_stage);
  return b;
}

inline Result<BringupAnswer> parse_bringup_answer(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_bringup_answer);
}

}  // namespace kport::api
