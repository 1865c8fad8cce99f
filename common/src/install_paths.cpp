#include "kport/common/install_paths.h"

#include <system_error>

// KPORT_DATA_FROM_BIN is the install's data directory relative to its binary directory
// (../share/kport with the default GNUInstallDirs), set by services/common/CMakeLists.txt.
// KPORT_BUILD_DIR is the build tree the binary was built in.
#ifndef KPORT_DATA_FROM_BIN
#define KPORT_DATA_FROM_BIN "../share/kport"
#endif
#ifndef KPORT_BUILD_DIR
#define KPORT_BUILD_DIR ""
#endif

namespace kport::install {
namespace fs = std::filesystem;

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return {};
  return exe.parent_path();
}

namespace {

// The checkout's copy is for binaries run where they were built (build/*/bin, the test
// binaries); an installed binary, a package's or a prefix's, looks only at its own
// install, so it never reads a build machine's checkout.
bool in_build_tree(const fs::path& exe_dir) {
  if (exe_dir.empty()) return true;
  std::error_code ec;
  fs::path build = fs::weakly_canonical(fs::path(KPORT_BUILD_DIR), ec);
  if (ec || build.empty()) return false;
  auto rel = exe_dir.lexically_relative(build);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

std::vector<fs::path> data_candidates(std::string_view relative, std::string_view source_default) {
  std::vector<fs::path> out;
  fs::path dir = executable_dir();
  if (!dir.empty()) out.push_back((dir / KPORT_DATA_FROM_BIN / fs::path(relative)).lexically_normal());
  if (!source_default.empty() && in_build_tree(dir)) out.emplace_back(source_default);
  return out;
}

std::optional<fs::path> find_data(std::string_view relative, std::string_view source_default, std::string_view marker) {
  for (const fs::path& p : data_candidates(relative, source_default)) {
    std::error_code ec;
    if (fs::exists(marker.empty() ? p : p / fs::path(marker), ec) && !ec) return p;
  }
  return std::nullopt;
}

std::string data_path_or_default(std::string_view relative, std::string_view source_default) {
  auto found = find_data(relative, source_default);
  if (found) return found->string();
  auto looked = data_candidates(relative, source_default);
  return looked.empty() ? std::string(source_default) : looked.back().string();
}

}  // namespace kport::install
