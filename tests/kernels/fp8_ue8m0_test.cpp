// gemm_fp8's and grouped_gemm_fp8's UE8M0 block scales (block128_ue8m0) on the host: the byte a
// power of two becomes, the tiled layout the block-scaled tcgen05 MMA reads (fp8_scales.h), and
// the packing the harness does before a check (one operand, and every group's B one after the
// other), against values worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "kport/kernels/fp8_scales.h"

using namespace kport::kernels;

namespace {

float bits_to_float(std::uint32_t bits) {
  float f = 0.0f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

TEST(Ue8m0, PowersOfTwoBecomeTheirBiasedExponent) {
  std::uint8_t b = 0;
  ASSERT_TRUE(ue8m0_from_float(1.0f, b));
  EXPECT_EQ(b, 127);
  ASSERT_TRUE(ue8m0_from_float(2.0f, b));
  EXPECT_EQ(b, 128);
  ASSERT_TRUE(ue8m0_from_float(0.5f, b));
  EXPECT_EQ(b, 126);
  ASSERT_TRUE(ue8m0_from_float(std::ldexp(1.0f, 127), b));
  EXPECT_EQ(b, 254);
  ASSERT_TRUE(ue8m0_from_float(std::ldexp(1.0f, -126), b));
  EXPECT_EQ(b, 1);
  ASSERT_TRUE(ue8m0_from_float(std::ldexp(1.0f, -127), b));  // fp32 subnormal, UE8M0's smallest
  EXPECT_EQ(b, 0);
}

TEST(Ue8m0, EverythingElseIsRefused) {
  std::uint8_t b = 42;
  for (float f : {3.0f, 0.75f, 1.0f + 1.0f / 1024, 0.0f, -0.0f, -1.0f, -0.5f, std::ldexp(1.0f, -128),
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), bits_to_float(0x00000001u)})
    EXPECT_FALSE(ue8m0_from_float(f, b)) << f;
  EXPECT_EQ(b, 42);  // untouched by a refusal
}

TEST(Ue8m0, EveryByteRoundTripsAndTwoFiftyFiveIsNaN) {
  for (int e = 0; e <= 254; ++e) {
    const float f = ue8m0_to_float(static_cast<std::uint8_t>(e));
    EXPECT_EQ(f, std::ldexp(1.0f, e - 127)) << e;
    std::uint8_t back = 0;
    ASSERT_TRUE(ue8m0_from_float(f, back)) << e;
    EXPECT_EQ(back, e);
  }
  EXPECT_TRUE(std::isnan(ue8m0_to_float(255)));
  EXPECT_EQ(ue8m0_to_float(k_ue8m0_one), 1.0f);
}

TEST(Ue8m0Layout, SizesAreWholeTilesOf128RowsAndFourKBlocks) {
  EXPECT_EQ(fp8_ue8m0_kgroups(128), 1);
  EXPECT_EQ(fp8_ue8m0_kgroups(512), 1);
  EXPECT_EQ(fp8_ue8m0_kgroups(640), 2);
  EXPECT_EQ(fp8_ue8m0_kgroups(16384), 32);
  EXPECT_EQ(fp8_ue8m0_bytes(1, 128), 512);
  EXPECT_EQ(fp8_ue8m0_bytes(129, 640), 2 * 2 * 512);
  EXPECT_EQ(fp8_ue8m0_bytes(4096, 16384), 32LL * 32 * 512);  // one byte per row and K block
  EXPECT_EQ(k_ue8m0_tile_bytes, 512);
}

TEST(Ue8m0Layout, OffsetsWorkedOutByHand) {
  // Inside a tile: line r % 32 (16 bytes), word r % 128 / 32, byte kblock % 4.
  EXPECT_EQ(fp8_ue8m0_offset(0, 0, 128), 0);
  EXPECT_EQ(fp8_ue8m0_offset(1, 0, 128), 16);
  EXPECT_EQ(fp8_ue8m0_offset(32, 0, 128), 4);
  EXPECT_EQ(fp8_ue8m0_offset(33, 2, 384), 16 + 4 + 2);
  EXPECT_EQ(fp8_ue8m0_offset(127, 3, 512), 31 * 16 + 3 * 4 + 3);
  // Tiles row-major over (row tile, K-block group).
  EXPECT_EQ(fp8_ue8m0_offset(128, 0, 128), 512);
  EXPECT_EQ(fp8_ue8m0_offset(0, 4, 1024), 512);
  EXPECT_EQ(fp8_ue8m0_offset(128, 0, 1024), 2 * 512);
  EXPECT_EQ(fp8_ue8m0_offset(128, 4, 1024), 3 * 512);
  EXPECT_EQ(fp8_ue8m0_offset(300, 9, 1280), (2 * 3 + 2) * 512 + (300 % 32) * 16 + (300 % 128 / 32) * 4 + 1);
}

TEST(Ue8m0Layout, EveryByteOfWholeTilesBelongsToExactlyOneRowAndKBlock) {
  const int rows = 256, k = 8 * 128, kblocks = 8;
  std::set<long long> seen;
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < kblocks; ++j) {
      const long long at = fp8_ue8m0_offset(r, j, k);
      ASSERT_GE(at, 0);
      ASSERT_LT(at, fp8_ue8m0_bytes(rows, k));
      EXPECT_TRUE(seen.insert(at).second) << r << "," << j;
    }
  EXPECT_EQ(static_cast<long long>(seen.size()), fp8_ue8m0_bytes(rows, k));
}

TEST(Ue8m0Layout, ATileIsWhatTcgen05CpPutsInTensorMemory) {
  // 32x128b.warpx4 copies line l (16 bytes) of a tile to lane l of four 32-bit columns; the
  // MMA reads row r's scale in column r / 32 at lane r % 32, byte (the descriptor's
  // scale-factor id) = K block % 4. So byte 4c + j of line l must be row 32c + l, K block j.
  for (int l = 0; l < 32; ++l)
    for (int c = 0; c < 4; ++c)
      for (int j = 0; j < 4; ++j) EXPECT_EQ(fp8_ue8m0_offset(32 * c + l, j, 512), l * 16 + 4 * c + j);
}

TEST(Ue8m0Pack, RowScalesOfALandAtTheirOffsetsAndPaddingIsOne) {
  const int m = 130, k = 5 * 128, kblocks = 5;
  std::vector<float> sa(static_cast<std::size_t>(fp8_scale_count(Fp8Scale::block128_ue8m0, true, m, k)), 0.0f);
  auto exponent = [](int r, int j) { return (r * 7 + j * 3) % 21 - 10; };
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < kblocks; ++j)
      sa[fp8_scale_index(Fp8Scale::block128_ue8m0, true, r, j, m, kblocks)] = std::ldexp(1.0f, exponent(r, j));
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(fp8_ue8m0_bytes(m, k)), 0);
  ASSERT_EQ(packed.size(), 2u * 2 * 512);
  ASSERT_TRUE(fp8_pack_ue8m0(sa.data(), true, m, k, packed.data()));
  std::vector<bool> used(packed.size(), false);
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < kblocks; ++j) {
      const auto at = static_cast<std::size_t>(fp8_ue8m0_offset(r, j, k));
      EXPECT_EQ(packed[at], exponent(r, j) + 127) << r << "," << j;
      used[at] = true;
    }
  int padding = 0;
  for (std::size_t i = 0; i < packed.size(); ++i)
    if (!used[i]) {
      ++padding;
      EXPECT_EQ(packed[i], k_ue8m0_one) << i;
    }
  EXPECT_EQ(padding, 2 * 2 * 512 - m * kblocks);
}

TEST(Ue8m0Pack, EachRowOfBCarriesItsBlocksScale) {
  const int n = 300, k = 2 * 128, kblocks = 2;  // three 128-row blocks, the last partial
  std::vector<float> sb(static_cast<std::size_t>(fp8_scale_count(Fp8Scale::block128_ue8m0, false, n, k)), 0.0f);
  ASSERT_EQ(sb.size(), 3u * 2);
  for (int p = 0; p < 3; ++p)
    for (int j = 0; j < kblocks; ++j)
      sb[fp8_scale_index(Fp8Scale::block128_ue8m0, false, 128 * p, j, n, kblocks)] = std::ldexp(1.0f, 4 * p - j);
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(fp8_ue8m0_bytes(n, k)), 0);
  ASSERT_TRUE(fp8_pack_ue8m0(sb.data(), false, n, k, packed.data()));
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < kblocks; ++j)
      EXPECT_EQ(packed[static_cast<std::size_t>(fp8_ue8m0_offset(r, j, k))], 127 + 4 * (r / 128) - j) << r << "," << j;
  // Rows 300..383 of the last tile are padding.
  EXPECT_EQ(packed[static_cast<std::size_t>(fp8_ue8m0_offset(300, 0, k))], k_ue8m0_one);
  EXPECT_EQ(packed[static_cast<std::size_t>(fp8_ue8m0_offset(383, 1, k))], k_ue8m0_one);
}

TEST(Ue8m0Pack, AScaleThatIsNotAPowerOfTwoIsRefusedAndNamed) {
  const int m = 4, k = 256;
  std::vector<float> sa(static_cast<std::size_t>(fp8_scale_count(Fp8Scale::block128_ue8m0, true, m, k)), 1.0f);
  const long long at = fp8_scale_index(Fp8Scale::block128_ue8m0, true, 3, 1, m, 2);
  sa[static_cast<std::size_t>(at)] = 0.3f;
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(fp8_ue8m0_bytes(m, k)));
  long long bad = -1;
  EXPECT_FALSE(fp8_pack_ue8m0(sa.data(), true, m, k, packed.data(), &bad));
  EXPECT_EQ(bad, at);
}

TEST(Ue8m0Pack, BlockModesShareTheFp32Layout) {
  EXPECT_TRUE(fp8_scale_is_block(Fp8Scale::block128));
  EXPECT_TRUE(fp8_scale_is_block(Fp8Scale::block128_ue8m0));
  EXPECT_FALSE(fp8_scale_is_block(Fp8Scale::row));
  EXPECT_FALSE(fp8_scale_is_block(Fp8Scale::tensor));
  for (bool of_a : {true, false}) {
    EXPECT_EQ(fp8_scale_count(Fp8Scale::block128_ue8m0, of_a, 1001, 384),
              fp8_scale_count(Fp8Scale::block128, of_a, 1001, 384));
    EXPECT_EQ(fp8_scale_index(Fp8Scale::block128_ue8m0, of_a, 300, 2, 1001, 3),
              fp8_scale_index(Fp8Scale::block128, of_a, 300, 2, 1001, 3));
  }
}

// grouped_gemm_fp8's scale=3: A's bytes are the tall A's; with each group's rows a multiple of
// 128, group i's rows start a tile of their own, so a 128-row tile of A (the kernels' row tile
// tm) reads scale tile tm, and group i's bytes are one [m, K] A's packed bytes shifted by
// i * fp8_ue8m0_bytes(m, K).
TEST(Ue8m0GroupedPack, TheTallAsGroupsStartWholeTiles) {
  const int m = 256, k = 5 * 128;
  for (int i = 0; i < 4; ++i)
    for (int r : {0, 1, 127, 128, 255})
      for (int j = 0; j < 5; ++j)
        EXPECT_EQ(fp8_ue8m0_offset(i * m + r, j, k), i * fp8_ue8m0_bytes(m, k) + fp8_ue8m0_offset(r, j, k))
            << i << "," << r << "," << j;
  EXPECT_EQ(fp8_ue8m0_bytes(4 * m, k), 4 * fp8_ue8m0_bytes(m, k));
}

// B's bytes: every group's N x K B packed as gemm_fp8's B, one group after the other, from the
// fp32 scales of every group (fp8_group_scale_b_offset), each at its own power-of-two gain as
// the harness makes them.
TEST(Ue8m0GroupedPack, EachGroupsBIsPackedAsOneBAtItsOffset) {
  const int groups = 3, n = 200, k = 5 * 128, kblocks = 5;  // two 128-row tiles a group, the last partial
  const long long per_group = fp8_scale_count(Fp8Scale::block128_ue8m0, false, n, k);
  ASSERT_EQ(per_group, 2 * 5);
  std::vector<float> sb(static_cast<std::size_t>(groups * per_group), 0.0f);
  auto exponent = [](int g, int p, int j) { return 3 * g - 2 * p + j - 4; };
  for (int g = 0; g < groups; ++g)
    for (int p = 0; p < 2; ++p)
      for (int j = 0; j < kblocks; ++j)
        sb[static_cast<std::size_t>(fp8_group_scale_b_offset(Fp8Scale::block128_ue8m0, g, n, k) +
                                    fp8_scale_index(Fp8Scale::block128_ue8m0, false, 128 * p, j, n, kblocks))] =
            std::ldexp(1.0f, exponent(g, p, j));
  ASSERT_EQ(fp8_group_ue8m0_b_offset(1, n, k), fp8_ue8m0_bytes(n, k));
  ASSERT_EQ(fp8_group_ue8m0_b_offset(groups, n, k), 3 * 2 * 2 * 512);
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(fp8_group_ue8m0_b_offset(groups, n, k)), 0);
  ASSERT_TRUE(fp8_pack_ue8m0_grouped_b(sb.data(), groups, n, k, packed.data()));
  for (int g = 0; g < groups; ++g) {
    const long long base = fp8_group_ue8m0_b_offset(g, n, k);
    for (int r = 0; r < n; ++r)
      for (int j = 0; j < kblocks; ++j)
        EXPECT_EQ(packed[static_cast<std::size_t>(base + fp8_ue8m0_offset(r, j, k))], 127 + exponent(g, r / 128, j))
            << g << "," << r << "," << j;
    // Rows 200..255 of each group's last tile and K blocks 5..7 of its last K-block group are
    // padding, never another group's scales.
    EXPECT_EQ(packed[static_cast<std::size_t>(base + fp8_ue8m0_offset(200, 0, k))], k_ue8m0_one);
    EXPECT_EQ(packed[static_cast<std::size_t>(base + fp8_ue8m0_offset(255, 4, k))], k_ue8m0_one);
    EXPECT_EQ(packed[static_cast<std::size_t>(base + fp8_ue8m0_offset(0, 7, k))], k_ue8m0_one);
    // Each group's bytes are exactly what packing its B alone gives (gemm_fp8's B).
    std::vector<std::uint8_t> alone(static_cast<std::size_t>(fp8_ue8m0_bytes(n, k)), 0);
    ASSERT_TRUE(fp8_pack_ue8m0(sb.data() + g * per_group, false, n, k, alone.data()));
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(), packed.begin() + base)) << g;
  }
}

TEST(Ue8m0GroupedPack, OneGroupIsGemmFp8sBAndABadScaleIsNamedAmongAllGroups) {
  const int n = 300, k = 256;
  const long long per_group = fp8_scale_count(Fp8Scale::block128_ue8m0, false, n, k);
  std::vector<float> sb(static_cast<std::size_t>(4 * per_group), 0.5f);
  std::vector<std::uint8_t> one(static_cast<std::size_t>(fp8_ue8m0_bytes(n, k))), dense(one.size());
  ASSERT_TRUE(fp8_pack_ue8m0_grouped_b(sb.data(), 1, n, k, one.data()));
  ASSERT_TRUE(fp8_pack_ue8m0(sb.data(), false, n, k, dense.data()));
  EXPECT_EQ(one, dense);

  const long long at = fp8_group_scale_b_offset(Fp8Scale::block128_ue8m0, 2, n, k) +
                       fp8_scale_index(Fp8Scale::block128_ue8m0, false, 256, 1, n, 2);
  sb[static_cast<std::size_t>(at)] = 0.75f;  // group 2, rows 256.., K block 1: not a power of two
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(fp8_group_ue8m0_b_offset(4, n, k)));
  long long bad = -1;
  EXPECT_FALSE(fp8_pack_ue8m0_grouped_b(sb.data(), 4, n, k, packed.data(), &bad));
  EXPECT_EQ(bad, at);
}
