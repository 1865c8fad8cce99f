// Synchronisation and register budgets between the warps of a CTA and the CTAs of a
// cluster (sm_90 and later): cluster rank and barrier, named hardware barriers, and
// setmaxnreg's register hand-over between warpgroups (sm_90a, sm_100a: the `a` targets).
#pragma once

#include <cstdint>

namespace kport::kernels::sm90 {

// ---- clusters -------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// CTAs in this cluster, and this cluster's index along x in the grid of clusters.
__device__ __forceinline__ uint32_t cluster_size() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_id_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}

// The two halves of a cluster barrier: arrive releases this thread's earlier writes, wait
// acquires what every thread of the cluster released before arriving; the relaxed arrive
// orders nothing, it only says this thread got there.
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release;" ::: "memory"); }
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }

// Every thread of every CTA in the cluster arrives and waits (release/acquire).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// ---- named barriers -------------------------------------------------------------------------
// Barrier over `count` threads (a multiple of 32) on hardware barrier `id` (1..15; 0 is
// __syncthreads'): sync waits for the count, arrive counts itself and goes on.
__device__ __forceinline__ void named_bar_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// ---- register reallocation between warpgroups ------------------------------------------------
// Every thread of the warpgroup executes it; Regs is a multiple of 8 in [24, 256].
template <int Regs>
__device__ __forceinline__ void regs_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Regs));
}
template <int Regs>
__device__ __forceinline__ void regs_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Regs));
}

}  // namespace kport::kernels::sm90
