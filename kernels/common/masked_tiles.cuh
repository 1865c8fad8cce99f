// The tile walk of a grouped gemm's masked layout (MoE decode): group g holds masked_m[g]
// valid rows out of its m, and only tiles with valid rows exist, group 0's first, then group
// 1's, each group's BM x BN tiles numbered as one small gemm's. The counts are read from device
// memory while the kernel runs, so a launch (or a captured graph) stays the same whatever they
// are. Arch-neutral device code: a persistent kernel's producer and consumers walk it with
// seek, a kernel of one CTA a tile finds its tile with seek_warp.
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

  // The same walk taken by a whole warp at once, for a grid of one CTA a tile whose CTA finds
  // its own tile t: the lanes read 32 groups' counts together and sum their tiles with
  // shuffles, rather than one count after the other. Every lane of the warp calls it with the
  // same t (the fields come out the same in every lane); one call a CTA, from the start.
  __device__ __forceinline__ bool seek_warp(int t) {
    const int lane = threadIdx.x % 32;
    for (int g0 = 0; g0 < groups; g0 += 32) {
      const int r = g0 + lane < groups ? min(max(__ldg(counts + g0 + lane), 0), m) : 0;
      const int tm = (r + BM - 1) / BM;
      int upto = tm * tiles_n;  // tiles of groups g0 .. g0 + lane, an inclusive scan
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int v = __shfl_up_sync(0xffffffffu, upto, d);
        if (lane >= d) upto += v;
      }
      const unsigned past = __ballot_sync(0xffffffffu, t < end + upto);
      if (past != 0) {  // the first such lane's group holds t (an empty group never does)
        const int l = __ffs(past) - 1;
        group = g0 + l;
        rows = __shfl_sync(0xffffffffu, r, l);
        tiles_m = __shfl_sync(0xffffffffu, tm, l);
        end += __shfl_sync(0xffffffffu, upto, l);
        first = end - tiles_m * tiles_n;
        return true;
      }
      end += __shfl_sync(0xffffffffu, upto, 31);
    }
    group = groups;
    return false;
  }
};

}  // namespace kport::kernels
