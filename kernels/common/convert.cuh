// Element conversions between storage types (float, __half, __nv_bfloat16) and fp32 math,
// usable from device and host code. `Storage<DType>` maps the registry's dtype to a type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kport/kernels/registry.h"

namespace kport::kernels {

template <DType T>
struct StorageOf;
template <>
struct StorageOf<DType::f32> {
  using type = float;
};
template <>
struct StorageOf<DType::f16> {
  using type = __half;
};
template <>
struct StorageOf<DType::bf16> {
  using type = __nv_bfloat16;
};
template <DType T>
using Storage = typename StorageOf<T>::type;

__host__ __device__ __forceinline__ float to_float(float v) { return v; }
__host__ __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__host__ __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__host__ __device__ __forceinline__ T from_float(float v);
template <>
__host__ __device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__host__ __device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__host__ __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Packed pairs, for 16-byte vectors of 16-bit types.
__device__ __forceinline__ float2 to_float2(__half2 v) { return __half22float2(v); }
__device__ __forceinline__ float2 to_float2(__nv_bfloat162 v) { return __bfloat1622float2(v); }
template <typename T2>
__device__ __forceinline__ T2 from_float2(float2 v);
template <>
__device__ __forceinline__ __half2 from_float2<__half2>(float2 v) {
  return __float22half2_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat162 from_float2<__nv_bfloat162>(float2 v) {
  return __float22bfloat162_rn(v);
}

// Two floats rounded to T (__nv_bfloat16, else __half) and packed, `lo` in the low half,
// into the 32 bits an MMA operand register or a 4-byte store takes.
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (__is_same(T, __nv_bfloat16)) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  } else {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
}

}  // namespace kport::kernels
