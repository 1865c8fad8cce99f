#include "kport/common/install_paths.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace kport::install {
namespace {
namespace fs = std::filesystem;

// This test runs from the build tree: the install's place first, then the checkout's.
TEST(InstallPaths, LooksBesideTheBinaryFirstThenInTheCheckoutFromABuildTree) {
  auto looked = data_candidates("catalog/targets.json", KPORT_CATALOG_DEFAULT);
  ASSERT_EQ(looked.size(), 2u);
  EXPECT_EQ(looked[0], (executable_dir() / ".." / "share" / "kport" / "catalog" / "targets.json").lexically_normal());
  EXPECT_EQ(looked[1], fs::path(KPORT_CATALOG_DEFAULT));
}

TEST(InstallPaths, FindsTheCheckoutsCatalogWhenNothingIsInstalled) {
  auto found = find_data("catalog/targets.json", KPORT_CATALOG_DEFAULT);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, fs::path(KPORT_CATALOG_DEFAULT));
  EXPECT_EQ(data_path_or_default("catalog/targets.json", KPORT_CATALOG_DEFAULT), KPORT_CATALOG_DEFAULT);
}

// A folder without its marker file (an empty or half-copied dashboard) is not taken.
TEST(InstallPaths, AMarkerFileMustBeThere) {
  fs::path dir = fs::path(KPORT_CATALOG_DEFAULT).parent_path();
  EXPECT_TRUE(find_data("catalog", dir.string(), "targets.json").has_value());
  EXPECT_FALSE(find_data("catalog", dir.string(), "index.html").has_value());
  EXPECT_FALSE(find_data("no-such-file", "").has_value());
  // Nothing found: the default names the last place looked, so an error can name it.
  EXPECT_EQ(data_path_or_default("no-such-file", "/nonexistent/kport/file"), "/nonexistent/kport/file");
}

}  // namespace
}  // namespace kport::install
