#include "kport/porting/resource_diff.h"

namespace kport::porting {

std::vector<std::string> resource_changes(const ResourceFigures& a, const ResourceFigures& b) {
  std::vector<std::string> out;
  if (!a.status.empty() && !b.status.empty() && a.status != b.status) out.push_back("status " + a.status + " -> " + b.status);
  auto cmp = [&](const char* what, const std::optional<std::int64_t>& x, const std::optional<std::int64_t>& y,
                 const char* unit) {
    if (x && y && *x != *y) out.push_back(std::string(what) + " " + std::to_string(*x) + " -> " + std::to_string(*y) + unit);
  };
  cmp("registers", a.registers, b.registers, "");
  // Spills are one phrase when stores and loads move together, the usual case.
  if (a.spill_stores_bytes && b.spill_stores_bytes && a.spill_loads_bytes && b.spill_loads_bytes &&
      (*a.spill_stores_bytes != *b.spill_stores_bytes || *a.spill_loads_bytes != *b.spill_loads_bytes)) {
    out.push_back("spills " + std::to_string(*a.spill_stores_bytes) + "/" + std::to_string(*a.spill_loads_bytes) + " -> " +
                  std::to_string(*b.spill_stores_bytes) + "/" + std::to_string(*b.spill_loads_bytes) + " B (stores/loads)");
  }
  cmp("shared memory", a.shared_mem_bytes, b.shared_mem_bytes, " B");
  cmp("stack frame", a.stack_frame_bytes, b.stack_frame_bytes, " B");
  return out;
}

}  // namespace kport::porting
