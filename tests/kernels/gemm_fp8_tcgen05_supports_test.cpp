// gemm_fp8.tcgen05 (sm_100a, never run here) answers supports() with a reason for what it
// cannot run: block128 scales (the block-scaled MMA with UE8M0 scales is a later variant),
// K not a multiple of 16 (TMA), other dtypes, misaligned operands; per-tensor and row-wise
// scales at odd M and N are accepted. Host code only: nothing is launched.
#include <gtest/gtest.h>

#include <cstdint>

#include "kport/kernels/registry.h"

using namespace kport::kernels;

namespace {

const Instance& instance() {
  const Instance* inst = find_instance("gemm_fp8.tcgen05.128x256x128_s4");
  EXPECT_NE(inst, nullptr);
  return *inst;
}

Problem problem(int m, int n, int k, Fp8Scale scale, DType dtype = DType::e4m3, std::uintptr_t a = 0x10000) {
  Problem p;
  p.family = Family::gemm_fp8;
  // 256-byte aligned stand-ins unless told: supports() only looks at the addresses.
  auto at = [](std::uintptr_t x) { return reinterpret_cast<void*>(x); };
  p.gemm_fp8 = {at(a),
                at(0x20000),
                at(0x30000),
                static_cast<const float*>(at(0x40000)),
                static_cast<const float*>(at(0x50000)),
                m,
                n,
                k,
                scale,
                dtype};
  return p;
}

}  // namespace

TEST(GemmFp8Tcgen05Supports, TensorAndRowScalesOfBothFormatsAtAnyMAndN) {
  const Instance& inst = instance();
  EXPECT_EQ(inst.family, Family::gemm_fp8);
  EXPECT_EQ(inst.variant, std::string("tcgen05"));
  EXPECT_EQ(inst.dtypes, (std::vector<DType>{DType::e4m3, DType::e5m2}));
  for (Fp8Scale s : {Fp8Scale::tensor, Fp8Scale::row})
    for (DType t : {DType::e4m3, DType::e5m2}) {
      EXPECT_EQ(inst.supports(problem(4096, 7168, 16384, s, t)), "");
      EXPECT_EQ(inst.supports(problem(1, 1, 128, s, t)), "");
      EXPECT_EQ(inst.supports(problem(127, 255, 528, s, t)), "");
    }
}

TEST(GemmFp8Tcgen05Supports, BlockScalesAreRefusedWithTheReason) {
  const std::string why = instance().supports(problem(4096, 7168, 16384, Fp8Scale::block128));
  EXPECT_NE(why.find("block128 scales are not taken"), std::string::npos) << why;
  EXPECT_NE(why.find("UE8M0"), std::string::npos) << why;
}

TEST(GemmFp8Tcgen05Supports, WhatTmaCannotReadIsRefused) {
  const std::string k = instance().supports(problem(64, 64, 100, Fp8Scale::tensor));
  EXPECT_NE(k.find("K=100 is not a multiple of 16"), std::string::npos) << k;
  const std::string aligned = instance().supports(problem(64, 64, 128, Fp8Scale::row, DType::e4m3, 0x10008));
  EXPECT_NE(aligned.find("16-byte aligned"), std::string::npos) << aligned;
  const std::string dtype = instance().supports(problem(64, 64, 128, Fp8Scale::tensor, DType::bf16));
  EXPECT_NE(dtype.find("takes e4m3 or e5m2"), std::string::npos) << dtype;
}
