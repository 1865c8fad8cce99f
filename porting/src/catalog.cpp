// Why derived entries are conservative: a target nvcc lists before anyone has written
// its table entry must not be handed variants that need architecture-specific
// instructions; the planner then falls back to the portable variants, which is the
// first step of every bring-up.
#include "kport/porting/catalog.h"

#include <boost/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kport::porting {
namespace json = boost::json;

std::optional<TargetName> parse_target_name(std::string_view name) {
  if (name.size() < 5 || name.substr(0, 3) != "sm_") return std::nullopt;
  std::string_view rest = name.substr(3);
  TargetName t;
  if (rest.back() == 'a' || rest.back() == 'f') {
    t.suffix = rest.back();
    rest.remove_suffix(1);
  }
  if (rest.size() < 2 || rest.size() > 3) return std::nullopt;
  for (char c : rest)
    if (c < '0' || c > '9') return std::nullopt;
  t.number = std::stoi(std::string(rest));
  return t;
}

TargetEntry derive_entry(std::string_view name, const TargetName& parsed) {
  TargetEntry e;
  e.name = std::string(name);
  e.arch = std::to_string(parsed.number / 10) + "." + std::to_string(parsed.number % 10);
  const int n = parsed.number;
  e.features = {"simt"};
  auto add = [&](std::initializer_list<const char*> fs) {
    for (const char* f : fs) e.features.emplace_back(f);
  };
  if (n >= 75) add({"ldmatrix", "mma_sync"});
  if (n >= 80) add({"cp_async", "mma_sync_bf16"});
  if (n >= 89) add({"mma_sync_fp8"});
  if (n >= 90) add({"tma", "mbarrier", "cluster", "dsmem", "pdl", "stmatrix", "elect_sync"});
  std::sort(e.features.begin(), e.features.end());
  // The smallest opt-in limit of any GPU of that generation or later: safe to plan with.
  e.max_dynamic_smem_per_block = n >= 86 ? 101376 : n >= 80 ? 166912 : 65536;
  e.runs_on = {e.arch};
  e.note =
      "not in porting/catalog/targets.json: conservative features derived from the SM number; "
      "add an entry to unlock architecture-specific variants";
  e.is_new = true;
  return e;
}

namespace {

std::vector<std::string> strings(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const auto* v = o.if_contains(key); v && v->is_array())
    for (const auto& s : v->as_array())
      if (s.is_string()) out.emplace_back(s.as_string());
  return out;
}

json::array to_array(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

}  // namespace

Result<Catalog> Catalog::from_json(std::string_view text) {
  boost::system::error_code ec;
  auto doc = json::parse(text, ec);
  if (ec || !doc.is_object()) return make_error(Errc::bad_json, "target catalog is not a JSON object: " + ec.message());
  const auto* targets = doc.as_object().if_contains("targets");
  if (!targets || !targets->is_object()) return make_error(Errc::bad_json, "target catalog has no 'targets' object");
  Catalog c;
  for (const auto& [key, value] : targets->as_object()) {
    std::string name(key);
    if (!parse_target_name(name))
      return make_error(Errc::invalid_argument,
                        "catalog target '" + name + "' is not an nvcc target (sm_<number>[a|f])");
    if (!value.is_object()) return make_error(Errc::bad_json, "catalog target '" + name + "' must be an object");
    const auto& o = value.as_object();
    TargetEntry e;
    e.name = name;
    const auto* arch = o.if_contains("arch");
    if (!arch || !arch->is_string())
      return make_error(Errc::bad_json, "catalog target '" + name + "' needs a string 'arch'");
    e.arch = std::string(arch->as_string());
    e.features = strings(o, "features");
    std::sort(e.features.begin(), e.features.end());
    if (const auto* s = o.if_contains("max_dynamic_smem_per_block"); s && s->is_int64())
      e.max_dynamic_smem_per_block = s->as_int64();
    e.gpus = strings(o, "gpus");
    e.runs_on = strings(o, "runs_on");
    if (const auto* n = o.if_contains("note"); n && n->is_string()) e.note = std::string(n->as_string());
    c.m_entries.push_back(std::move(e));
  }
  return c;
}

Result<Catalog> Catalog::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(Errc::not_found, "target catalog '" + path + "' cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  auto c = from_json(s.str());
  if (!c.ok()) return make_error(c.error().code, path + ": " + c.error().message);
  return c;
}

void Catalog::join(const ToolkitListing& listing) {
  m_toolkit = listing.version;
  auto listed = [&](int number) {
    std::string base = "sm_" + std::to_string(number);
    return std::find(listing.gpu_codes.begin(), listing.gpu_codes.end(), base) != listing.gpu_codes.end();
  };
  for (auto& e : m_entries) {
    auto t = parse_target_name(e.name);
    e.supported_by_toolkit = t && listed(t->number);
  }
  for (const auto& code : listing.gpu_codes) {
    auto t = parse_target_name(code);
    if (!t) continue;
    bool known = std::any_of(m_entries.begin(), m_entries.end(), [&](const TargetEntry& e) { return e.name == code; });
    if (known) continue;
    TargetEntry e = derive_entry(code, *t);
    e.supported_by_toolkit = true;
    m_entries.push_back(std::move(e));
  }
}

Result<TargetEntry> Catalog::find(std::string_view name) const {
  for (const auto& e : m_entries)
    if (e.name == name) return e;
  auto t = parse_target_name(name);
  if (!t)
    return make_error(Errc::invalid_argument,
                      "'" + std::string(name) + "' is not an nvcc target; expected sm_<number>[a|f], e.g. sm_90a");
  return derive_entry(name, *t);
}

std::vector<std::string> Catalog::supported_targets() const {
  std::vector<std::string> out;
  for (const auto& e : m_entries)
    if (e.supported_by_toolkit) out.push_back(e.name);
  return out;
}

std::string Catalog::to_json() const {
  json::object targets;
  for (const auto& e : m_entries) {
    json::object o{{"arch", e.arch},
                   {"features", to_array(e.features)},
                   {"max_dynamic_smem_per_block", e.max_dynamic_smem_per_block},
                   {"gpus", to_array(e.gpus)},
                   {"runs_on", to_array(e.runs_on)},
                   {"is_new", e.is_new}};
    if (!e.note.empty()) o["note"] = e.note;
    targets[e.name] = std::move(o);
  }
  return json::serialize(json::object{{"schema", 1}, {"toolkit", m_toolkit}, {"targets", std::move(targets)}});
}

}  // namespace kport::porting
