// What the sm_90a GPU tests share: the reason to skip on a machine without a compute
// capability 9.0 device, exact fp8 operands, bf16 read-back, a device buffer and an integer an
// instance's config publishes.
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kport/kernels/registry.h"

namespace kport::test_gpu {

// Empty when device 0 runs sm_90a code; else why the test skips. `what`: the code that needs it.
inline std::string sm90_skip_reason(const std::string& what) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return "no CUDA device";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "cudaGetDeviceProperties failed";
  if (prop.major != 9 || prop.minor != 0)
    return "compute capability 9.0 is needed for " + what + "; device 0 is " + prop.name + " (" +
           std::to_string(prop.major) + "." + std::to_string(prop.minor) + ")";
  return "";
}

// A value in {+-0.5, +-1, +-1.5, +-2}: exact in e4m3 and e5m2, products and sums exact in fp32.
inline float operand(int row, int col, std::uint32_t salt) {
  std::uint32_t h =
      (static_cast<std::uint32_t>(row) * 0x9E3779B1u) ^ (static_cast<std::uint32_t>(col) * 0x85EBCA77u) ^ salt;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  const float mag = 0.5f * static_cast<float>(1 + (h & 3u));
  return (h & 4u) ? -mag : mag;
}

inline std::uint8_t to_fp8(float v, kport::kernels::DType t) {
  if (t == kport::kernels::DType::e5m2) return __nv_fp8_e5m2(v).__x;
  return __nv_fp8_e4m3(v).__x;
}

inline float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(std::size_t count) { EXPECT_EQ(cudaMalloc(&ptr, count * sizeof(T)), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// An integer key of an instance's config ("run_n_multiple", "group_m_align", ...), or
// `absent` when the config has none.
inline int config_int(const kport::kernels::Instance& inst, const std::string& key, int absent) {
  const std::string tag = "\"" + key + "\":";
  const auto at = inst.config_json.find(tag);
  return at == std::string::npos ? absent : std::atoi(inst.config_json.c_str() + at + tag.size());
}

}  // namespace kport::test_gpu
