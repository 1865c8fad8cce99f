#include "kport/porting/resources.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdlib>

namespace kport::porting {
namespace {

// The number right before the last `unit` in `line` ("24 bytes spill stores" -> 24); -1 if absent.
std::int64_t number_before(std::string_view line, std::string_view unit) {
  auto pos = line.rfind(unit);
  if (pos == std::string_view::npos || pos == 0) return -1;
  auto end = pos;
  while (end > 0 && line[end - 1] == ' ') --end;
  auto start = end;
  while (start > 0 && line[start - 1] >= '0' && line[start - 1] <= '9') --start;
  if (start == end) return -1;
  return std::strtoll(std::string(line.substr(start, end - start)).c_str(), nullptr, 10);
}

std::string quoted_name(std::string_view line) {
  auto a = line.find('\'');
  auto b = a == std::string_view::npos ? a : line.find('\'', a + 1);
  return b == std::string_view::npos ? std::string() : std::string(line.substr(a + 1, b - a - 1));
}

// What each declared feature obliges the code to contain, and how the instruction reads.
struct Rule {
  const char* feature;
  const char* klass;
  const char* mnemonic;
};
constexpr Rule k_rules[] = {
    {"wgmma", "wgmma", "wgmma.mma_async"},
    {"tcgen05", "tcgen05", "tcgen05.mma"},
    {"mma_sync", "mma_sync", "mma.sync"},
};
// Counted for the record but not demanded by any feature on their own.
constexpr std::pair<const char*, const char*> k_counted[] = {
    {"tma", "cp.async.bulk.tensor"}, {"ldmatrix", "ldmatrix"}, {"cp_async", "cp.async."}};

std::int64_t count_lines_with(std::string_view text, std::string_view needle) {
  std::int64_t n = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    auto first = line.find_first_not_of(" \t");
    // PTX comments and directives are not instructions.
    if (first != std::string_view::npos && line.substr(first, 2) != "//" && line[first] != '.' &&
        line.find(needle) != std::string_view::npos)
      ++n;
    start = end + 1;
  }
  return n;
}

}  // namespace

ResourceUsage parse_ptxas_verbose(std::string_view compiler_output) {
  ResourceUsage u;
  EntryResources* cur = nullptr;
  std::string properties_for;
  std::size_t start = 0;
  while (start < compiler_output.size()) {
    auto end = compiler_output.find('\n', start);
    if (end == std::string_view::npos) end = compiler_output.size();
    std::string_view line = compiler_output.substr(start, end - start);
    start = end + 1;
    if (line.find("Compiling entry function") != std::string_view::npos) {
      u.entries.push_back(EntryResources{quoted_name(line)});
      cur = &u.entries.back();
    } else if (auto p = line.find("Function properties for "); p != std::string_view::npos) {
      properties_for = std::string(line.substr(p + 24));
    } else if (line.find("bytes stack frame") != std::string_view::npos) {
      // Only the entry's own properties count; device functions report theirs too.
      if (cur && properties_for == cur->name) {
        cur->stack_frame_bytes = std::max<std::int64_t>(0, number_before(line, "bytes stack frame"));
        cur->spill_stores_bytes = std::max<std::int64_t>(0, number_before(line, "bytes spill stores"));
        cur->spill_loads_bytes = std::max<std::int64_t>(0, number_before(line, "bytes spill loads"));
      }
    } else if (line.find("Used ") != std::string_view::npos && line.find(" registers") != std::string_view::npos) {
      if (!cur) continue;
      cur->registers = static_cast<int>(std::max<std::int64_t>(0, number_before(line, "registers")));
      cur->shared_mem_bytes = std::max<std::int64_t>(0, number_before(line, "bytes smem"));
      std::int64_t cmem = 0;
      for (auto c = line.find("bytes cmem"); c != std::string_view::npos; c = line.find("bytes cmem", c + 1))
        cmem += std::max<std::int64_t>(0, number_before(line.substr(0, c + 10), "bytes cmem"));
      cur->constant_mem_bytes = cmem;
    }
  }
  for (const auto& e : u.entries) {
    u.registers = std::max(u.registers, e.registers);
    u.spill_stores_bytes = std::max(u.spill_stores_bytes, e.spill_stores_bytes);
    u.spill_loads_bytes = std::max(u.spill_loads_bytes, e.spill_loads_bytes);
    u.shared_mem_bytes = std::max(u.shared_mem_bytes, e.shared_mem_bytes);
    u.stack_frame_bytes = std::max(u.stack_frame_bytes, e.stack_frame_bytes);
    u.constant_mem_bytes = std::max(u.constant_mem_bytes, e.constant_mem_bytes);
  }
  return u;
}

InstructionAudit audit_ptx(std::string_view ptx, const std::vector<std::string>& features) {
  InstructionAudit a;
  for (const auto& r : k_rules) {
    a.counts[r.klass] = count_lines_with(ptx, r.mnemonic);
    if (std::find(features.begin(), features.end(), r.feature) == features.end()) continue;
    a.required.emplace_back(r.klass);
    if (a.counts[r.klass] == 0) a.missing.emplace_back(r.klass);
  }
  for (const auto& [klass, mnemonic] : k_counted) a.counts[klass] = count_lines_with(ptx, mnemonic);
  return a;
}

std::string InstructionAudit::to_json(std::string_view source) const {
  boost::json::object c;
  for (const auto& [k, v] : counts) c[k] = v;
  boost::json::array req, miss;
  for (const auto& r : required) req.emplace_back(r);
  for (const auto& m : missing) miss.emplace_back(m);
  return boost::json::serialize(boost::json::object{{"source", source},
                                                    {"counts", std::move(c)},
                                                    {"required", std::move(req)},
                                                    {"missing", std::move(miss)},
                                                    {"passed", passed()}});
}

std::string InstructionAudit::message() const {
  std::string out;
  for (const auto& m : missing) {
    const char* mnemonic = m.c_str();
    for (const auto& r : k_rules)
      if (m == r.klass) mnemonic = r.mnemonic;
    out += (out.empty() ? "" : "; ") + std::string("declares ") + m + " but its generated PTX has no " + mnemonic +
           " instruction";
  }
  return out;
}

}  // namespace kport::porting
