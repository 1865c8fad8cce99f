// kport's own op families as kernels/kport.json declares them, for the tests that check
// kport's answers are read from that declaration: their geometry keys and their
// dimension rules (which dims must match exactly, weights, alignments).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "kport/porting/manifest.h"
#include "kport/porting/op_shape.h"

namespace kport::porting::test {

inline const FamilySet& kport_families() {
  static const FamilySet k = [] {
    auto m = load_manifest(std::filesystem::path(KPORT_KERNELS_DIR) / "kport.json", "kernels/kport.json");
    EXPECT_TRUE(m.ok()) << m.error().message;
    return m.ok() ? FamilySet(op_families_of(*m)) : FamilySet();
  }();
  return k;
}

// The dimension rules kport's `family` declares (plain rules when it is not one of them,
// which fails the test).
inline const ShapeRules& kport_rules(std::string_view family) {
  static const std::map<std::string, ShapeRules, std::less<>> k = [] {
    std::map<std::string, ShapeRules, std::less<>> out;
    for (const auto& f : kport_families().all()) out.emplace(f.name, f.shape_rules());
    return out;
  }();
  static const ShapeRules none;
  auto it = k.find(family);
  EXPECT_NE(it, k.end()) << "kernels/kport.json declares no family " << family;
  return it == k.end() ? none : it->second;
}

}  // namespace kport::porting::test
