// gemm_fp8.tcgen05 (sm_100a, never run here) answers supports() with a reason for what it
// cannot run: fp32 block scales (sm_100a's block-scaled MMA takes UE8M0: ask scale=3), block
// scales without their UE8M0 bytes or with K not a multiple of 128, K not a multiple of 16
// (TMA), other dtypes, misaligned operands; per-tensor, row-wise and UE8M0 block scales at odd
// M and N are accepted. Host code only: nothing is launched.
#include <gtest/gtest.h>

#include <cstdint>

#include "fp8_problems.h"
#include "kport/kernels/registry.h"

using namespace kport::kernels;
using namespace kport::kernels::stand_ins;

namespace {

const Instance& instance() { return registered("gemm_fp8.tcgen05.128x256x128_s4"); }

}  // namespace

TEST(GemmFp8Tcgen05Supports, TensorRowAndUe8m0BlockScalesOfBothFormatsAtAnyMAndN) {
  const Instance& inst = instance();
  EXPECT_EQ(inst.family, Family::gemm_fp8);
  EXPECT_EQ(inst.variant, std::string("tcgen05"));
  EXPECT_EQ(inst.dtypes, (std::vector<DType>{DType::e4m3, DType::e5m2}));
  for (Fp8Scale s : {Fp8Scale::tensor, Fp8Scale::row, Fp8Scale::block128_ue8m0})
    for (DType t : {DType::e4m3, DType::e5m2}) {
      EXPECT_EQ(inst.supports(gemm_fp8_problem(4096, 7168, 16384, s, t)), "");
      EXPECT_EQ(inst.supports(gemm_fp8_problem(1, 1, 128, s, t)), "");
      EXPECT_EQ(inst.supports(gemm_fp8_problem(127, 255, 640, s, t)), "");
    }
  EXPECT_NE(inst.config_json.find("\"block128_ue8m0\""), std::string::npos) << inst.config_json;
  EXPECT_NE(inst.config_json.find("\"verified\":false"), std::string::npos) << inst.config_json;
}

TEST(GemmFp8Tcgen05Supports, Fp32BlockScalesAreRefusedAskingForUe8m0) {
  for (DType t : {DType::e4m3, DType::e5m2}) {
    const std::string why = instance().supports(gemm_fp8_problem(4096, 7168, 16384, Fp8Scale::block128, t));
    EXPECT_NE(why.find("fp32 block scales (scale=2) are not taken"), std::string::npos) << why;
    EXPECT_NE(why.find("UE8M0"), std::string::npos) << why;
    EXPECT_NE(why.find("ask scale=3"), std::string::npos) << why;
  }
}

TEST(GemmFp8Tcgen05Supports, Ue8m0BlockScalesNeedWholeKBlocksAndTheirBytes) {
  const std::string k = instance().supports(gemm_fp8_problem(64, 64, 528, Fp8Scale::block128_ue8m0));
  EXPECT_NE(k.find("K=528 is not a multiple of 128"), std::string::npos) << k;
  EXPECT_EQ(instance().supports(gemm_fp8_problem(64, 64, 528, Fp8Scale::row)), "");  // only the block mode needs it

  Problem p = gemm_fp8_problem(256, 256, 256, Fp8Scale::block128_ue8m0);
  p.gemm_fp8.ue8m0_b = nullptr;
  const std::string missing = instance().supports(p);
  EXPECT_NE(missing.find("needs the scales as UE8M0 bytes"), std::string::npos) << missing;

  p = gemm_fp8_problem(256, 256, 256, Fp8Scale::block128_ue8m0);
  p.gemm_fp8.ue8m0_a = reinterpret_cast<const std::uint8_t*>(std::uintptr_t{0x60004});
  const std::string aligned = instance().supports(p);
  EXPECT_NE(aligned.find("UE8M0 scales (ue8m0_a, ue8m0_b) must be 16-byte aligned"), std::string::npos) << aligned;
}

TEST(GemmFp8Tcgen05Supports, WhatTmaCannotReadIsRefused) {
  const std::string k = instance().supports(gemm_fp8_problem(64, 64, 100, Fp8Scale::tensor));
  EXPECT_NE(k.find("K=100 is not a multiple of 16"), std::string::npos) << k;
  const std::string k3 = instance().supports(gemm_fp8_problem(64, 64, 100, Fp8Scale::block128_ue8m0));
  EXPECT_NE(k3.find("K=100 is not a multiple of 16"), std::string::npos) << k3;
  const std::string aligned = instance().supports(gemm_fp8_problem(64, 64, 128, Fp8Scale::row, DType::e4m3, 0x10008));
  EXPECT_NE(aligned.find("16-byte aligned"), std::string::npos) << aligned;
  const std::string dtype = instance().supports(gemm_fp8_problem(64, 64, 128, Fp8Scale::tensor, DType::bf16));
  EXPECT_NE(dtype.find("takes e4m3 or e5m2"), std::string::npos) << dtype;
}
