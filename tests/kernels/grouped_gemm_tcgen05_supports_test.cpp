// grouped_gemm.tcgen05 (sm_100a, never run here) runs the contiguous layout and the masked
// layout (any m) in bf16 and answers supports() with a reason for what it does not: in the
// contiguous layout a group's rows not a multiple of the 128-row tile, in either K or N not a
// multiple of 8 (TMA), other dtypes, misaligned operands or counts. Host code only: nothing is
// launched.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kport/kernels/registry.h"

using namespace kport::kernels;

namespace {

const Instance& instance() {
  const Instance* inst = find_instance("grouped_gemm.tcgen05.128x256x64_s4");
  EXPECT_NE(inst, nullptr);
  return *inst;
}

// 256-byte aligned stand-ins unless told: supports() only looks at the addresses.
Problem problem(int g, int m, int n, int k, DType dtype = DType::bf16, std::uintptr_t a = 0x10000) {
  Problem p;
  p.family = Family::grouped_gemm;
  auto at = [](std::uintptr_t x) { return reinterpret_cast<void*>(x); };
  p.grouped_gemm = GroupedGemmArgs{at(a), at(0x20000), at(0x30000), g, m, n, k, dtype};
  return p;
}

}  // namespace

TEST(GroupedGemmTcgen05Supports, TheContiguousLayoutInBf16AndEveryRefusalSaysWhy) {
  const Instance& inst = instance();
  EXPECT_EQ(inst.family, Family::grouped_gemm);
  EXPECT_EQ(inst.variant, std::string("tcgen05"));
  EXPECT_EQ(inst.dtypes, (std::vector<DType>{DType::bf16}));
  EXPECT_NE(inst.config_json.find("\"verified\":false"), std::string::npos) << inst.config_json;
  EXPECT_NE(inst.config_json.find("\"bm\":128"), std::string::npos) << "its geometry for the best-kernel query";
  // The target and MoE layers of the grid, K not a multiple of 64 included (zero-filled
  // at the end of each group's slice by the 3-D map).
  for (const Problem& p : {problem(4, 8192, 4096, 7168), problem(8, 1024, 7168, 2048), problem(3, 256, 264, 520),
                           problem(16, 128, 512, 264)})
    EXPECT_EQ(inst.supports(p), "");

  EXPECT_NE(inst.supports(problem(4, 100, 4096, 7168)).find("multiple of 128"), std::string::npos);
  EXPECT_NE(inst.supports(problem(4, 128, 4096, 7170)).find("multiples of 8"), std::string::npos);
  EXPECT_NE(inst.supports(problem(4, 128, 4100, 7168)).find("multiples of 8"), std::string::npos);
  EXPECT_NE(inst.supports(problem(4, 128, 4096, 7168, DType::f16)).find("takes bf16"), std::string::npos);
  EXPECT_NE(inst.supports(problem(4, 128, 4096, 7168, DType::bf16, 0x10008)).find("16-byte aligned"),
            std::string::npos);
  EXPECT_NE(inst.supports(problem(0, 128, 4096, 7168)).find("positive"), std::string::npos);
}

// The masked layout of MoE decode (counts on the device): any m, the decode shapes of the
// bench grid and the odd m of the check grid; the TMA strides and alignments still hold, and
// the counts must be int-aligned.
TEST(GroupedGemmTcgen05Supports, TheMaskedLayoutTakesAnyMAndEveryRefusalSaysWhy) {
  const Instance& inst = instance();
  alignas(int) static const int counts[2] = {0, 0};
  auto masked = [&](int g, int m, int n, int k, std::uintptr_t a = 0x10000) {
    Problem p = problem(g, m, n, k, DType::bf16, a);
    p.grouped_gemm.masked_m = counts;
    return p;
  };
  for (const Problem& p : {masked(8, 256, 4096, 7168), masked(32, 128, 7168, 2048), masked(4, 1, 264, 520),
                           masked(3, 7, 4104, 72), masked(5, 65, 8, 8), masked(2, 200, 264, 520)})
    EXPECT_EQ(inst.supports(p), "") << p.grouped_gemm.m;
  EXPECT_NE(inst.supports(problem(5, 65, 8, 8)).find("multiple of 128"), std::string::npos)
      << "contiguous: m off the tile";

  EXPECT_NE(inst.supports(masked(4, 65, 4096, 7170)).find("multiples of 8"), std::string::npos);
  EXPECT_NE(inst.supports(masked(4, 65, 4100, 7168)).find("multiples of 8"), std::string::npos);
  EXPECT_NE(inst.supports(masked(4, 65, 4096, 7168, 0x10008)).find("16-byte aligned"), std::string::npos);
  Problem odd = masked(4, 65, 4096, 7168);
  odd.grouped_gemm.masked_m = reinterpret_cast<const int*>(reinterpret_cast<std::uintptr_t>(counts) + 2);
  EXPECT_NE(inst.supports(odd).find("masked_m must be int-aligned"), std::string::npos) << inst.supports(odd);
  const std::string many = inst.supports(masked(65536, 65536, 65536, 64));
  EXPECT_NE(many.find("the masked layout's tiles"), std::string::npos) << many;
  Problem half = masked(4, 65, 4096, 7168);
  half.grouped_gemm.dtype = DType::f16;
  EXPECT_NE(inst.supports(half).find("takes bf16"), std::string::npos);
}
