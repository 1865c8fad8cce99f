// 16-byte global memory access. A `Vec16<T>` holds 16 bytes of T (8 bf16/fp16 or 4 fp32);
// loads and stores need 16-byte aligned addresses. The cache-hinted forms carry the first
// SM that has the instruction in their name.
#pragma once

#include <cstdint>

#include "common/convert.cuh"

namespace kport::kernels {

template <typename T>
struct alignas(16) Vec16 {
  static constexpr int k_count = 16 / static_cast<int>(sizeof(T));
  T v[k_count];
};

template <typename T>
__device__ __forceinline__ Vec16<T> load_vec16(const T* p) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  Vec16<T> out;
  *reinterpret_cast<uint4*>(out.v) = raw;
  return out;
}

template <typename T>
__device__ __forceinline__ void store_vec16(T* p, const Vec16<T>& x) {
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(x.v);
}

// Read-only data through the non-coherent path, with no cache hints. On an H200 the row-wise
// kernels read at 0.96-0.97 of a copy's bandwidth this way, against 0.91 with
// `.L1::no_allocate.L2::256B` (bench/rowwise, 2026-12-03): the hints cost bandwidth there.
__device__ __forceinline__ uint4 ld_global_nc_v4(const void* p) {
  uint4 r;
  asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}

// Streaming store (evict-first): output written once and not re-read by this kernel.
__device__ __forceinline__ void st_global_stream_v4_sm70(void* p, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

template <typename T>
__device__ __forceinline__ Vec16<T> load_vec16_nc(const T* p) {
  const uint4 raw = ld_global_nc_v4(p);
  Vec16<T> out;
  *reinterpret_cast<uint4*>(out.v) = raw;
  return out;
}

template <typename T>
__device__ __forceinline__ void store_vec16_stream_sm70(T* p, const Vec16<T>& x) {
  st_global_stream_v4_sm70(p, *reinterpret_cast<const uint4*>(x.v));
}

__host__ __device__ __forceinline__ bool is_aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

}  // namespace kport::kernels
