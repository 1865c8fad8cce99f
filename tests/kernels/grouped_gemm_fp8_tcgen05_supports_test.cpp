// grouped_gemm_fp8.tcgen05 (sm_100a, never run here) runs the contiguous layout in e4m3 and e5m2
// with per-tensor, row-wise and UE8M0 block scales, and answers supports() with a reason for
// what it does not: fp32 block scales (sm_100a's block-scaled MMA takes UE8M0: ask scale=3), a
// group's rows off the 128-row tile in the contiguous layout (the masked layout takes any m,
// but with UE8M0 block scales m a multiple of 128), K not a multiple of 16 (TMA) or, with block
// scales, of 128, block scales without their UE8M0 bytes, other dtypes and misaligned operands
// or counts. Host code only, from the variant's own object: nothing is launched.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fp8_problems.h"
#include "kport/kernels/registry.h"

using namespace kport::kernels;
using namespace kport::kernels::stand_ins;

namespace {

const Instance& instance() { return registered("grouped_gemm_fp8.tcgen05.128x256x128_s4"); }

constexpr Fp8Scale k_taken[] = {Fp8Scale::tensor, Fp8Scale::row, Fp8Scale::block128_ue8m0};

}  // namespace

TEST(GroupedGemmFp8Tcgen05Supports, TheInstanceIsRegisteredUnverifiedWithItsFeaturesAndTile) {
  const Instance& inst = instance();
  EXPECT_EQ(inst.family, Family::grouped_gemm_fp8);
  EXPECT_EQ(inst.variant, std::string("tcgen05"));
  EXPECT_EQ(inst.dtypes, (std::vector<DType>{DType::e4m3, DType::e5m2}));
  // As gemm_fp8.tcgen05 declares them: not applicable where a target lacks one.
  EXPECT_EQ(inst.features, (std::vector<std::string>{"tcgen05", "tmem", "tma", "mbarrier"}));
  EXPECT_NE(inst.config_json.find("\"verified\":false"), std::string::npos) << inst.config_json;
  EXPECT_NE(inst.config_json.find("\"bm\":128"), std::string::npos) << "its geometry for the best-kernel query";
  EXPECT_NE(inst.config_json.find("\"bn\":256"), std::string::npos) << inst.config_json;
  EXPECT_NE(inst.config_json.find("\"group_m_align\":128"), std::string::npos) << inst.config_json;
  EXPECT_NE(inst.config_json.find("\"block128_ue8m0\""), std::string::npos) << inst.config_json;
  EXPECT_EQ(inst.config_json.find("\"block128\""), std::string::npos) << "fp32 block scales are not taken";
}

TEST(GroupedGemmFp8Tcgen05Supports, TheContiguousLayoutInBothFormatsWithTensorRowAndUe8m0BlockScales) {
  for (Fp8Scale s : k_taken)
    for (DType t : {DType::e4m3, DType::e5m2}) {
      // The target, the MoE layers of the grid, N off every tile (one column, 200,
      // 264, 4104: a second B scale tile past N), one group and many.
      EXPECT_EQ(instance().supports(grouped_gemm_fp8_problem(4, 8192, 4096, 7168, s, t)), "");
      EXPECT_EQ(instance().supports(grouped_gemm_fp8_problem(8, 1024, 7168, 2048, s, t)), "");
      EXPECT_EQ(instance().supports(grouped_gemm_fp8_problem(8, 256, 4096, 7168, s, t)), "");
      EXPECT_EQ(instance().supports(grouped_gemm_fp8_problem(1, 128, 1, 128, s, t)), "");
      EXPECT_EQ(instance().supports(grouped_gemm_fp8_problem(3, 128, 264, 256, s, t)), "");
      EXPECT_EQ(instance().supports(grouped_gemm_fp8_problem(2, 384, 4104, 1024, s, t)), "");
      EXPECT_EQ(instance().supports(grouped_gemm_fp8_problem(64, 128, 200, 640, s, t)), "");
    }
}

TEST(GroupedGemmFp8Tcgen05Supports, Fp32BlockScalesAreRefusedAskingForScale3) {
  for (DType t : {DType::e4m3, DType::e5m2}) {
    const std::string why = instance().supports(grouped_gemm_fp8_problem(4, 8192, 4096, 7168, Fp8Scale::block128, t));
    EXPECT_NE(why.find("fp32 block scales (scale=2) are not taken by grouped_gemm_fp8.tcgen05"), std::string::npos)
        << why;
    EXPECT_NE(why.find("UE8M0"), std::string::npos) << why;
    EXPECT_NE(why.find("ask scale=3"), std::string::npos) << why;
  }
}

namespace {

// The masked layout: counts set (supports() only looks at their address).
Problem masked(int g, int m, int n, int k, Fp8Scale scale, DType dtype = DType::e4m3) {
  alignas(int) static const int counts[2] = {0, 0};
  Problem p = grouped_gemm_fp8_problem(g, m, n, k, scale, dtype);
  p.grouped_gemm_fp8.masked_m = counts;
  return p;
}

}  // namespace

TEST(GroupedGemmFp8Tcgen05Supports, TheMaskedLayoutTakesAnyMWithTensorAndRowScales) {
  for (Fp8Scale s : {Fp8Scale::tensor, Fp8Scale::row})
    for (DType t : {DType::e4m3, DType::e5m2}) {
      // The decode shapes of the bench grid, the odd m of the check grid (1, 7, 65, 200), N off
      // the tile and K a multiple of 16 only.
      EXPECT_EQ(instance().supports(masked(8, 256, 4096, 7168, s, t)), "");
      EXPECT_EQ(instance().supports(masked(32, 128, 7168, 2048, s, t)), "");
      EXPECT_EQ(instance().supports(masked(4, 1, 264, 384, s, t)), "");
      EXPECT_EQ(instance().supports(masked(3, 7, 4104, 1024, s, t)), "");
      EXPECT_EQ(instance().supports(masked(5, 65, 264, 384, s, t)), "");
      EXPECT_EQ(instance().supports(masked(2, 200, 200, 528, s, t)), "");
    }
}

TEST(GroupedGemmFp8Tcgen05Supports, TheMaskedLayoutWithUe8m0BlockScalesNeedsMAMultipleOf128) {
  for (DType t : {DType::e4m3, DType::e5m2}) {
    EXPECT_EQ(instance().supports(masked(8, 256, 4096, 7168, Fp8Scale::block128_ue8m0, t)), "");
    EXPECT_EQ(instance().supports(masked(32, 128, 7168, 2048, Fp8Scale::block128_ue8m0, t)), "");
    EXPECT_EQ(instance().supports(masked(2, 384, 4104, 1024, Fp8Scale::block128_ue8m0, t)), "");
    for (int m : {1, 7, 64, 65, 200}) {
      const std::string why = instance().supports(masked(5, m, 264, 384, Fp8Scale::block128_ue8m0, t));
      EXPECT_NE(why.find("the masked layout with UE8M0 block scales (scale=3) needs m (each group's rows) a "
                         "multiple of 128"),
                std::string::npos)
          << why;
      EXPECT_NE(why.find("(m=" + std::to_string(m) + ")"), std::string::npos) << why;
      EXPECT_NE(why.find("use scale=0 or 1"), std::string::npos) << why;
    }
  }
  // fp32 block scales stay refused, masked or not; block scales still need K in 128s.
  const std::string fp32 = instance().supports(masked(8, 256, 4096, 7168, Fp8Scale::block128));
  EXPECT_NE(fp32.find("ask scale=3"), std::string::npos) << fp32;
  const std::string k = instance().supports(masked(2, 256, 200, 528, Fp8Scale::block128_ue8m0));
  EXPECT_NE(k.find("K=528 is not a multiple of 128"), std::string::npos) << k;
}

TEST(GroupedGemmFp8Tcgen05Supports, TheMaskedLayoutRefusesKOffTmaStridesAndMisalignedCounts) {
  for (Fp8Scale s : k_taken) {
    const std::string why = instance().supports(masked(3, 65, 72, 520, s));
    EXPECT_NE(why.find("K=520 is not a multiple of 16"), std::string::npos) << why;
    Problem odd = masked(4, 128, 256, 512, s);
    odd.grouped_gemm_fp8.masked_m =
        reinterpret_cast<const int*>(reinterpret_cast<std::uintptr_t>(odd.grouped_gemm_fp8.masked_m) + 2);
    const std::string counts = instance().supports(odd);
    EXPECT_NE(counts.find("masked_m must be int-aligned"), std::string::npos) << counts;
  }
  const std::string many = instance().supports(masked(16384, 65536, 65536, 128, Fp8Scale::tensor));
  EXPECT_NE(many.find("the tiles (g*ceil(m/128)"), std::string::npos) << many;
}

TEST(GroupedGemmFp8Tcgen05Supports, RowsPerGroupOffTheTileAreRefusedSayingToPad) {
  for (Fp8Scale s : k_taken) {
    const std::string why = instance().supports(grouped_gemm_fp8_problem(2, 192, 256, 256, s));
    EXPECT_NE(why.find("m (the rows of each group) must be a multiple of 128"), std::string::npos) << why;
    EXPECT_NE(why.find("pad each group's rows"), std::string::npos) << why;
    EXPECT_NE(instance().supports(grouped_gemm_fp8_problem(3, 64, 256, 256, s)).find("multiple of 128"),
              std::string::npos);
  }
}

TEST(GroupedGemmFp8Tcgen05Supports, KMustBeAMultipleOf16AndOf128WithBlockScales) {
  for (Fp8Scale s : k_taken) {
    const std::string why = instance().supports(grouped_gemm_fp8_problem(3, 128, 72, 520, s));
    EXPECT_NE(why.find("K=520 is not a multiple of 16"), std::string::npos) << why;
  }
  EXPECT_EQ(instance().supports(grouped_gemm_fp8_problem(2, 256, 200, 528, Fp8Scale::tensor)), "");
  EXPECT_EQ(instance().supports(grouped_gemm_fp8_problem(2, 256, 200, 528, Fp8Scale::row)), "");
  const std::string why = instance().supports(grouped_gemm_fp8_problem(2, 256, 200, 528, Fp8Scale::block128_ue8m0));
  EXPECT_NE(why.find("K=528 is not a multiple of 128"), std::string::npos) << why;
}

TEST(GroupedGemmFp8Tcgen05Supports, Ue8m0BlockScalesNeedTheirBytesAligned) {
  Problem p = grouped_gemm_fp8_problem(4, 128, 256, 512, Fp8Scale::block128_ue8m0);
  p.grouped_gemm_fp8.ue8m0_b = nullptr;
  const std::string missing = instance().supports(p);
  EXPECT_NE(missing.find("needs the scales as UE8M0 bytes"), std::string::npos) << missing;

  p = grouped_gemm_fp8_problem(4, 128, 256, 512, Fp8Scale::block128_ue8m0);
  p.grouped_gemm_fp8.ue8m0_a = reinterpret_cast<const std::uint8_t*>(std::uintptr_t{0x60004});
  const std::string aligned = instance().supports(p);
  EXPECT_NE(aligned.find("UE8M0 scales (ue8m0_a, ue8m0_b) must be 16-byte aligned"), std::string::npos) << aligned;
  // Per-tensor and row-wise scales never read the bytes.
  p = grouped_gemm_fp8_problem(4, 128, 256, 512, Fp8Scale::row);
  EXPECT_EQ(p.grouped_gemm_fp8.ue8m0_a, nullptr);
  EXPECT_EQ(instance().supports(p), "");
}

TEST(GroupedGemmFp8Tcgen05Supports, OtherDtypesSizesAndMisalignedOperandsAreRefused) {
  const Instance& inst = instance();
  const std::string dtype = inst.supports(grouped_gemm_fp8_problem(1, 128, 64, 128, Fp8Scale::tensor, DType::bf16));
  EXPECT_NE(dtype.find("takes e4m3 or e5m2"), std::string::npos) << dtype;
  EXPECT_NE(inst.supports(grouped_gemm_fp8_problem(0, 128, 64, 128, Fp8Scale::tensor)).find("positive"),
            std::string::npos);
  EXPECT_NE(inst.supports(grouped_gemm_fp8_problem(2, 128, 0, 128, Fp8Scale::tensor)).find("positive"),
            std::string::npos);
  const std::string a = inst.supports(grouped_gemm_fp8_problem(2, 128, 64, 128, Fp8Scale::row, DType::e4m3, 0x10008));
  EXPECT_NE(a.find("A and B must be 16-byte aligned"), std::string::npos) << a;
  const std::string tall = inst.supports(grouped_gemm_fp8_problem(2049, 1048576, 64, 128, Fp8Scale::tensor));
  EXPECT_NE(tall.find("g*m"), std::string::npos) << tall;
  Problem dense;
  dense.family = Family::gemm_fp8;
  EXPECT_EQ(inst.supports(dense), "not a grouped_gemm_fp8 problem");
}
