#include "parent_diff.h"

#include <map>

#include "kport/porting/resource_diff.h"
#include "kport/runner/answers.h"

namespace kport::runner {
namespace json = boost::json;

namespace {

// The SASS class counts of a stored record's audit ({"ptx":..,"sass":{"audited":true,
// "counts":{..}}}); empty when that build had no SASS audit (or predates it).
std::map<std::string, std::int64_t> sass_counts(const json::value& audit) {
  std::map<std::string, std::int64_t> out;
  const auto* sass = audit.is_object() ? audit.as_object().if_contains("sass") : nullptr;
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
  const std::string path = "/api/v1/builds?commit=" + parent + "&target=" + report.target + "&limit=1000";
  auto body = api.get_text(path);
  if (!body.ok()) return 0;
  auto page = parse_builds(*body, "GET " + path);
  if (!page.ok()) {
    log("cannot compare resources with " + parent.substr(0, 12) + ": " + page.error().message);
    return 0;
  }
  // The newest record per variant (the highest id): a retried build supersedes the first.
  std::map<std::string, std::pair<std::int64_t, porting::ResourceFigures>> before;
  for (const api::BuildRecordInfo& b : page->items) {
    if (b.family.empty() || b.variant.empty()) continue;
    std::string id = b.family + "." + b.variant;
    if (before.count(id) && before[id].first > b.id) continue;
    std::optional<std::int64_t> registers;
    if (b.registers) registers = *b.registers;
    before[id] = {b.id, porting::ResourceFigures{std::string(api::to_string(b.status)), registers, b.spill_stores_bytes,
                                                 b.spill_loads_bytes, b.shared_mem_bytes, b.stack_frame_bytes,
                                                 sass_counts(b.instruction_audit)}};
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
