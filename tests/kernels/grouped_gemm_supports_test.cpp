// grouped_gemm's instances answer supports() with a reason for every problem they cannot run:
// the wgmma_tma instances refuse rows per group off the 128-row tile, N or K not a multiple
// of 8 (TMA) and other dtypes, and misaligned operands; the simt instance takes them. Host code
// only: nothing is launched.
#include <gtest/gtest.h>

#include <cstdint>

#include "kport/kernels/registry.h"
#include "registered.h"

using namespace kport::kernels;
using stand_ins::registered;

namespace {

Problem problem(int g, int m, int n, int k, DType dtype = DType::bf16) {
  Problem p;
  p.family = Family::grouped_gemm;
  // 256-byte aligned stand-ins: supports() only looks at the addresses.
  auto at = [](std::uintptr_t a) { return reinterpret_cast<void*>(a); };
  p.grouped_gemm = {at(0x10000), at(0x20000), at(0x30000), g, m, n, k, dtype};
  return p;
}

const char* const k_wgmma[] = {"grouped_gemm.wgmma_tma.128x256x64_s4", "grouped_gemm.wgmma_tma.128x128x64_s6"};

}  // namespace

TEST(GroupedGemmSupports, TheInstancesAreRegisteredWithTheirFeatures) {
  for (const char* name : k_wgmma) {
    const Instance& inst = registered(name);
    EXPECT_EQ(inst.family, Family::grouped_gemm);
    EXPECT_EQ(inst.variant, "wgmma_tma");
    EXPECT_EQ(inst.dtypes, std::vector<DType>{DType::bf16});
    // As gemm.wgmma_tma declares them: not applicable where a target lacks one.
    EXPECT_EQ(inst.features, (std::vector<std::string>{"wgmma", "tma", "mbarrier", "setmaxnreg"}));
    EXPECT_NE(inst.config_json.find("\"bm\":128"), std::string::npos) << inst.config_json;
    EXPECT_NE(inst.config_json.find("\"bk\":64"), std::string::npos) << inst.config_json;
  }
  const Instance& simt = registered("grouped_gemm.simt.128x128x16_t8x8");
  EXPECT_EQ(simt.family, Family::grouped_gemm);
  EXPECT_EQ(simt.features, std::vector<std::string>{"simt"});
}

TEST(GroupedGemmSupports, TheTargetShapeAndMoeShapesAreAccepted) {
  for (const char* name : k_wgmma) {
    EXPECT_EQ(registered(name).supports(problem(4, 8192, 4096, 7168)), "") << name;
    EXPECT_EQ(registered(name).supports(problem(8, 512, 7168, 2048)), "") << name;
    EXPECT_EQ(registered(name).supports(problem(1, 128, 8, 8)), "") << name;      // one tile
    EXPECT_EQ(registered(name).supports(problem(2, 256, 264, 520)), "") << name;  // N and K off the tile
  }
}

TEST(GroupedGemmSupports, TheWgmmaInstancesRefuseWhatTheyCannotRunSayingWhy) {
  for (const char* name : k_wgmma) {
    const Instance& inst = registered(name);
    EXPECT_NE(inst.supports(problem(2, 192, 64, 64)).find("multiple of 128"), std::string::npos) << name;
    EXPECT_NE(inst.supports(problem(3, 128, 255, 64)).find("multiples of 8"), std::string::npos) << name;
    EXPECT_NE(inst.supports(problem(3, 128, 64, 63)).find("use the simt variant"), std::string::npos) << name;
    EXPECT_NE(inst.supports(problem(1, 128, 64, 64, DType::f16)).find("takes bf16"), std::string::npos) << name;
    EXPECT_NE(inst.supports(problem(0, 128, 64, 64)).find("positive"), std::string::npos) << name;
    Problem misaligned = problem(2, 128, 64, 64);
    misaligned.grouped_gemm.b = reinterpret_cast<const void*>(std::uintptr_t{0x20008});
    EXPECT_NE(inst.supports(misaligned).find("16-byte aligned"), std::string::npos) << name;
    Problem other;
    other.family = Family::gemm;
    EXPECT_EQ(inst.supports(other), "not a grouped_gemm problem");
  }
}

TEST(GroupedGemmSupports, TheSimtInstanceTakesOddNAndK) {
  const Instance& simt = registered("grouped_gemm.simt.128x128x16_t8x8");
  EXPECT_EQ(simt.supports(problem(3, 128, 255, 63)), "");
  EXPECT_EQ(simt.supports(problem(2, 128, 1, 1)), "");
  EXPECT_NE(simt.supports(problem(70000, 128, 8, 8)).find("65535"), std::string::npos);
}

namespace {
// The same problem in the masked layout (a stand-in address for masked_m).
Problem masked(int g, int m, int n, int k) {
  Problem p = problem(g, m, n, k);
  p.grouped_gemm.masked_m = reinterpret_cast<const int*>(std::uintptr_t{0x40000});
  return p;
}
}  // namespace

TEST(GroupedGemmSupports, TheMaskedLayoutTakesAnyRowsPerGroup) {
  for (const char* name : k_wgmma) {
    const Instance& inst = registered(name);
    EXPECT_EQ(inst.supports(masked(8, 256, 4096, 7168)), "") << name;
    EXPECT_EQ(inst.supports(masked(5, 65, 264, 520)), "") << name;
    EXPECT_EQ(inst.supports(masked(3, 1, 64, 64)), "") << name;
    EXPECT_EQ(inst.supports(masked(2, 192, 64, 64)), "") << name;  // refused contiguous, above
    // What TMA needs still holds.
    EXPECT_NE(inst.supports(masked(3, 130, 255, 64)).find("multiples of 8"), std::string::npos) << name;
    Problem misaligned = masked(2, 65, 64, 64);
    misaligned.grouped_gemm.d = reinterpret_cast<void*>(std::uintptr_t{0x30008});
    EXPECT_NE(inst.supports(misaligned).find("16-byte aligned"), std::string::npos) << name;
  }
  const Instance& simt = registered("grouped_gemm.simt.128x128x16_t8x8");
  EXPECT_EQ(simt.supports(masked(3, 130, 255, 63)), "");
  EXPECT_EQ(simt.supports(masked(4, 7, 1, 1)), "");
}
