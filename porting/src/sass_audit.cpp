#include "kport/porting/sass_audit.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>

namespace kport::porting {
namespace {

// Which class an opcode base belongs to; nullptr when it is not counted.
const char* class_of(std::string_view op) {
  if (op == "HGMMA" || op == "IGMMA" || op == "QGMMA" || op == "BGMMA") return "wgmma";
  if (op.substr(0, 3) == "UTC" && op.find("MMA") != std::string_view::npos) return "tcgen05";
  if (op == "HMMA" || op == "IMMA") return "mma_sync";
  if (op == "LDSM") return "ldmatrix";
  if (op == "UTMALDG" || op == "UTMASTG" || op == "UBLKCP") return "tma";
  if (op == "LDL") return "local_load";
  if (op == "STL") return "local_store";
  return nullptr;
}

// What each declared feature obliges the machine code to contain, and how it reads.
struct Rule {
  const char* feature;
  const char* klass;
  const char* shown;  // for the message
};
constexpr Rule k_rules[] = {
    {"wgmma", "wgmma", "HGMMA (or another *GMMA)"},
    {"tcgen05", "tcgen05", "UTC*MMA (tcgen05.mma)"},
    {"mma_sync", "mma_sync", "HMMA"},
    {"ldmatrix", "ldmatrix", "LDSM"},
};
constexpr const char* k_classes[] = {"wgmma", "tcgen05", "mma_sync", "ldmatrix", "tma", "local_load", "local_store"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "sm_90a" and "sm_90" name the same SASS generation; the suffix says which features
// the compile may use, not a different encoding.
std::string_view generation(std::string_view target) {
  while (!target.empty() && std::isalpha(static_cast<unsigned char>(target.back()))) target.remove_suffix(1);
  return target;
}

}  // namespace

std::string sass_opcode(std::string_view line) {
  line = trim(line);
  // An instruction starts with its address comment: /*0120*/ (hex digits only; the
  // encoding lines are /* 0x... */ and do not match).
  if (line.substr(0, 2) != "/*") return {};
  auto close = line.find("*/");
  if (close == std::string_view::npos || close == 2) return {};
  for (char c : line.substr(2, close - 2))
    if (!std::isxdigit(static_cast<unsigned char>(c))) return {};
  line = trim(line.substr(close + 2));
  if (!line.empty() && line.front() == '@') {  // a predicate guard: @P0, @!UP1, @PT
    auto sp = line.find_first_of(" \t");
    if (sp == std::string_view::npos) return {};
    line = trim(line.substr(sp));
  }
  auto end = line.find_first_of(" \t;.");
  std::string_view op = line.substr(0, end);
  if (op.empty() || !std::isupper(static_cast<unsigned char>(op.front()))) return {};
  for (char c : op)
    if (!std::isupper(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c)) && c != '_')
      return {};
  return std::string(op);
}

std::int64_t SassAudit::count(std::string_view klass) const {
  auto it = counts.find(std::string(klass));
  return it == counts.end() ? 0 : it->second;
}

SassAudit sass_not_audited(std::string reason) {
  SassAudit a;
  a.reason = std::move(reason);
  return a;
}

SassAudit audit_sass(std::string_view disassembly, std::string_view target,
                     const std::vector<std::string>& declared_features, std::string tool) {
  SassAudit a;
  a.tool = std::move(tool);
  for (const char* k : k_classes) a.counts[k] = 0;
  std::vector<std::string> sections;  // the targets named by "code for sm_XX" headers
  bool in_target = true;              // output without section headers is all one target's
  std::size_t start = 0;
  while (start < disassembly.size()) {
    auto end = disassembly.find('\n', start);
    if (end == std::string_view::npos) end = disassembly.size();
    std::string_view line = trim(disassembly.substr(start, end - start));
    start = end + 1;
    if (line.substr(0, 9) == "code for ") {
      std::string_view arch = trim(line.substr(9));
      sections.emplace_back(arch);
      in_target = generation(arch) == generation(target);
      continue;
    }
    if (!in_target) continue;
    if (line.substr(0, 8) == "Function") {  // cuobjdump: "Function : _Z4gemmPf"
      auto colon = line.find(':');
      if (colon != std::string_view::npos) a.functions.emplace_back(trim(line.substr(colon + 1)));
      continue;
    }
    if (line.substr(0, 6) == ".text." && line.back() == ':') {  // nvdisasm: ".text._Z4gemmPf:"
      a.functions.emplace_back(line.substr(6, line.size() - 7));
      continue;
    }
    std::string op = sass_opcode(line);
    if (op.empty()) continue;
    ++a.instructions;
    if (const char* k = class_of(op)) {
      ++a.counts[k];
      ++a.opcodes[op];
    } else if (op.substr(0, 3) == "UTC") {
      ++a.opcodes[op];
    }
  }
  if (a.instructions == 0) {
    std::string seen;
    for (const auto& s : sections) seen += (seen.empty() ? "" : ", ") + s;
    return sass_not_audited(a.tool + " printed no " + std::string(target) + " instructions" +
                            (seen.empty() ? std::string(" (no code sections at all)") : " (code for: " + seen + ")"));
  }
  a.audited = true;
  for (const auto& r : k_rules) {
    if (std::find(declared_features.begin(), declared_features.end(), r.feature) == declared_features.end()) continue;
    a.required.emplace_back(r.klass);
    if (a.count(r.klass) == 0) a.missing.emplace_back(r.klass);
  }
  return a;
}

std::string SassAudit::to_json() const {
  if (!audited) return boost::json::serialize(boost::json::object{{"audited", false}, {"reason", reason}});
  boost::json::object c, o;
  for (const auto& [k, v] : counts) c[k] = v;
  for (const auto& [k, v] : opcodes) o[k] = v;
  boost::json::array req, miss, fns;
  for (const auto& r : required) req.emplace_back(r);
  for (const auto& m : missing) miss.emplace_back(m);
  for (const auto& f : functions) fns.emplace_back(f);
  return boost::json::serialize(boost::json::object{{"audited", true},
                                                    {"tool", tool},
                                                    {"functions", std::move(fns)},
                                                    {"instructions", instructions},
                                                    {"counts", std::move(c)},
                                                    {"opcodes", std::move(o)},
                                                    {"required", std::move(req)},
                                                    {"missing", std::move(miss)},
                                                    {"passed", passed()}});
}

std::string SassAudit::message(std::string_view target) const {
  if (!audited) return "SASS not audited: " + reason;
  std::string out;
  for (const auto& m : missing) {
    std::string shown = m;
    for (const auto& r : k_rules)
      if (m == r.klass) shown = r.shown;
    out += (out.empty() ? "" : "; ") + std::string("declares ") + m + " but its " + std::string(target) +
           " machine code has no " + shown + " instruction";
  }
  return out;
}

}  // namespace kport::porting
