// The scale layouts of gemm_fp8 (registry.h, GemmFp8Args): which fp32 scale multiplies
// which stored fp8 value. Plain C++ (constexpr, no CUDA headers), shared by the kernels,
// the harness's quantizer and the CPU reference.
#pragma once

namespace kport::kernels {

// How gemm_fp8 scales its operands (the shape's `scale` key, by number).
enum class Fp8Scale {
  tensor = 0,    // one fp32 each: scale_a[0], scale_b[0]
  row = 1,       // scale_a[M] per row of A; scale_b[N] per row of B (column of D)
  block128 = 2,  // scale_a per row and 128-wide K block, scale_b per 128x128 block of B
};
constexpr int k_fp8_block = 128;

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

}  // namespace kport::kernels
