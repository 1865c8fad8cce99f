// Blackwell (sm_100a family: sm_100a, sm_103a, sm_110a and their `f` targets) tcgen05
// primitives: tensor-memory allocation, tcgen05.mma (kind::f16, kind::f8f6f4 and the
// block-scaled kind::mxf8f6f4) with its shared-memory and instruction descriptors,
// tcgen05.cp (scale factors into tensor memory), tcgen05.commit and tcgen05.ld. mbarriers and
// TMA are the sm_90 ones (mbarrier_sm90.cuh, tma_sm90.cuh: the same PTX). Inline PTX that
// only assembles for targets with tcgen05; callers guard their bodies with
// KPORT_TCGEN05_ENABLED.
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FAMILY_SPECIFIC__) &&                \
    (__CUDA_ARCH_FAMILY_SPECIFIC__ == 1000 || __CUDA_ARCH_FAMILY_SPECIFIC__ == 1030 || \
     __CUDA_ARCH_FAMILY_SPECIFIC__ == 1100)
#define KPORT_TCGEN05_ENABLED 1
#else
#define KPORT_TCGEN05_ENABLED 0
#endif

namespace kport::kernels::sm100 {

// ---- tensor memory --------------------------------------------------------------------------
// One warp allocates `cols` columns (a power of two >= 32) of the 128-lane tensor memory and
// the driver writes the base address to shared memory at `slot`.
__device__ __forceinline__ void tmem_alloc(uint32_t slot, uint32_t cols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot), "r"(cols) : "memory");
}
__device__ __forceinline__ void tmem_relinquish() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void tmem_dealloc(uint32_t taddr, uint32_t cols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(cols) : "memory");
}

// Order tcgen05 operations against thread barriers (before / after a __syncthreads or an
// mbarrier wait).
__device__ __forceinline__ void tc_fence_before() { asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"); }
__device__ __forceinline__ void tc_fence_after() { asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"); }

// ---- MMA --------------------------------------------------------------------------------------
// Shared-memory descriptor, 128-byte swizzle. Same LBO/SBO meaning as on sm_90 (K-major: SBO =
// 8-row group stride; MN-major: LBO = 64-element MN chunk stride, SBO = 8-row K group stride),
// plus the descriptor version field (bits 46-47 = 1) and the 3-bit layout field (2 = SW128).
__device__ __forceinline__ uint64_t make_sdesc_sw128(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((addr & 0x3FFFF) >> 4);
  d |= static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16;
  d |= static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32;
  d |= 1ull << 46;
  d |= 2ull << 61;
  return d;
}

// Instruction descriptor for kind::f16 with fp32 accumulation: D format bits 4-5 (1 = f32),
// A/B formats bits 7-9 / 10-12 (0 = f16, 1 = bf16), A major bit 15 (0 = K-major), B major
// bit 16 (1 = MN-major), N >> 3 in bits 17-22, M >> 4 in bits 24-28.
template <int M, int N, bool IsBf16>
__host__ __device__ constexpr uint32_t make_idesc_f16() {
  static_assert(M == 128 && N % 16 == 0 && N >= 16 && N <= 256, "cta_group::1, M=128 shapes");
  constexpr uint32_t ab = IsBf16 ? 1u : 0u;
  return (1u << 4) | (ab << 7) | (ab << 10) | (0u << 15) | (1u << 16) | (static_cast<uint32_t>(N >> 3) << 17) |
         (static_cast<uint32_t>(M >> 4) << 24);
}

// D[tmem] (+)= A[smem] * B[smem]; issued by a single thread.
__device__ __forceinline__ void mma_f16(uint32_t d_tmem, uint64_t da, uint64_t db, uint32_t idesc,
                                        uint32_t accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n" ::"r"(d_tmem),
      "l"(da), "l"(db), "r"(idesc), "r"(accumulate)
      : "memory");
}

// Instruction descriptor for kind::f8f6f4 with fp32 accumulation: D format bits 4-5 (1 =
// f32), A and B formats bits 7-9 and 10-12 (0 = e4m3, 1 = e5m2), both K-major (bits 15 and 16
// clear), N >> 3 in bits 17-22, M >> 4 in bits 24-28.
template <int M, int N, bool IsE5m2>
__host__ __device__ constexpr uint32_t make_idesc_f8() {
  static_assert(M == 128 && N % 16 == 0 && N >= 16 && N <= 256, "cta_group::1, M=128 shapes");
  constexpr uint32_t ab = IsE5m2 ? 1u : 0u;
  return (1u << 4) | (ab << 7) | (ab << 10) | (static_cast<uint32_t>(N >> 3) << 17) |
         (static_cast<uint32_t>(M >> 4) << 24);
}

// D[tmem] (+)= A[smem] * B[smem] over 32 fp8 values of K; issued by a single thread.
__device__ __forceinline__ void mma_f8(uint32_t d_tmem, uint64_t da, uint64_t db, uint32_t idesc, uint32_t accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n" ::"r"(d_tmem),
      "l"(da), "l"(db), "r"(idesc), "r"(accumulate)
      : "memory");
}

// ---- block-scaled MMA ---------------------------------------------------------------------------
// Instruction descriptor for kind::mxf8f6f4.block_scale with UE8M0 scale factors (fp32
// accumulation, the only one this kind has): B's scale-factor id bits 4-5 (the byte of each
// 32-bit scale column the MMA reads, idesc_with_sf_ids), A and B formats bits 7-9 and 10-12
// (0 = e4m3, 1 = e5m2), both K-major (bits 15 and 16 clear), N >> 3 in bits 17-22, scale
// format bit 23 (1 = UE8M0), M >> 4 in bits 24-28, A's scale-factor id bits 29-30, bit 31
// clear (dense K = 32).
template <int M, int N, bool IsE5m2>
__host__ __device__ constexpr uint32_t make_idesc_mxf8() {
  static_assert(M == 128 && N % 16 == 0 && N >= 16 && N <= 256, "cta_group::1, M=128 shapes");
  constexpr uint32_t ab = IsE5m2 ? 1u : 0u;
  return (ab << 7) | (ab << 10) | (static_cast<uint32_t>(N >> 3) << 17) | (1u << 23) |
         (static_cast<uint32_t>(M >> 4) << 24);
}
// `idesc` reading byte `a_id` of A's and byte `b_id` of B's scale columns (0..3).
__host__ __device__ constexpr uint32_t idesc_with_sf_ids(uint32_t idesc, uint32_t a_id, uint32_t b_id) {
  return idesc | ((a_id & 3u) << 29) | ((b_id & 3u) << 4);
}

// D[tmem] (+)= (A[smem] x its scales) * (B[smem] x its scales) over 32 fp8 values of K, one
// UE8M0 scale per row of A and of B (scale_vec::1X), read from tensor memory at `sfa` (M=128:
// four columns, row r in column r / 32 at lane r % 32) and `sfb` (N / 32 columns, the same
// way per 128 rows of B). Issued by a single thread.
__device__ __forceinline__ void mma_mxf8_block_scale(uint32_t d_tmem, uint64_t da, uint64_t db, uint32_t idesc,
                                                     uint32_t sfa, uint32_t sfb, uint32_t accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
      "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%0], %1, %2, %3, [%4], [%5], p;\n}\n" ::"r"(
          d_tmem),
      "l"(da), "l"(db), "r"(idesc), "r"(sfa), "r"(sfb), "r"(accumulate)
      : "memory");
}

// Shared-memory descriptor without swizzle (layout field 0): rows of 16 bytes, 8-row core
// matrices `sbo` bytes apart; what tcgen05.cp reads (32 consecutive rows: sbo = 128).
__device__ __forceinline__ uint64_t make_sdesc_plain(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((addr & 0x3FFFF) >> 4);
  d |= static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16;
  d |= static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32;
  d |= 1ull << 46;
  return d;
}

// Copies 32 rows of 128 bits from shared memory (descriptor `src`) into tensor memory at
// `taddr`: row l to lane l of four consecutive 32-bit columns, and the same into lanes
// 32+l, 64+l and 96+l (warpx4), as the MMA wants M=128 scale factors. Asynchronous, issued by
// one thread; a later tcgen05.mma of the same thread sees the copy, and tcgen05.commit tracks
// its completion (and so its reads of shared memory) with the MMAs'.
__device__ __forceinline__ void tmem_cp_32x128b_warpx4(uint32_t taddr, uint64_t src) {
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(src) : "memory");
}

// Arrives once on `bar` when every tcgen05.mma (and tcgen05.cp) issued so far by this thread
// has completed.
__device__ __forceinline__ void mma_commit(uint32_t bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar) : "memory");
}

// Each thread of the warp reads 32 consecutive 32-bit columns of its own tensor-memory lane.
__device__ __forceinline__ void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t (&r)[32]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]),
        "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15]), "=r"(r[16]),
        "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]),
        "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
      : "r"(taddr)
      : "memory");
}

__device__ __forceinline__ void tmem_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }

}  // namespace kport::kernels::sm100
