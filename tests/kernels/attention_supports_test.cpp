// attention's instances lay (batch, head) pairs over the grid's z and y (common/attention_grid.cuh):
// b x h above 65535 runs as long as each of b and h is at most 65535, and their configs say so
// (max_b, max_h: the limits the selection reads). Host code only: nothing is launched.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kport/kernels/registry.h"

using namespace kport::kernels;

namespace {

Problem problem(int b, int h, int l, int d) {
  Problem p;
  p.family = Family::attention;
  // 256-byte aligned stand-ins: supports() only looks at the addresses.
  auto at = [](std::uintptr_t a) { return reinterpret_cast<void*>(a); };
  p.attention = {at(0x10000), at(0x20000), at(0x30000), at(0x40000), nullptr, b, h, l, d, false, 0.125f, DType::bf16};
  return p;
}

const char* const k_instances[] = {"attention.simt.q32_k32", "attention.mma_sync.d128_br64_bc64",
                                   "attention.wgmma_tma.d128_br128_bc128_s3"};

}  // namespace

TEST(AttentionSupports, BatchTimesHeadsAbove65535RunsAndEachAbove65535IsRefused) {
  for (const char* name : k_instances) {
    const Instance* inst = find_instance(name);
    ASSERT_NE(inst, nullptr) << name;
    // b = 512, h = 128: 65536 (batch, head) pairs, one more than a grid axis holds.
    const std::string wide = inst->supports(problem(512, 128, 256, 128));
    if (inst->variant == "wgmma_tma")  // without a driver it stops at the tensor-map encoder
      EXPECT_TRUE(wide.empty() || wide.find("cuTensorMapEncodeTiled") != std::string::npos) << name << ": " << wide;
    else
      EXPECT_EQ(wide, "") << name;
    for (auto [b, h] : {std::pair{65536, 1}, std::pair{1, 65536}}) {
      const std::string why = inst->supports(problem(b, h, 256, 128));
      EXPECT_NE(why.find("at most 65535"), std::string::npos) << name << " b=" << b << " h=" << h << ": " << why;
    }
    EXPECT_NE(inst->config_json.find(R"("max_b":65535,"max_h":65535)"), std::string::npos)
        << name << ": " << inst->config_json;
  }
}
