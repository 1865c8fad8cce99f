// The scale layouts of gemm_fp8 (registry.h, GemmFp8Args): which fp32 scale multiplies
// which stored fp8 value, and the packed UE8M0 form of block scales that the block-scaled
// tcgen05 MMA of sm_100a reads. Plain C++ (no CUDA headers), shared by the kernels, the
// harness's quantizer and packer, and the CPU reference; the index functions are constexpr
// and usable in device code.
#pragma once

#include <cstdint>

namespace kport::kernels {

// How gemm_fp8 scales its operands (the shape's `scale` key, by number).
enum class Fp8Scale {
  tensor = 0,    // one fp32 each: scale_a[0], scale_b[0]
  row = 1,       // scale_a[M] per row of A; scale_b[N] per row of B (column of D)
  block128 = 2,  // scale_a per row and 128-wide K block, scale_b per 128x128 block of B
  // block128's groups, every scale a power of two, handed over twice: as fp32 in block128's
  // layout (scale_a, scale_b) and as UE8M0 bytes in the tiled layout below (ue8m0_a,
  // ue8m0_b). Blackwell's block-scaled MMA takes the bytes; fp32 readers take the floats,
  // which hold the same values exactly.
  block128_ue8m0 = 3,
};
constexpr int k_fp8_scale_modes = 4;
constexpr int k_fp8_block = 128;

// The modes whose scales cover 1x128 blocks of A and 128x128 blocks of B (K a multiple of 128).
constexpr bool fp8_scale_is_block(Fp8Scale mode) {
  return mode == Fp8Scale::block128 || mode == Fp8Scale::block128_ue8m0;
}

// Elements between consecutive K blocks of a block128 scale_a: M rounded up to 4, so every
// K block starts 16-byte aligned (what a TMA load of the row scales needs).
constexpr int fp8_scale_a_stride(int m) { return (m + 3) / 4 * 4; }

// Where the scale of row `row` (of A: a row of A; of B: a row of B) in K block `kblock`
// lives in scale_a (`of_a`) or scale_b, for a problem of `rows` rows and `kblocks` =
// ceil(K/128) K blocks. Usable in device code (constexpr).
constexpr long long fp8_scale_index(Fp8Scale mode, bool of_a, int row, int kblock, int rows, int kblocks) {
  switch (mode) {
    case Fp8Scale::tensor: return 0;
    case Fp8Scale::row: return row;
    case Fp8Scale::block128:
    case Fp8Scale::block128_ue8m0:
      return of_a ? static_cast<long long>(kblock) * fp8_scale_a_stride(rows) + row
                  : static_cast<long long>(row / k_fp8_block) * kblocks + kblock;
  }
  return 0;
}
// Number of fp32 scales scale_a (`of_a`) or scale_b holds.
constexpr long long fp8_scale_count(Fp8Scale mode, bool of_a, int rows, int k) {
  const long long kblocks = (k + k_fp8_block - 1) / k_fp8_block;
  switch (mode) {
    case Fp8Scale::tensor: return 1;
    case Fp8Scale::row: return rows;
    case Fp8Scale::block128:
    case Fp8Scale::block128_ue8m0:
      return of_a ? kblocks * fp8_scale_a_stride(rows) : (rows + k_fp8_block - 1) / k_fp8_block * kblocks;
  }
  return 1;
}

// grouped_gemm_fp8 holds gemm_fp8's scale_b of an N x K operand once per group, one after the
// other: where group `group`'s scales start in scale_b. A's scales are gemm_fp8's of the tall
// [groups*m, K] A (fp8_scale_index with rows = groups*m).
constexpr long long fp8_group_scale_b_offset(Fp8Scale mode, int group, int n, int k) {
  return group * fp8_scale_count(mode, false, n, k);
}

// ---- UE8M0 block scales (block128_ue8m0) ---------------------------------------------------
// A UE8M0 byte e is the scale 2^(e - 127): e in 0..254 (255 is NaN), i.e. 2^-127 .. 2^127;
// its bits are the exponent field of the fp32 value it stands for.
//
// Tiled layout, per operand of `rows` rows (M for A, N for B) and kblocks = ceil(K/128): one
// byte per row and 128-wide K block (a row of B carries the scale of the 128x128 block it lies
// in), in tiles of 128 rows x 4 K blocks, 512 bytes each. Tiles are row-major over (row tile
// t = row / 128, K-block group g = kblock / 4): tile (t, g) starts at byte
// (t * ceil(kblocks / 4) + g) * 512. Inside a tile, row r and K block j sit at byte
// (r % 32) * 16 + (r % 128 / 32) * 4 + j % 4: 32 lines of 16 bytes, line l holding rows l,
// l+32, l+64 and l+96, each as one 32-bit word whose byte j is K block j of the group. This
// is the 128x4 tiled scale layout of cuBLAS and CUTLASS with a 128-wide K block where they
// have a 32-wide one, and it is what tcgen05.cp 32x128b.warpx4 copies into tensor memory
// unchanged: the word of row r lands in column r / 32 of lanes r % 32 (+ 32, 64, 96), and an
// MMA picks byte j with the scale-factor ids of its instruction descriptor. Rows past `rows`
// and K blocks past kblocks are padding, set to 127 (a scale of 1).
constexpr int k_ue8m0_tile_rows = 128;
constexpr int k_ue8m0_tile_kblocks = 4;
constexpr int k_ue8m0_tile_bytes = k_ue8m0_tile_rows * k_ue8m0_tile_kblocks;
constexpr std::uint8_t k_ue8m0_one = 127;

// K-block groups (tiles along K) of an operand with `k` columns.
constexpr long long fp8_ue8m0_kgroups(int k) {
  const long long kblocks = (k + k_fp8_block - 1) / k_fp8_block;
  return (kblocks + k_ue8m0_tile_kblocks - 1) / k_ue8m0_tile_kblocks;
}
// Row tiles (tiles along the rows) of an operand with `rows` rows.
constexpr int fp8_ue8m0_row_tiles(int rows) { return (rows + k_ue8m0_tile_rows - 1) / k_ue8m0_tile_rows; }
// Bytes of the packed scales of an operand of `rows` rows and `k` columns.
constexpr long long fp8_ue8m0_bytes(int rows, int k) {
  return static_cast<long long>(fp8_ue8m0_row_tiles(rows)) * fp8_ue8m0_kgroups(k) * k_ue8m0_tile_bytes;
}
// Byte of row `row`, K block `kblock` in the packed scales of an operand with `k` columns.
constexpr long long fp8_ue8m0_offset(int row, int kblock, int k) {
  const long long tile =
      static_cast<long long>(row / k_ue8m0_tile_rows) * fp8_ue8m0_kgroups(k) + kblock / k_ue8m0_tile_kblocks;
  return tile * k_ue8m0_tile_bytes + (row % 32) * 16 + (row % k_ue8m0_tile_rows / 32) * 4 +
         kblock % k_ue8m0_tile_kblocks;
}

// The UE8M0 byte of `scale` when it is a power of two from 2^-127 to 2^127 (the fp32
// subnormal 2^-127 included), else false: UE8M0 holds nothing else.
inline bool ue8m0_from_float(float scale, std::uint8_t& byte) {
  std::uint32_t bits = 0;
  static_assert(sizeof bits == sizeof scale);
  __builtin_memcpy(&bits, &scale, sizeof bits);
  const std::uint32_t exponent = bits >> 23, mantissa = bits & 0x7FFFFFu;  // exponent holds the sign too
  if (exponent >= 1 && exponent <= 254 && mantissa == 0) {
    byte = static_cast<std::uint8_t>(exponent);
    return true;
  }
  if (exponent == 0 && mantissa == 0x400000u) {  // 2^-127, the one subnormal UE8M0 holds
    byte = 0;
    return true;
  }
  return false;
}
// The scale a UE8M0 byte stands for: 2^(byte - 127); NaN for 255.
inline float ue8m0_to_float(std::uint8_t byte) {
  std::uint32_t bits = byte == 255 ? 0x7FC00000u : byte == 0 ? 0x400000u : static_cast<std::uint32_t>(byte) << 23;
  float f = 0.0f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

// grouped_gemm_fp8's B as UE8M0 bytes: each group's N x K B packed as above, one group after
// the other; where group `group`'s bytes start. (A's are the tall [groups*m, K] A's.)
constexpr long long fp8_group_ue8m0_b_offset(int group, int n, int k) { return group * fp8_ue8m0_bytes(n, k); }

// Packs an operand's block scales, given as fp32 in block128's layout (`scales`,
// fp8_scale_count(block128, of_a, rows, k) values), into `out` (fp8_ue8m0_bytes(rows, k)
// bytes) in the tiled layout above. False, with `out` partly written, when a scale is not a
// power of two UE8M0 can hold; `bad` then names its index in `scales`.
inline bool fp8_pack_ue8m0(const float* scales, bool of_a, int rows, int k, std::uint8_t* out,
                           long long* bad = nullptr) {
  const int kblocks = (k + k_fp8_block - 1) / k_fp8_block;
  const long long bytes = fp8_ue8m0_bytes(rows, k);
  for (long long i = 0; i < bytes; ++i) out[i] = k_ue8m0_one;
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < kblocks; ++j) {
      const long long at = fp8_scale_index(Fp8Scale::block128, of_a, r, j, rows, kblocks);
      if (!ue8m0_from_float(scales[at], out[fp8_ue8m0_offset(r, j, k)])) {
        if (bad != nullptr) *bad = at;
        return false;
      }
    }
  return true;
}

// Packs grouped_gemm_fp8's B scales, `groups` operands of n x k whose fp32 block scales follow
// one another (group g's at fp8_group_scale_b_offset(block128, g, n, k)), into `out`
// (fp8_group_ue8m0_b_offset(groups, n, k) bytes), group g's at fp8_group_ue8m0_b_offset(g, n,
// k), each as fp8_pack_ue8m0 packs one B. One group is gemm_fp8's B. False as
// fp8_pack_ue8m0, `bad` then the index in `scales` of all groups.
inline bool fp8_pack_ue8m0_grouped_b(const float* scales, int groups, int n, int k, std::uint8_t* out,
                                     long long* bad = nullptr) {
  for (int g = 0; g < groups; ++g) {
    const long long at = fp8_group_scale_b_offset(Fp8Scale::block128, g, n, k);
    if (!fp8_pack_ue8m0(scales + at, false, n, k, out + fp8_group_ue8m0_b_offset(g, n, k), bad)) {
      if (bad != nullptr) *bad += at;
      return false;
    }
  }
  return true;
}

}  // namespace kport::kernels
