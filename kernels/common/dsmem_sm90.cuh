// Distributed shared memory between the CTAs of a cluster (sm_90 and later): a peer's
// address of a shared-memory location, 8- and 16-byte stores to it and loads of one's own, the
// fence that orders them for the cluster, and an mbarrier wait that acquires what a peer
// released before arriving. One CTA hands data to another through these: it stores into the
// peer's shared memory, fences, and arrives on the peer's barrier (mbar_arrive_cluster);
// the peer waits with mbar_wait_cluster and then reads its own shared memory.
#pragma once

#include <vector_types.h>

#include <cstdint>

namespace kport::kernels::sm90 {

// Address in CTA `cta` of the cluster of this CTA's shared address `addr`: the same offset
// in the peer's shared memory.
__device__ __forceinline__ uint32_t cluster_map(uint32_t addr, uint32_t cta) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(cta));
  return r;
}

// Stores two floats at a cluster shared address (cluster_map), 8-byte aligned.
__device__ __forceinline__ void st_cluster_f32x2(uint32_t addr, float a, float b) {
  asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(a), "f"(b) : "memory");
}

// Stores four floats at a cluster shared address (cluster_map), 16-byte aligned.
__device__ __forceinline__ void st_cluster_f32x4(uint32_t addr, float a, float b, float c, float d) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(a), "f"(b), "f"(c), "f"(d)
               : "memory");
}

// Loads four floats from this CTA's shared memory, 16-byte aligned.
__device__ __forceinline__ float4 ld_shared_f32x4(uint32_t addr) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

// Orders this thread's earlier memory operations, its stores to peers included, before its
// later ones as every CTA of the cluster sees them.
__device__ __forceinline__ void fence_cluster() { asm volatile("fence.acq_rel.cluster;" ::: "memory"); }

// Spins until the phase with parity `parity` of this CTA's barrier has completed, with
// acquire semantics at cluster scope: what a peer stored here before its fenced arrival is
// visible after the wait.
__device__ __forceinline__ void mbar_wait_cluster(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

}  // namespace kport::kernels::sm90
