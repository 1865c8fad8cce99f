// Stored feature lists are JSON the store accepted; a malformed one reads as "unknown",
// which the rule treats as applicable until a build record says otherwise, rather than
// hiding a variant.
#include "bringup_stages.h"

#include "codec.h"

namespace kport::coordinator {
namespace json = boost::json;

namespace {

std::optional<json::value> parse(const std::string& text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec) return std::nullopt;
  return v;
}

std::optional<porting::BuildOutcome> build_outcome(const std::optional<std::string>& status) {
  if (!status) return std::nullopt;
  if (*status == "ok") return porting::BuildOutcome::ok;
  if (*status == "not_applicable") return porting::BuildOutcome::not_applicable;
  if (*status == "timeout") return porting::BuildOutcome::timeout;
  return porting::BuildOutcome::compile_error;
}

}  // namespace

porting::TargetFacts target_facts(const db::TargetBoard& board) {
  porting::TargetFacts t;
  t.name = board.target.name;
  t.stage_commit = board.stage_commit;
  if (auto v = parse(board.target.features_json)) {
    if (v->is_object()) {
      for (const auto& [name, on] : v->as_object())
        if (on.is_bool() && on.as_bool()) t.features.emplace_back(name);
    } else if (v->is_array()) {
      for (const auto& f : v->as_array())
        if (f.is_string()) t.features.emplace_back(f.as_string());
    }
  }
  return t;
}

std::vector<porting::VariantFacts> variant_facts(const db::TargetBoard& board) {
  std::vector<porting::VariantFacts> out;
  out.reserve(board.variants.size());
  for (const auto& v : board.variants) {
    porting::VariantFacts f;
    f.family = v.family;
    f.variant = v.variant;
    if (v.features_json) {
      auto parsed = parse(*v.features_json);
      if (parsed && parsed->is_array()) {
        std::vector<std::string> features;
        for (const auto& x : parsed->as_array())
          if (x.is_string()) features.emplace_back(x.as_string());
        f.features = std::move(features);
      }
    }
    f.build = build_outcome(v.build_status);
    f.build_message = v.build_message;
    f.spill_bytes = v.spill_bytes;
    f.passed = v.passed;
    f.failed = v.failed;
    f.measured = v.measured;
    f.selected = v.selected;
    out.push_back(std::move(f));
  }
  return out;
}

porting::BringupStages stages_of(const db::TargetBoard& board) {
  return porting::decide_stages(target_facts(board), variant_facts(board));
}

api::StageCounts to_api(const porting::StageCounts& c) {
  return api::StageCounts{c.variants,        c.applicable, c.builds,       c.resources_clean,
                          c.numerics_passed, c.measured,   c.selected_best};
}

json::object counts_json(const porting::StageCounts& c) { return api::to_json(to_api(c)); }

json::array families_json(const porting::BringupStages& s) {
  json::array out;
  for (const auto& [family, c] : s.families) out.push_back(api::to_json(api::FamilyStages{family, to_api(c)}));
  return out;
}

api::BringupAnswer bringup_answer(const db::TargetBoard& board, const porting::BringupStages& stages) {
  api::BringupAnswer out;
  out.target = to_target_info(board.target);
  out.commit = stages.commit;
  out.repo = board.repo;
  out.repositories = board.repositories;
  out.progress = to_api(stages.counts);
  for (const auto& [family, c] : stages.families) out.families.push_back({family, to_api(c)});
  for (std::size_t i = 0; i < stages.variants.size(); ++i) {
    const auto& s = stages.variants[i];
    const auto& v = board.variants[i];
    api::VariantStage row;
    row.family = s.family;
    row.variant = s.variant;
    row.stage = porting::to_string(s.stage);
    row.not_applicable = !s.applicable;
    row.built = s.built;
    row.resources_clean = s.resources_clean;
    row.numerics_passed = s.numerics_passed;
    row.numerics_failed = s.numerics_failed;
    row.measured = s.measured;
    row.selected_best = s.selected_best;
    row.reason = s.reason;
    row.build_status = v.build_status;
    row.commit = v.build_commit;
    row.results_passed = v.passed;
    row.results_failed = v.failed;
    out.variants.push_back(std::move(row));
  }
  return out;
}

json::object bringup_json(const db::TargetBoard& board, const porting::BringupStages& stages) {
  return api::to_json(bringup_answer(board, stages));
}

}  // namespace kport::coordinator
