// gemm_fp8.wgmma_tma answers supports() with a reason for every problem it cannot run:
// K not a multiple of 16 (TMA), K not a multiple of 128 with block scales, other dtypes
// and misaligned operands; odd M and N are accepted. Host code only: nothing is launched.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "fp8_problems.h"
#include "kport/kernels/registry.h"

using namespace kport::kernels;
using namespace kport::kernels::stand_ins;

namespace {

const Instance& instance() { return registered("gemm_fp8.wgmma_tma.128x128x128_s6"); }

}  // namespace

TEST(GemmFp8Supports, EveryScaleModeOfBothFormatsIsRegistered) {
  const Instance& inst = instance();
  EXPECT_EQ(inst.family, Family::gemm_fp8);
  EXPECT_EQ(inst.dtypes, (std::vector<DType>{DType::e4m3, DType::e5m2}));
  EXPECT_NE(find_instance("gemm_fp8.wgmma_tma.128x64x128_s8"), nullptr);
  for (Fp8Scale s : {Fp8Scale::tensor, Fp8Scale::row, Fp8Scale::block128, Fp8Scale::block128_ue8m0})
    for (DType t : {DType::e4m3, DType::e5m2}) EXPECT_EQ(inst.supports(gemm_fp8_problem(4096, 7168, 16384, s, t)), "");
}

TEST(GemmFp8Supports, OddMAndNAreAccepted) {
  for (Fp8Scale s : {Fp8Scale::tensor, Fp8Scale::row, Fp8Scale::block128, Fp8Scale::block128_ue8m0}) {
    EXPECT_EQ(instance().supports(gemm_fp8_problem(127, 255, 128, s)), "");
    EXPECT_EQ(instance().supports(gemm_fp8_problem(1, 1, 128, s)), "");
  }
}

TEST(GemmFp8Supports, KNotAMultipleOf128IsRefusedOnlyWithBlockScales) {
  EXPECT_EQ(instance().supports(gemm_fp8_problem(33, 4104, 528, Fp8Scale::tensor)), "");
  EXPECT_EQ(instance().supports(gemm_fp8_problem(33, 4104, 528, Fp8Scale::row)), "");
  for (Fp8Scale s : {Fp8Scale::block128, Fp8Scale::block128_ue8m0}) {
    const std::string why = instance().supports(gemm_fp8_problem(33, 4104, 528, s));
    EXPECT_NE(why.find("K=528 is not a multiple of 128"), std::string::npos) << why;
  }
}

TEST(GemmFp8Supports, KNotAMultipleOf16IsRefusedInEveryMode) {
  for (Fp8Scale s : {Fp8Scale::tensor, Fp8Scale::row, Fp8Scale::block128, Fp8Scale::block128_ue8m0}) {
    const std::string why = instance().supports(gemm_fp8_problem(129, 4096, 520, s));
    EXPECT_NE(why.find("not a multiple of 16"), std::string::npos) << why;
  }
}

TEST(GemmFp8Supports, TheUnpromotedInstanceRefusesBlockScalesOnly) {
  const Instance* fast = find_instance("gemm_fp8.wgmma_tma.128x256x128_s4_fastacc");
  ASSERT_NE(fast, nullptr);
  EXPECT_EQ(fast->supports(gemm_fp8_problem(4096, 7168, 16384, Fp8Scale::tensor)), "");
  EXPECT_EQ(fast->supports(gemm_fp8_problem(127, 255, 528, Fp8Scale::row)), "");
  for (Fp8Scale s : {Fp8Scale::block128, Fp8Scale::block128_ue8m0})
    EXPECT_NE(fast->supports(gemm_fp8_problem(4096, 7168, 16384, s)).find("promoting instances"), std::string::npos);
  for (const char* name : {"gemm_fp8.wgmma_tma.128x128x128_s6_c2x1", "gemm_fp8.wgmma_tma.128x128x128_s6_ov",
                           "gemm_fp8.wgmma_tma.128x128x128_s6_c2x1_ov"}) {
    const Instance* inst = find_instance(name);
    ASSERT_NE(inst, nullptr) << name;
    EXPECT_EQ(inst->supports(gemm_fp8_problem(4096, 7168, 16384, Fp8Scale::block128)), "") << name;
    EXPECT_EQ(inst->supports(gemm_fp8_problem(4096, 7168, 16384, Fp8Scale::block128_ue8m0)), "") << name;
  }
}

TEST(GemmFp8Supports, PromotingInstancesListBothBlockModes) {
  // block128_ue8m0 hands its power-of-two scales over in fp32 too; Hopper's kernels read those.
  const std::string& cfg = instance().config_json;
  EXPECT_NE(cfg.find("\"block128\""), std::string::npos) << cfg;
  EXPECT_NE(cfg.find("\"block128_ue8m0\""), std::string::npos) << cfg;
  const Instance* fast = find_instance("gemm_fp8.wgmma_tma.128x256x128_s4_fastacc");
  ASSERT_NE(fast, nullptr);
  EXPECT_EQ(fast->config_json.find("block128"), std::string::npos) << fast->config_json;
}

TEST(GemmFp8Supports, TheWidePromotingInstancesTakeEveryModeAndOddN) {
  // Tiles of 160, 176 and 192 columns straddle scale blocks of B; N need not be a multiple of
  // the tile or of the block.
  for (const char* name : {"gemm_fp8.wgmma_tma.128x192x128_s5", "gemm_fp8.wgmma_tma.128x192x128_s5_c2x1",
                           "gemm_fp8.wgmma_tma.128x160x128_s6", "gemm_fp8.wgmma_tma.128x176x128_s5"}) {
    const Instance* inst = find_instance(name);
    ASSERT_NE(inst, nullptr) << name;
    for (Fp8Scale s : {Fp8Scale::tensor, Fp8Scale::row, Fp8Scale::block128, Fp8Scale::block128_ue8m0})
      for (DType t : {DType::e4m3, DType::e5m2}) {
        EXPECT_EQ(inst->supports(gemm_fp8_problem(4096, 7168, 16384, s, t)), "") << name;
        EXPECT_EQ(inst->supports(gemm_fp8_problem(77, 1001, 256, s, t)), "") << name;
      }
    EXPECT_NE(inst->supports(gemm_fp8_problem(64, 448, 400, Fp8Scale::block128)).find("K=400 is not a multiple of 128"),
              std::string::npos)
        << name;
  }
}

TEST(GemmFp8Supports, TheTallInstancesTakeEveryModeAndOddShapes) {
  // 256 rows a tile (two 64-row slices per consumer warpgroup): M free, K as the others, N free
  // but where D is stored by TMA (_sd): a multiple of 8 there, refused with the reason otherwise.
  for (const char* name : {"gemm_fp8.wgmma_tma.256x128x128_s4_sf_sd", "gemm_fp8.wgmma_tma.256x128x128_s4_c2x1"}) {
    const Instance* inst = find_instance(name);
    ASSERT_NE(inst, nullptr) << name;
    EXPECT_NE(inst->config_json.find("\"bm\":256"), std::string::npos) << inst->config_json;
    const bool staged = std::string_view(name).ends_with("_sd");
    EXPECT_EQ(inst->config_json.find("\"run_n_multiple\":8") != std::string::npos, staged) << inst->config_json;
    for (Fp8Scale s : {Fp8Scale::tensor, Fp8Scale::row, Fp8Scale::block128, Fp8Scale::block128_ue8m0})
      for (DType t : {DType::e4m3, DType::e5m2}) {
        EXPECT_EQ(inst->supports(gemm_fp8_problem(4096, 7168, 16384, s, t)), "") << name;
        EXPECT_EQ(inst->supports(gemm_fp8_problem(77, 1000, 256, s, t)), "") << name;
        EXPECT_EQ(inst->supports(gemm_fp8_problem(4095, 7160, 2048, s, t)), "") << name;
        const std::string odd_n = inst->supports(gemm_fp8_problem(4095, 7167, 2048, s, t));
        if (staged)
          EXPECT_NE(odd_n.find("N=7167: this instance stores D by TMA"), std::string::npos) << name << ": " << odd_n;
        else
          EXPECT_EQ(odd_n, "") << name;
      }
    EXPECT_NE(
        inst->supports(gemm_fp8_problem(300, 448, 400, Fp8Scale::block128)).find("K=400 is not a multiple of 128"),
        std::string::npos)
        << name;
  }
}

TEST(GemmFp8Supports, OtherDtypesAndMisalignedOperandsAreRefused) {
  EXPECT_NE(instance().supports(gemm_fp8_problem(128, 128, 128, Fp8Scale::tensor, DType::bf16)).find("e4m3 or e5m2"),
            std::string::npos);
  Problem p = gemm_fp8_problem(128, 128, 128, Fp8Scale::block128);
  p.gemm_fp8.scale_a = reinterpret_cast<const float*>(std::uintptr_t{0x40004});
  EXPECT_NE(instance().supports(p).find("scale_a must be 16-byte aligned"), std::string::npos);
  p = gemm_fp8_problem(128, 128, 128, Fp8Scale::tensor);
  p.gemm_fp8.b = reinterpret_cast<const void*>(std::uintptr_t{0x20008});
  EXPECT_NE(instance().supports(p).find("16-byte aligned"), std::string::npos);
  Problem other;
  other.family = Family::gemm;
  EXPECT_EQ(instance().supports(other), "not a gemm_fp8 problem");
}
