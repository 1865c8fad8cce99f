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
  if (!a.sass.empty() && !b.sass.empty()) {
    auto count = [](const std::map<std::string, std::int64_t>& m, const char* k) {
      auto it = m.find(k);
      return it == m.end() ? std::int64_t{0} : it->second;
    };
    constexpr std::pair<const char*, const char*> k_path[] = {
        {"wgmma", "wgmma (HGMMA)"}, {"tcgen05", "tcgen05 (UTC*MMA)"}, {"mma_sync", "mma_sync (HMMA)"}, {"ldmatrix", "ldmatrix (LDSM)"}};
    for (const auto& [k, shown] : k_path)
      if (count(a.sass, k) > 0 && count(b.sass, k) == 0)
        out.push_back(std::string("SASS lost ") + shown + " " + std::to_string(count(a.sass, k)) + " -> 0");
    constexpr std::pair<const char*, const char*> k_local[] = {{"local_load", "local loads (LDL)"}, {"local_store", "local stores (STL)"}};
    for (const auto& [k, shown] : k_local)
      if (count(b.sass, k) > count(a.sass, k))
        out.push_back(std::string("SASS ") + shown + " " + std::to_string(count(a.sass, k)) + " -> " + std::to_string(count(b.sass, k)));
  }
  return out;
}

}  // namespace kport::porting
