#include "parent_diff.h"

#include <map>

#include "kport/porting/resource_diff.h"

namespace kport::runner {
namespace json = boost::json;

namespace {

std::optional<std::int64_t> num(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_number() ? std::optional<std::int64_t>(v->to_number<std::int64_t>()) : std::nullopt;
}

// The SASS class counts of a stored record's audit ({"ptx":..,"sass":{"audited":true,
// "counts":{..}}}); empty when that build had no SASS audit (or predates it).
std::map<std::string, std::int64_t> sass_counts(const json::object& record) {
  std::map<std::string, std::int64_t> out;
  const auto* audit = record.if_contains("instruction_audit");
  const auto* sass = audit && audit->is_object() ? audit->as_object().if_contains("sass") : nullptr;
  if (!sass || !sass->is_object()) return out;
  const auto* audited = sass->as_object().if_contains("audited");
  const auto* counts = sass->as_object().if_contains("counts");
  if (!audited || !audited->is_bool() || !audited->as_bool() || !counts || !counts->is_object()) return out;
  for (const auto& [k, v] : counts->as_object())
    if (v.is_number()) out[std::string(k)] = v.to_number<std::int64_t>();
  return out;
}

}  // namespace

int flag_resource_changes(CoordinatorApi& api, const std::string& parent, porting::BuildReport& report,
                          const std::function<void(const std::string&)>& log) {
  auto page = api.get("/api/v1/builds?commit=" + parent + "&target=" + report.target + "&limit=1000");
  if (!page.ok() || !page->is_object()) return 0;
  // The newest record per variant (the highest id): a retried build supersedes the first.
  std::map<std::string, std::pair<std::int64_t, porting::ResourceFigures>> before;
  const auto* items = page->as_object().if_contains("items");
  if (!items || !items->is_array()) return 0;
  auto text_of = [](const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
  };
  for (const auto& item : items->as_array()) {
    if (!item.is_object()) continue;
    const auto& o = item.as_object();
    std::string family = text_of(o, "family"), variant = text_of(o, "variant");
    if (family.empty() || variant.empty()) continue;
    std::string id = family + "." + variant;
    std::int64_t rid = num(o, "id").value_or(0);
    if (before.count(id) && before[id].first > rid) continue;
    before[id] = {rid, porting::ResourceFigures{text_of(o, "status"), num(o, "registers"), num(o, "spill_stores_bytes"),
                                                num(o, "spill_loads_bytes"), num(o, "shared_mem_bytes"),
                                                num(o, "stack_frame_bytes"), sass_counts(o)}};
  }
  int changed = 0;
  for (auto& r : report.records) {
    auto it = before.find(r.id());
    if (it == before.end()) continue;
    porting::ResourceFigures now{
        porting::to_string(r.status), std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, {}};
    if (r.resources)
      now = {now.status,
             r.resources->registers,
             r.resources->spill_stores_bytes,
             r.resources->spill_loads_bytes,
             r.resources->shared_mem_bytes,
             r.resources->stack_frame_bytes,
             {}};
    if (r.sass.audited) now.sass = r.sass.counts;
    auto changes = porting::resource_changes(it->second.second, now);
    if (changes.empty()) continue;
    std::string text;
    for (const auto& c : changes) text += (text.empty() ? "" : ", ") + c;
    std::string line = "resource change since " + parent.substr(0, 12) + " on " + r.target + ": " + text;
    log(r.id() + ": " + line);
    r.message = line + (r.message.empty() ? "" : "\n" + r.message);
    ++changed;
  }
  return changed;
}

}  // namespace kport::runner
