// Stored feature lists are JSON the store accepted; a malformed one reads as "unknown",
// which the rule treats as applicable until a build record says otherwise, rather than
// hiding a variant.
#include "bringup_stages.h"

#include "codec.h"

namespace kport::coordinator {
namespace json = boost::json;

namespace {

template <typename T>
json::value opt(const std::optional<T>& v) {
  return v ? json::value(*v) : json::value(nullptr);
}

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

json::object counts_json(const porting::StageCounts& c) {
  return json::object{{"variants", c.variants},
                      {"applicable", c.applicable},
                      {"builds", c.builds},
                      {"resources_clean", c.resources_clean},
                      {"numerics_passed", c.numerics_passed},
                      {"measured", c.measured},
                      {"selected_best", c.selected_best}};
}

json::array families_json(const porting::BringupStages& s) {
  json::array out;
  for (const auto& [family, c] : s.families) {
    json::object o = counts_json(c);
    o["family"] = family;
    out.push_back(std::move(o));
  }
  return out;
}

json::object bringup_json(const db::TargetBoard& board, const porting::BringupStages& stages) {
  json::array rows;
  for (std::size_t i = 0; i < stages.variants.size(); ++i) {
    const auto& s = stages.variants[i];
    const auto& v = board.variants[i];
    rows.push_back(json::object{{"family", s.family},
                                {"variant", s.variant},
                                {"stage", porting::to_string(s.stage)},
                                {"not_applicable", !s.applicable},
                                {"built", s.built},
                                {"resources_clean", s.resources_clean},
                                {"numerics_passed", s.numerics_passed},
                                {"numerics_failed", s.numerics_failed},
                                {"measured", s.measured},
                                {"selected_best", s.selected_best},
                                {"reason", s.reason},
                                {"build_status", opt(v.build_status)},
                                {"commit", opt(v.build_commit)},
                                {"results_passed", v.passed},
                                {"results_failed", v.failed}});
  }
  return json::object{{"target", to_json(board.target)},
                      {"commit", opt(stages.commit)},
                      {"progress", counts_json(stages.counts)},
                      {"families", families_json(stages)},
                      {"variants", std::move(rows)}};
}

}  // namespace kport::coordinator
