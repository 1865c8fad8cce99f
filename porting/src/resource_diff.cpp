#include "kport/porting/resource_diff.h"

namespace kport::porting {

std::vector<std::string> resource_changes(const ResourceFigures& before, const ResourceFigures& after) {
  std::vector<std::string> out;
  if (!before.status.empty() && !after.status.empty() && before.status != after.status)
    out.push_back("status " + before.status + " -> " + after.status);
  auto cmp = [&](const char* what, const std::optional<std::int64_t>& x, const std::optional<std::int64_t>& y,
                 const char* unit) {
    if (x && y && *x != *y)
      out.push_back(std::string(what) + " " + std::to_string(*x) + " -> " + std::to_string(*y) + unit);
  };
  cmp("registers", before.registers, after.registers, "");
  // Spills are one phrase when stores and loads move together, the usual case.
  if (before.spill_stores_bytes && after.spill_stores_bytes && before.spill_loads_bytes && after.spill_loads_bytes &&
      (*before.spill_stores_bytes != *after.spill_stores_bytes ||
       *before.spill_loads_bytes != *after.spill_loads_bytes)) {
    out.push_back("spills " + std::to_string(*before.spill_stores_bytes) + "/" +
                  std::to_string(*before.spill_loads_bytes) + " -> " + std::to_string(*after.spill_stores_bytes) + "/" +
                  std::to_string(*after.spill_loads_bytes) + " B (stores/loads)");
  }
  cmp("shared memory", before.shared_mem_bytes, after.shared_mem_bytes, " B");
  cmp("stack frame", before.stack_frame_bytes, after.stack_frame_bytes, " B");
  if (!before.sass.empty() && !after.sass.empty()) {
    auto count = [](const std::map<std::string, std::int64_t>& m, const char* k) {
      auto it = m.find(k);
      return it == m.end() ? std::int64_t{0} : it->second;
    };
    constexpr std::pair<const char*, const char*> k_path[] = {{"wgmma", "wgmma (HGMMA)"},
                                                              {"tcgen05", "tcgen05 (UTC*MMA)"},
                                                              {"mma_sync", "mma_sync (HMMA)"},
                                                              {"ldmatrix", "ldmatrix (LDSM)"}};
    for (const auto& [k, shown] : k_path)
      if (count(before.sass, k) > 0 && count(after.sass, k) == 0)
        out.push_back(std::string("SASS lost ") + shown + " " + std::to_string(count(before.sass, k)) + " -> 0");
    constexpr std::pair<const char*, const char*> k_local[] = {{"local_load", "local loads (LDL)"},
                                                               {"local_store", "local stores (STL)"}};
    for (const auto& [k, shown] : k_local)
      if (count(after.sass, k) > count(before.sass, k))
        out.push_back(std::string("SASS ") + shown + " " + std::to_string(count(before.sass, k)) + " -> " +
                      std::to_string(count(after.sass, k)));
  }
  return out;
}

}  // namespace kport::porting
