#include "kport/porting/check_shards.h"

#include <algorithm>
#include <map>

namespace kport::porting {

std::vector<CheckShard> plan_check_shards(const std::vector<FamilyWeight>& weights, std::int64_t workers) {
  std::map<std::string, double> by_family;
  for (const auto& w : weights)
    if (!w.family.empty()) by_family[w.family] += std::max(0.0, w.weight);
  std::vector<FamilyWeight> families;
  for (auto& [f, w] : by_family) families.push_back({f, w});
  // Heaviest first; equal weights by name (the map's order, kept by a stable sort).
  std::stable_sort(families.begin(), families.end(),
                   [](const FamilyWeight& a, const FamilyWeight& b) { return a.weight > b.weight; });
  const auto n = static_cast<std::size_t>(
      std::clamp<std::int64_t>(workers, 1, std::max<std::int64_t>(1, static_cast<std::int64_t>(families.size()))));
  std::vector<CheckShard> shards(n);
  for (auto& f : families) {
    // The lightest shard; among equals the first, so the heaviest family opens shard 0.
    auto to = std::min_element(shards.begin(), shards.end(),
                               [](const CheckShard& a, const CheckShard& b) { return a.weight < b.weight; });
    to->weight += f.weight;
    to->families.push_back(std::move(f.family));
  }
  for (auto& s : shards) std::sort(s.families.begin(), s.families.end());
  shards.back().rest = true;
  return shards;
}

}  // namespace kport::porting
