// grouped_gemm.tcgen05 (sm_100a, never run here) runs the contiguous layout in bf16 and
// answers supports() with a reason for what it does not: the masked layout, a group's rows not
// a multiple of the 128-row tile, K or N not a multiple of 8 (TMA), other dtypes, misaligned
// operands. Host code only: nothing is launched.
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

  const int counts = 0;
  Problem masked = problem(8, 256, 4096, 7168);
  masked.grouped_gemm.masked_m = &counts;
  EXPECT_NE(inst.supports(masked).find("masked layout"), std::string::npos) << inst.supports(masked);
  EXPECT_NE(inst.supports(problem(4, 100, 4096, 7168)).find("multiple of 128"), std::string::npos);
  EXPECT_NE(inst.supports(problem(4, 128, 4096, 7170)).find("multiples of 8"), std::string::npos);
  EXPECT_NE(inst.supports(problem(4, 128, 4100, 7168)).find("multiples of 8"), std::string::npos);
  EXPECT_NE(inst.supports(problem(4, 128, 4096, 7168, DType::f16)).find("takes bf16"), std::string::npos);
  EXPECT_NE(inst.supports(problem(4, 128, 4096, 7168, DType::bf16, 0x10008)).find("16-byte aligned"),
            std::string::npos);
  EXPECT_NE(inst.supports(problem(0, 128, 4096, 7168)).find("positive"), std::string::npos);
}
