// porting/catalog/targets.json: the facts the build and the planner rely on.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

nlohmann::json load() {
  std::ifstream in(KPORT_CATALOG_PATH);
  return nlohmann::json::parse(in);
}

bool has(const nlohmann::json& cat, const std::string& target, const std::string& feature) {
  const auto& f = cat["targets"][target]["features"];
  return std::find(f.begin(), f.end(), feature) != f.end();
}

}  // namespace

TEST(ArchitectureCatalog, EveryTargetIsWellFormed) {
  const auto cat = load();
  ASSERT_TRUE(cat["targets"].is_object());
  for (const auto& [name, t] : cat["targets"].items()) {
    EXPECT_EQ(name.rfind("sm_", 0), 0u) << name;
    EXPECT_TRUE(t["arch"].is_string()) << name;
    EXPECT_GT(t["max_dynamic_smem_per_block"].get<long>(), 48 * 1024) << name;
    EXPECT_FALSE(t["gpus"].empty()) << name;
    EXPECT_TRUE(has(cat, name, "simt")) << name;
    for (const auto& f : t["features"])
      EXPECT_TRUE(cat["feature_glossary"].contains(f.get<std::string>())) << name << " " << f;
  }
}

TEST(ArchitectureCatalog, HopperAndBlackwellFeaturesSitOnTheRightSuffixes) {
  const auto cat = load();
  EXPECT_TRUE(has(cat, "sm_90", "tma"));
  EXPECT_FALSE(has(cat, "sm_90", "wgmma"));
  EXPECT_TRUE(has(cat, "sm_90a", "wgmma"));
  EXPECT_FALSE(has(cat, "sm_100a", "wgmma"));
  EXPECT_TRUE(has(cat, "sm_100a", "tcgen05"));
  EXPECT_TRUE(has(cat, "sm_100a", "tmem"));
  EXPECT_TRUE(has(cat, "sm_100f", "tcgen05"));
  EXPECT_FALSE(has(cat, "sm_100f", "tcgen05_mxf4nvf4_4x"));
  EXPECT_FALSE(has(cat, "sm_100", "tcgen05"));
  EXPECT_FALSE(has(cat, "sm_120", "tcgen05"));
  EXPECT_FALSE(has(cat, "sm_120", "wgmma"));
  EXPECT_TRUE(has(cat, "sm_80", "mma_sync"));
  EXPECT_FALSE(has(cat, "sm_80", "tma"));
  // The four CI targets are present.
  for (const char* t : {"sm_80", "sm_90a", "sm_100a", "sm_120"}) EXPECT_TRUE(cat["targets"].contains(t)) << t;
}
