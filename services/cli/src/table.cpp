#include <algorithm>
#include <iomanip>
#include <sstream>
#include <vector>

#include "commands.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

std::string field(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return "-";
  if (v->is_string()) return std::string(v->as_string());
  if (v->is_number()) return std::to_string(v->to_number<std::int64_t>());
  return json::serialize(*v);
}

// One audit's cell: "wgmma 24 ok", "MISSING wgmma", or "" when it says nothing.
std::string audit_part(const json::object& audit) {
  std::string out;
  if (const auto* m = audit.if_contains("missing"); m && m->is_array() && !m->as_array().empty()) {
    for (const auto& x : m->as_array())
      if (x.is_string()) out += (out.empty() ? "MISSING " : ",") + std::string(x.as_string());
    return out;
  }
  const auto* req = audit.if_contains("required");
  const auto* counts = audit.if_contains("counts");
  if (req && req->is_array() && counts && counts->is_object())
    for (const auto& r : req->as_array()) {
      if (!r.is_string()) continue;
      std::string k(r.as_string());
      const auto* c = counts->as_object().if_contains(k);
      out += (out.empty() ? "" : " ") + k + " " +
             (c && c->is_number() ? std::to_string(c->to_number<std::int64_t>()) : "?");
    }
  return out.empty() ? "ok" : out + " ok";
}

// The PTX audit's cell, then "sass ok", "sass MISSING wgmma" or "sass -" (not audited);
// "-" when no audit ran. Records from before the SASS audit hold the PTX audit alone.
std::string audit_cell(const json::object& o) {
  const auto* a = o.if_contains("instruction_audit");
  if (!a || !a->is_object() || a->as_object().empty()) return "-";
  const auto& audit = a->as_object();
  const auto* ptx = audit.if_contains("ptx");
  if (!ptx || !ptx->is_object()) return audit_part(audit);
  std::string out = audit_part(ptx->as_object());
  if (const auto* sass = audit.if_contains("sass"); sass && sass->is_object()) {
    const auto* audited = sass->as_object().if_contains("audited");
    if (audited && audited->is_bool() && audited->as_bool()) {
      const auto* m = sass->as_object().if_contains("missing");
      out += m && m->is_array() && !m->as_array().empty() ? ", sass " + audit_part(sass->as_object()) : ", sass ok";
    } else {
      out += ", sass -";
    }
  }
  return out;
}

std::string first_line(std::string s, std::size_t max = 70) {
  // For a compile error the first "error:" says more than nvcc's exit line.
  if (s.rfind("nvcc exited", 0) == 0)
    if (auto err = s.find("error", s.find('\n') == std::string::npos ? 0 : s.find('\n')); err != std::string::npos)
      s = s.substr(err);
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

}  // namespace

std::string format_build_table(const json::array& records) {
  std::vector<const json::object*> rows;
  for (const auto& r : records)
    if (r.is_object()) rows.push_back(&r.as_object());
  std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) {
    return field(*a, "family") + "." + field(*a, "variant") < field(*b, "family") + "." + field(*b, "variant");
  });
  std::ostringstream out;
  auto row = [&](const std::string& v, const std::string& st, const std::string& regs, const std::string& spills,
                 const std::string& smem, const std::string& audit, const std::string& note) {
    out << std::left << std::setw(24) << v << std::setw(16) << st << std::right << std::setw(5) << regs << "  "
        << std::left << std::setw(10) << spills << std::right << std::setw(8) << smem << "  " << std::left
        << std::setw(18) << audit << note << "\n";
  };
  row("variant", "status", "regs", "spills", "smem", "audit", "message");
  for (const auto* r : rows) {
    std::string spills = field(*r, "spill_stores_bytes") == "-"
                             ? "-"
                             : field(*r, "spill_stores_bytes") + "/" + field(*r, "spill_loads_bytes");
    row(field(*r, "family") + "." + field(*r, "variant"), field(*r, "status"), field(*r, "registers"), spills,
        field(*r, "shared_mem_bytes"), audit_cell(*r),
        first_line(field(*r, "message") == "-" ? "" : field(*r, "message")));
  }
  return out.str();
}

std::string format_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < width.size(); ++i) {
      std::string c = i < cells.size() ? cells[i] : "";
      if (i + 1 < width.size()) c.resize(width[i] + 2, ' ');
      text += c;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return out.str();
}

}  // namespace kport::cli
