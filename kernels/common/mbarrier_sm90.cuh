// mbarrier primitives (sm_90 and later; Blackwell's tcgen05 kernels use the same PTX).
// A barrier is 8 bytes of shared memory named by its 32-bit shared address (smem_u32);
// one thread initialises it before any thread uses it (mbar_init, then mbar_fence_init
// and a CTA or cluster barrier). A phase completes when the arrival count reaches zero
// and every transaction byte announced with expect_tx has landed (TMA, tcgen05.commit).
#pragma once

#include <cstdint>

namespace kport::kernels::sm90 {

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// Makes the initialisations visible to the async proxy and the cluster's other CTAs.
__device__ __forceinline__ void mbar_fence_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

// Spins until the phase with parity `parity` of the barrier has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// Arrives once this thread's cp.async copies issued so far have landed (.noinc: the arrival
// is one of the count the barrier was initialised with, not an extra one).
__device__ __forceinline__ void mbar_arrive_on_cp_async(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

// Arrives and announces `bytes` more transaction bytes for the current phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// Announces `bytes` more transaction bytes for the current phase without arriving: for loads
// that only some phases carry, issued after the phase's arrive.expect_tx (which has left an
// arrival or transaction pending) and before the loads themselves.
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// Arrives on the barrier at the same shared-memory offset in CTA `cta` of the cluster. Only
// used to hand a stage back after wgmma.wait_group has retired its reads, so the default
// (CTA-scope) semantics suffice. With .release.cluster instead, the clustered gemm ran at
// 0.66x of its unclustered twin on the H200 (2026-11-29); without, at parity.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t cta) {
  asm volatile(
      "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}" ::"r"(bar),
      "r"(cta)
      : "memory");
}

}  // namespace kport::kernels::sm90
