// Variant discovery: the kernels tree is the one source of truth. Every
// kernels/<family>/<variant>/CMakeLists.txt calls
//   kport_kernel_variant(FAMILY f VARIANT v FEATURES ... SOURCES ... [OPTIONS ...])
// and this reads those calls, so the planner and the CMake build never disagree.
// Pure functions plus one directory walk; thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/result.h"

namespace kport::porting {

struct VariantSpec {
  std::string family;                 // "gemm"
  std::string variant;                // "wgmma_tma"
  std::vector<std::string> features;  // as declared
  std::vector<std::string> sources;   // relative to `dir`
  std::vector<std::string> options;   // extra nvcc flags
  std::filesystem::path dir;          // the variant folder

  std::string id() const { return family + "." + variant; }
};

// Parses every kport_kernel_variant(...) call in CMake text ('#' comments and quotes
// handled). invalid_argument when a call lacks FAMILY, VARIANT or SOURCES; the message
// names `origin`.
Result<std::vector<VariantSpec>> parse_variant_calls(std::string_view cmake_text, const std::string& origin);

// Walks <kernels_dir>/<family>/<variant>/CMakeLists.txt, sorted by id. not_found when
// kernels_dir has no kport_kernels.cmake (not a kernels tree).
Result<std::vector<VariantSpec>> discover_variants(const std::filesystem::path& kernels_dir);

}  // namespace kport::porting
