// Host side of TMA (sm_90 and later, Blackwell too), the one home of tensor-map code: the
// driver's tensor-map encoder, the tiled maps of 16-bit elements with 128-byte swizzle that
// the TMA-fed variants load and store through (kernels/common/tma_sm90.cuh), the 8-bit maps of
// the fp8 gemms and of their packed UE8M0 scales, and the shape and alignment rules TMA
// imposes on a gemm's operands.
// Header-only host code; everything is inline so each variant stays its own unit.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kport/kernels/registry.h"

namespace kport::kernels::tma_host {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's tensor-map encoder, fetched once through the runtime so the library does not
// link libcuda directly; nullptr when the driver lacks it. Thread-safe.
inline EncodeTiled encode_tiled() {
  static const EncodeTiled fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<EncodeTiled>(nullptr);
    return reinterpret_cast<EncodeTiled>(p);
  }();
  return fn;
}

// A Rank-dimensional tiled map of 16-bit elements (bf16, else f16) at `ptr`, as the driver
// takes it: `dims` innermost first, `strides` in bytes of dimensions 1..Rank-1, boxes of
// `box` elements, dense element strides, 128-byte swizzle, 256-byte L2 promotion, zeros for
// out-of-bounds loads. False when the driver has no encoder or refuses the map.
template <int Rank>
bool make_tmap_16bit_sw128(CUtensorMap* map, const void* ptr, const cuuint64_t (&dims)[Rank],
                           const cuuint64_t (&strides)[Rank - 1], const cuuint32_t (&box)[Rank], DType t) {
  EncodeTiled enc = encode_tiled();
  if (enc == nullptr) return false;
  cuuint32_t elem_strides[Rank];
  for (int i = 0; i < Rank; ++i) elem_strides[i] = 1;
  const CUtensorMapDataType dt = t == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  return enc(map, dt, Rank, const_cast<void*>(ptr), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// 2-D row-major [rows, cols] tensor of 16-bit elements, boxes of box_rows x 64 columns.
inline bool make_tmap(CUtensorMap* map, const void* ptr, int rows, int cols, int box_rows, DType t) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  return make_tmap_16bit_sw128<2>(map, ptr, dims, strides, box, t);
}

// A 2-D [rows, cols] tensor of `elem_bytes`-byte elements of type `dt` with rows `row_bytes`
// apart, boxes of box_rows x box_cols, 256-byte L2 promotion, zeros for out-of-bounds loads.
inline bool make_tmap_2d(CUtensorMap* map, const void* ptr, CUtensorMapDataType dt, long long rows, long long cols,
                         long long row_bytes, int box_rows, int box_cols, CUtensorMapSwizzle swizzle) {
  EncodeTiled enc = encode_tiled();
  if (enc == nullptr) return false;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  return enc(map, dt, 2, const_cast<void*>(ptr), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// A 3-D tensor of type `dt`: `dims` innermost first (dimension 0 dense), `strides` in bytes
// of dimensions 1 and 2, boxes of `box` elements, 256-byte L2 promotion, zeros for
// out-of-bounds loads.
inline bool make_tmap_3d(CUtensorMap* map, const void* ptr, CUtensorMapDataType dt, const cuuint64_t (&dims)[3],
                         const cuuint64_t (&strides)[2], const cuuint32_t (&box)[3], CUtensorMapSwizzle swizzle) {
  EncodeTiled enc = encode_tiled();
  if (enc == nullptr) return false;
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  return enc(map, dt, 3, const_cast<void*>(ptr), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// 2-D row-major [rows, cols] tensor of 8-bit elements (fp8 as raw bytes), boxes of box_rows x
// 128 columns: one 128-byte swizzle row per box row. cols must be a multiple of 16.
inline bool make_tmap_8bit_sw128(CUtensorMap* map, const void* ptr, int rows, int cols, int box_rows) {
  return make_tmap_2d(map, ptr, CU_TENSOR_MAP_DATA_TYPE_UINT8, rows, cols, cols, box_rows, 128,
                      CU_TENSOR_MAP_SWIZZLE_128B);
}

// 3-D row-major [depth, rows, cols] tensor of 8-bit elements (a stack of `depth` matrices, as
// grouped_gemm_fp8's B), boxes of one matrix's box_rows x 128 columns, 128-byte swizzle: a box
// lands in shared memory as make_tmap_8bit_sw128's does, and never reads across two matrices
// (their edges are zero-filled). cols must be a multiple of 16.
inline bool make_tmap_8bit_sw128_3d(CUtensorMap* map, const void* ptr, int depth, int rows, int cols, int box_rows) {
  EncodeTiled enc = encode_tiled();
  if (enc == nullptr) return false;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(depth)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(cols) * rows};
  const cuuint32_t box[3] = {128, static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  return enc(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<void*>(ptr), dims, strides, box, elem_strides,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The packed UE8M0 block scales of fp8_scales.h (block128_ue8m0) as [row tiles][K-block
// groups][128 words] of 32 bits, boxes of one K-block group of `box_tiles` row tiles, no
// swizzle: what the block-scaled tcgen05 gemms copy into tensor memory. `row_tiles` is
// ceil(rows / 128) of one operand, or the sum over operands packed one after the other (the
// groups of grouped_gemm_fp8's B); `k` the operands' K.
inline bool make_tmap_ue8m0(CUtensorMap* map, const std::uint8_t* packed, long long row_tiles, int k, int box_tiles) {
  const auto groups = static_cast<cuuint64_t>(fp8_ue8m0_kgroups(k));
  constexpr cuuint64_t words = k_ue8m0_tile_bytes / 4;
  const cuuint64_t dims[3] = {words, groups, static_cast<cuuint64_t>(row_tiles)};
  const cuuint64_t strides[2] = {k_ue8m0_tile_bytes, groups * k_ue8m0_tile_bytes};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(words), 1, static_cast<cuuint32_t>(box_tiles)};
  return make_tmap_3d(map, packed, CU_TENSOR_MAP_DATA_TYPE_UINT32, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE);
}

// What gemm_supports asks of N and K (16-byte row strides of 16-bit elements), in the config
// keys kernels/kport.json's gemm and grouped_gemm geometry read: at no other N or K does the
// instance run at all.
inline constexpr const char* k_gemm_run_align_config = R"("run_n_align_bytes":16,"run_k_align_bytes":16)";

// "" when a TMA-fed gemm named `variant` can run `p`, otherwise why not.
inline std::string gemm_supports(const Problem& p, const char* variant) {
  if (p.family != Family::gemm) return "not a gemm problem";
  const GemmArgs& g = p.gemm;
  if (g.dtype != DType::bf16 && g.dtype != DType::f16)
    return std::string("dtype ") + dtype_name(g.dtype) + " not supported: " + variant +
           " takes bf16 or f16 (use the simt variant for f32)";
  if (g.m < 0 || g.n < 0 || g.k < 0) return "negative dimension";
  if (g.k % 8 != 0 || g.n % 8 != 0)
    return "K and N must be multiples of 8: TMA needs 16-byte row strides (K=" + std::to_string(g.k) +
           ", N=" + std::to_string(g.n) + "); use the mma_sync variant";
  auto misaligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 != 0; };
  if (misaligned(g.a) || misaligned(g.b) || misaligned(g.c)) return "A, B and C must be 16-byte aligned for TMA";
  return "";
}

}  // namespace kport::kernels::tma_host
