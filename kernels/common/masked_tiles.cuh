// The tile walk of a grouped gemm's masked layout (MoE decode): group g holds masked_m[g]
// valid rows out of its m, and only tiles with valid rows exist, group 0's first, then group
// 1's, each group's BM x BN tiles numbered as one small gemm's. The counts are read from device
// memory while the kernel runs, so a launch (or a captured graph) stays the same whatever they
// are. Arch-neutral device code.
#pragma once

namespace kport::kernels {

template <int BM>
struct MaskedTiles {
  const int* counts;  // masked_m[groups], each clamped to 0 .. m
  int groups, m, tiles_n;
  int group = -1;   // the group of the tile last found
  int rows = 0;     // its valid rows
  int tiles_m = 0;  // its tile rows, ceil(rows / BM)
  int first = 0;    // its first tile's number
  int end = 0;      // one past its last tile's number

  // Moves on to the group that holds tile `t`; false when no group does. A caller's t never
  // decreases, so each count is read once per caller.
  __device__ __forceinline__ bool seek(int t) {
    while (t >= end) {
      if (++group >= groups) return false;
      rows = min(max(__ldg(counts + group), 0), m);
      tiles_m = (rows + BM - 1) / BM;
      first = end;
      end = first + tiles_m * tiles_n;
    }
    return true;
  }
};

}  // namespace kport::kernels
