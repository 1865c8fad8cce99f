#include "kport/porting/check_arches.h"

#include <algorithm>

namespace kport::porting {

std::vector<std::string> check_arches(std::string_view target_arch, std::vector<std::string> registered) {
  std::vector<std::string> out = std::move(registered);
  out.emplace_back(target_arch);
  std::erase_if(out, [](const std::string& a) { return a.empty(); });
  // String order, as the queue listed spawned checks before: stable ids across runs.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool checks_target(std::string_view arch, std::string_view target_arch, const std::vector<std::string>& registered) {
  if (arch.empty()) return false;
  return arch == target_arch || std::find(registered.begin(), registered.end(), arch) != registered.end();
}

}  // namespace kport::porting
