#include "kport/porting/planner.h"

#include <algorithm>
#include <map>

namespace kport::porting {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// More declared features means more specialized; the id breaks ties so plans are stable.
bool more_specialized(const VariantSpec& a, const VariantSpec& b) {
  if (a.features.size() != b.features.size()) return a.features.size() > b.features.size();
  return a.id() < b.id();
}

}  // namespace

std::string NotApplicable::reason() const { return "missing features: " + join(missing); }

const FamilyPlan* Plan::family(const std::string& name) const {
  for (const auto& f : families)
    if (f.family == name) return &f;
  return nullptr;
}

Plan make_plan(const TargetEntry& target, const std::vector<VariantSpec>& variants) {
  Plan plan;
  plan.target = target.name;
  std::map<std::string, std::vector<const VariantSpec*>> ok_by_family, all_by_family;
  for (const auto& v : variants) {
    all_by_family[v.family].push_back(&v);
    std::vector<std::string> missing;
    for (const auto& f : v.features)
      if (!target.has(f)) missing.push_back(f);
    if (missing.empty()) {
      plan.applicable.push_back(v);
      ok_by_family[v.family].push_back(&v);
    } else {
      plan.not_applicable.push_back(NotApplicable{v, std::move(missing)});
    }
  }
  for (auto& [family, all] : all_by_family) {
    FamilyPlan fp;
    fp.family = family;
    auto& ok = ok_by_family[family];
    std::sort(ok.begin(), ok.end(), [](auto* a, auto* b) { return more_specialized(*a, *b); });
    if (ok.empty()) {
      fp.explanation = "no " + family + " variant applies to " + target.name;
      plan.families.push_back(std::move(fp));
      continue;
    }
    const VariantSpec& best = *ok.front();
    fp.chosen = best.id();
    for (const auto* v : all)
      if (more_specialized(*v, best) && std::find(ok.begin(), ok.end(), v) == ok.end())
        fp.instead_of.push_back(v->id());
    std::sort(fp.instead_of.begin(), fp.instead_of.end());
    fp.is_fallback = !fp.instead_of.empty();
    fp.explanation =
        fp.is_fallback
            ? target.name + " falls back to " + fp.chosen + " because " + join(fp.instead_of) + " does not apply"
            : fp.chosen + " is the most specialized " + family + " variant and applies to " + target.name;
    plan.families.push_back(std::move(fp));
  }
  return plan;
}

}  // namespace kport::porting
