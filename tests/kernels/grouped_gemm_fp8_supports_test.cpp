// grouped_gemm_fp8.wgmma_tma answers supports() with a reason for every problem it cannot run:
// rows per group off the 128-row tile, K not a multiple of 16 (TMA), K not a multiple of 128
// with block scales (fp32 or UE8M0: scale=3 runs block128's code on its fp32 copy), other
// dtypes and misaligned operands; odd N and several groups are accepted in every mode. Host
// code only, from the variant's own object: nothing is launched.
#include <gtest/gtest.h>

#include <cstdint>

#include "fp8_problems.h"
#include "kport/kernels/registry.h"

using namespace kport::kernels;
using namespace kport::kernels::stand_ins;

namespace {

const char* const k_names[] = {"grouped_gemm_fp8.wgmma_tma.128x128x128_s6",
                               "grouped_gemm_fp8.wgmma_tma.128x160x128_s6"};

// scale=3 (block128_ue8m0) runs block128's code on its fp32 copy of the scales: the same rules.
constexpr Fp8Scale k_modes[] = {Fp8Scale::tensor, Fp8Scale::row, Fp8Scale::block128, Fp8Scale::block128_ue8m0};

}  // namespace

TEST(GroupedGemmFp8Supports, TheInstancesAreRegisteredWithTheirFeaturesAndTiles) {
  for (const char* name : k_names) {
    const Instance& inst = registered(name);
    EXPECT_EQ(inst.family, Family::grouped_gemm_fp8);
    EXPECT_EQ(inst.variant, "wgmma_tma");
    EXPECT_EQ(inst.dtypes, (std::vector<DType>{DType::e4m3, DType::e5m2}));
    // As gemm_fp8.wgmma_tma declares them: not applicable where a target lacks one.
    EXPECT_EQ(inst.features, (std::vector<std::string>{"wgmma", "tma", "mbarrier", "setmaxnreg"}));
    EXPECT_NE(inst.config_json.find("\"bm\":128"), std::string::npos) << inst.config_json;
    EXPECT_NE(inst.config_json.find("\"bk\":128"), std::string::npos) << inst.config_json;
    EXPECT_NE(inst.config_json.find("\"group_m_align\":128}"), std::string::npos) << inst.config_json;
    EXPECT_NE(inst.config_json.find("block128"), std::string::npos) << inst.config_json;  // promoting
  }
  EXPECT_NE(registered(k_names[1]).config_json.find("\"bn\":160"), std::string::npos);
}

TEST(GroupedGemmFp8Supports, TheTargetShapeAndMoeShapesAreAcceptedInEveryModeAndFormat) {
  for (const char* name : k_names)
    for (Fp8Scale s : k_modes)
      for (DType t : {DType::e4m3, DType::e5m2}) {
        EXPECT_EQ(registered(name).supports(grouped_gemm_fp8_problem(4, 8192, 4096, 7168, s, t)), "") << name;
        EXPECT_EQ(registered(name).supports(grouped_gemm_fp8_problem(8, 256, 7168, 2048, s, t)), "") << name;
        EXPECT_EQ(registered(name).supports(grouped_gemm_fp8_problem(1, 128, 1, 128, s, t)), "") << name;  // one column
        EXPECT_EQ(registered(name).supports(grouped_gemm_fp8_problem(2, 384, 4104, 1024, s, t)), "") << name;
      }
}

TEST(GroupedGemmFp8Supports, RowsPerGroupOffTheTileAreRefusedSayingToPad) {
  for (const char* name : k_names)
    for (Fp8Scale s : k_modes) {
      const std::string why = registered(name).supports(grouped_gemm_fp8_problem(2, 192, 256, 256, s));
      EXPECT_NE(why.find("m (the rows of each group) must be a multiple of 128"), std::string::npos) << why;
      EXPECT_NE(why.find("pad each group's rows"), std::string::npos) << why;
      EXPECT_NE(registered(name).supports(grouped_gemm_fp8_problem(3, 64, 256, 256, s)), "") << name;
    }
}

TEST(GroupedGemmFp8Supports, KNotAMultipleOf128IsRefusedOnlyWithBlockScales) {
  for (const char* name : k_names) {
    EXPECT_EQ(registered(name).supports(grouped_gemm_fp8_problem(2, 256, 200, 528, Fp8Scale::tensor)), "") << name;
    EXPECT_EQ(registered(name).supports(grouped_gemm_fp8_problem(2, 256, 200, 528, Fp8Scale::row)), "") << name;
    for (Fp8Scale s : {Fp8Scale::block128, Fp8Scale::block128_ue8m0}) {
      const std::string why = registered(name).supports(grouped_gemm_fp8_problem(2, 256, 200, 528, s));
      EXPECT_NE(why.find("K=528 is not a multiple of 128"), std::string::npos) << why;
    }
  }
}

TEST(GroupedGemmFp8Supports, KNotAMultipleOf16IsRefusedInEveryMode) {
  for (const char* name : k_names)
    for (Fp8Scale s : k_modes) {
      const std::string why = registered(name).supports(grouped_gemm_fp8_problem(3, 128, 72, 520, s));
      EXPECT_NE(why.find("K=520 is not a multiple of 16"), std::string::npos) << why;
    }
}

TEST(GroupedGemmFp8Supports, OtherDtypesSizesAndMisalignedOperandsAreRefused) {
  for (const char* name : k_names) {
    const Instance& inst = registered(name);
    EXPECT_NE(inst.supports(grouped_gemm_fp8_problem(1, 128, 64, 128, Fp8Scale::tensor, DType::bf16))
                  .find("takes e4m3 or e5m2"),
              std::string::npos);
    EXPECT_NE(inst.supports(grouped_gemm_fp8_problem(0, 128, 64, 128, Fp8Scale::tensor)).find("positive"),
              std::string::npos);
    EXPECT_NE(inst.supports(grouped_gemm_fp8_problem(2, 128, 0, 128, Fp8Scale::tensor)).find("positive"),
              std::string::npos);
    Problem b = grouped_gemm_fp8_problem(2, 128, 64, 128, Fp8Scale::tensor);
    b.grouped_gemm_fp8.b = reinterpret_cast<const void*>(std::uintptr_t{0x20008});
    EXPECT_NE(inst.supports(b).find("16-byte aligned"), std::string::npos);
    // scale_a is read by TMA only with block scales.
    Problem sa = grouped_gemm_fp8_problem(2, 128, 64, 128, Fp8Scale::block128);
    sa.grouped_gemm_fp8.scale_a = reinterpret_cast<const float*>(std::uintptr_t{0x40004});
    EXPECT_NE(inst.supports(sa).find("scale_a must be 16-byte aligned"), std::string::npos);
    sa.grouped_gemm_fp8.scale = Fp8Scale::block128_ue8m0;
    EXPECT_NE(inst.supports(sa).find("scale_a must be 16-byte aligned"), std::string::npos);
    sa.grouped_gemm_fp8.scale = Fp8Scale::row;
    EXPECT_EQ(inst.supports(sa), "");
    Problem dense;
    dense.family = Family::gemm_fp8;
    EXPECT_EQ(inst.supports(dense), "not a grouped_gemm_fp8 problem");
  }
}

TEST(GroupedGemmFp8Supports, TheMaskedLayoutTakesAnyRowsPerGroupInEveryModeButBlockScalesTakeMultiplesOf4) {
  const auto masked = [](int g, int m, int n, int k, Fp8Scale s) {
    Problem p = grouped_gemm_fp8_problem(g, m, n, k, s);
    p.grouped_gemm_fp8.masked_m = reinterpret_cast<const int*>(std::uintptr_t{0x60000});
    return p;
  };
  for (const char* name : k_names)
    for (Fp8Scale s : k_modes) {
      EXPECT_EQ(registered(name).supports(masked(8, 256, 4096, 7168, s)), "") << name;
      EXPECT_EQ(registered(name).supports(masked(8, 200, 264, 384, s)), "") << name;
      if (fp8_scale_is_block(s)) {
        // Each group's block scales of A must start 16-byte aligned: m a multiple of 4.
        const std::string why = registered(name).supports(masked(5, 65, 264, 384, s));
        EXPECT_NE(why.find("needs m (each group's rows) a multiple of 4"), std::string::npos) << why;
        EXPECT_NE(registered(name).supports(masked(3, 1, 64, 128, s)), "") << name;
      } else {
        EXPECT_EQ(registered(name).supports(masked(5, 65, 264, 384, s)), "") << name;
        EXPECT_EQ(registered(name).supports(masked(3, 1, 64, 128, s)), "") << name;
      }
      // K's rules are the contiguous layout's.
      EXPECT_NE(registered(name).supports(masked(2, 7, 64, 520, s)).find("not a multiple of 16"), std::string::npos);
    }
  for (const char* name : k_names) {
    for (Fp8Scale s : {Fp8Scale::block128, Fp8Scale::block128_ue8m0}) {
      const std::string why = registered(name).supports(masked(4, 7, 96, 272, s));
      EXPECT_NE(why.find("K=272 is not a multiple of 128"), std::string::npos) << why;
    }
    EXPECT_EQ(registered(name).supports(masked(4, 7, 96, 272, Fp8Scale::row)), "") << name;
  }
}

TEST(GroupedGemmFp8Supports, TheTallStagedInstanceTakesWhole256RowGroupsNOf8AndTensorOrBlockScalesContiguousOnly) {
  const Instance& inst = registered("grouped_gemm_fp8.wgmma_tma.256x128x128_s4_sf_sd");
  EXPECT_EQ(inst.family, Family::grouped_gemm_fp8);
  // Its rows per group and N's multiple as config keys and as the path bounds answers read.
  for (const char* key : {"\"bm\":256", "\"group_m_align\":256", "\"run_m_multiple\":256", "\"run_n_multiple\":8"})
    EXPECT_NE(inst.config_json.find(key), std::string::npos) << key << " in " << inst.config_json;
  EXPECT_NE(inst.config_json.find("\"scales\":[\"tensor\",\"block128\",\"block128_ue8m0\"]"), std::string::npos)
      << inst.config_json;
  for (DType t : {DType::e4m3, DType::e5m2}) {
    // Row-wise scales would spill its kernel: refused, naming the instances that take them.
    const std::string row = inst.supports(grouped_gemm_fp8_problem(4, 8192, 4096, 7168, Fp8Scale::row, t));
    EXPECT_NE(row.find("row-wise scales (scale=1) are not taken by this instance"), std::string::npos) << row;
  }
  for (Fp8Scale s : {Fp8Scale::tensor, Fp8Scale::block128, Fp8Scale::block128_ue8m0})
    for (DType t : {DType::e4m3, DType::e5m2}) {
      EXPECT_EQ(inst.supports(grouped_gemm_fp8_problem(4, 8192, 4096, 7168, s, t)), "");
      EXPECT_EQ(inst.supports(grouped_gemm_fp8_problem(8, 256, 7168, 2048, s, t)), "");
      EXPECT_EQ(inst.supports(grouped_gemm_fp8_problem(2, 512, 4104, 1024, s, t)), "");
      const std::string rows = inst.supports(grouped_gemm_fp8_problem(2, 384, 4104, 1024, s, t));
      EXPECT_NE(rows.find("m (the rows of each group) must be a multiple of 256"), std::string::npos) << rows;
      const std::string n = inst.supports(grouped_gemm_fp8_problem(2, 256, 4100, 1024, s, t));
      EXPECT_NE(n.find("N=4100: this instance stores D by TMA"), std::string::npos) << n;
      Problem masked = grouped_gemm_fp8_problem(8, 256, 4096, 7168, s, t);
      masked.grouped_gemm_fp8.masked_m = reinterpret_cast<const int*>(std::uintptr_t{0x60000});
      const std::string why = inst.supports(masked);
      EXPECT_NE(why.find("the masked layout (valid < m) runs the promoting 128-row tiles"), std::string::npos) << why;
    }
}

TEST(GroupedGemmFp8Supports, TheUnpromotedInstanceTakesTensorAndRowScalesInTheContiguousLayoutOnly) {
  const Instance& inst = registered("grouped_gemm_fp8.wgmma_tma.128x256x128_s4_fastacc");
  for (const char* key : {"\"bm\":128", "\"bn\":256", "\"promote_every_k\":0", "\"scales\":[\"tensor\",\"row\"]",
                          "\"group_m_align\":128"})
    EXPECT_NE(inst.config_json.find(key), std::string::npos) << key << " in " << inst.config_json;
  for (DType t : {DType::e4m3, DType::e5m2}) {
    for (Fp8Scale s : {Fp8Scale::tensor, Fp8Scale::row}) {
      EXPECT_EQ(inst.supports(grouped_gemm_fp8_problem(4, 8192, 4096, 7168, s, t)), "");
      EXPECT_EQ(inst.supports(grouped_gemm_fp8_problem(2, 384, 4100, 1024, s, t)), "");  // odd N: stored from registers
      Problem masked = grouped_gemm_fp8_problem(8, 256, 4096, 7168, s, t);
      masked.grouped_gemm_fp8.masked_m = reinterpret_cast<const int*>(std::uintptr_t{0x60000});
      EXPECT_NE(inst.supports(masked).find("the masked layout (valid < m) runs the promoting 128-row tiles"),
                std::string::npos);
    }
    for (Fp8Scale s : {Fp8Scale::block128, Fp8Scale::block128_ue8m0}) {
      const std::string why = inst.supports(grouped_gemm_fp8_problem(4, 8192, 4096, 7168, s, t));
      EXPECT_NE(why.find("block scales need the promoting instances"), std::string::npos) << why;
    }
  }
}
