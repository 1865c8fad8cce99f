// Seeded fp8 gemm operands made the way a quantizer makes them, and their dequantization
// for the fp32 reference.
//
// The real-valued operand is a pure function of (seed, stream, row, column): uniform in
// [-1, 1) times a magnitude per row (2^-3 .. 2^3) and per row and 128-wide K block
// (2^-1 .. 2^1), so rows and blocks differ as activations and weights do and the three
// scaling modes give different answers. The quantizer takes the amax of every group its mode
// scales (the tensor, a row, a 1x128 or 128x128 block), sets scale = amax / fp8 max (1 for an
// all-zero group) and stores round(x / scale), saturated. block128_ue8m0 rounds that scale up
// to a power of two (the UE8M0 recipe: nothing saturates, the stored values use a little
// less of the format's range), so the same scale is exact in fp32 and in UE8M0.
#include <cuda_fp8.h>

#include "common/cuda_check.h"
#include "device/harness_kernels.h"

namespace kport::harness {

namespace {

using kport::kernels::Fp8Scale;
using kport::kernels::k_fp8_block;

constexpr int k_threads = 256;

__host__ __device__ __forceinline__ std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ float operand_value(std::uint64_t key, int row, int col) {
  const std::uint64_t cell = (static_cast<std::uint64_t>(row) << 32) | static_cast<unsigned>(col);
  const std::uint64_t h = mix64(key ^ mix64(cell));
  const float u = static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1)
  const int row_exp = static_cast<int>(mix64(key ^ 0xA5A5ull ^ (std::uint64_t(row) << 20)) % 7) - 3;
  const std::uint64_t blk = (static_cast<std::uint64_t>(row) << 32) | static_cast<unsigned>(col / k_fp8_block);
  const int blk_exp = static_cast<int>(mix64(key ^ 0x5A5Aull ^ mix64(blk)) % 3) - 1;
  return ldexpf(u, row_exp + blk_exp);
}

__host__ __device__ constexpr float fp8_max(DType t) { return t == DType::e5m2 ? 57344.0f : 448.0f; }

// amax[row * kblocks + kb] over the row's K block kb: one warp per (row, kb).
__global__ void block_amax_kernel(float* amax, int rows, int k, int kblocks, std::uint64_t key) {
  const long long warp = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= static_cast<long long>(rows) * kblocks) return;
  const int row = static_cast<int>(warp / kblocks), kb = static_cast<int>(warp % kblocks);
  float m = 0.0f;
  for (int c = kb * k_fp8_block + lane; c < min(k, (kb + 1) * k_fp8_block); c += 32)
    m = fmaxf(m, fabsf(operand_value(key, row, c)));
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if (lane == 0) amax[warp] = m;
}

// One block per scale entry: the max of the 1x128 amaxes its group covers, over the fp8 max.
__global__ void scale_kernel(float* scales, const float* amax, int rows, int kblocks, Fp8Scale mode, bool of_a,
                             float fmax_value) {
  const long long entry = blockIdx.x;
  int r0 = 0, r1 = rows, k0 = 0, k1 = kblocks;
  if (mode == Fp8Scale::row) {
    r0 = static_cast<int>(entry), r1 = r0 + 1;
  } else if (kport::kernels::fp8_scale_is_block(mode)) {
    if (of_a) {
      const int stride = kport::kernels::fp8_scale_a_stride(rows);
      r0 = static_cast<int>(entry % stride), k0 = static_cast<int>(entry / stride);
      r1 = r0 + 1, k1 = k0 + 1;
      if (r0 >= rows) {  // padding between K blocks
        if (threadIdx.x == 0) scales[entry] = 1.0f;
        return;
      }
    } else {
      r0 = static_cast<int>(entry / kblocks) * k_fp8_block, k0 = static_cast<int>(entry % kblocks);
      r1 = min(rows, r0 + k_fp8_block), k1 = k0 + 1;
    }
  }
  const long long count = static_cast<long long>(r1 - r0) * (k1 - k0);
  float m = 0.0f;
  for (long long i = threadIdx.x; i < count; i += blockDim.x) {
    const int r = r0 + static_cast<int>(i / (k1 - k0)), kb = k0 + static_cast<int>(i % (k1 - k0));
    m = fmaxf(m, amax[static_cast<long long>(r) * kblocks + kb]);
  }
  __shared__ float part[k_threads / 32];
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < k_threads / 32; ++w) m = fmaxf(m, part[w]);
    float scale = m > 0.0f ? m / fmax_value : 1.0f;
    if (mode == Fp8Scale::block128_ue8m0) {
      // the smallest power of two >= scale: scale = f * 2^e with f in [0.5, 1)
      int e = 0;
      const float f = frexpf(scale, &e);
      scale = ldexpf(1.0f, f == 0.5f ? e - 1 : e);
    }
    scales[entry] = scale;
  }
}

template <class T>
__global__ void quantize_kernel(T* q, const float* scales, int rows, int k, int kblocks, Fp8Scale mode, bool of_a,
                                std::uint64_t key) {
  const std::size_t n = static_cast<std::size_t>(rows) * k;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const int row = static_cast<int>(i / k), col = static_cast<int>(i % k);
    const float s = scales[kport::kernels::fp8_scale_index(mode, of_a, row, col / k_fp8_block, rows, kblocks)];
    q[i] = T(operand_value(key, row, col) / s);  // saturating conversion
  }
}

template <class T>
__global__ void dequantize_kernel(const T* q, const float* scales, int rows, int k, int kblocks, Fp8Scale mode,
                                  bool of_a, float* dst) {
  const std::size_t n = static_cast<std::size_t>(rows) * k;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const int row = static_cast<int>(i / k), col = static_cast<int>(i % k);
    dst[i] = static_cast<float>(q[i]) *
             scales[kport::kernels::fp8_scale_index(mode, of_a, row, col / k_fp8_block, rows, kblocks)];
  }
}

__global__ void multiply_kernel(float* p, long long n, float factor) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    p[i] *= factor;
}

unsigned grid_for(std::size_t n) {
  const std::size_t blocks = (n + k_threads - 1) / k_threads;
  return static_cast<unsigned>(blocks < 65536 ? (blocks == 0 ? 1 : blocks) : 65536);
}

}  // namespace

std::size_t fp8_operand_scratch_bytes(int rows, int k) {
  return static_cast<std::size_t>(rows) * ((k + k_fp8_block - 1) / k_fp8_block) * sizeof(float);
}

cudaError_t make_fp8_operand(void* q, float* scales, int rows, int k, DType dtype, Fp8Scale mode, bool of_a,
                             std::uint64_t seed, std::uint64_t stream_id, float* scratch, cudaStream_t stream) {
  const int kblocks = (k + k_fp8_block - 1) / k_fp8_block;
  const std::uint64_t key = mix64(seed ^ mix64(stream_id));
  const long long warps = static_cast<long long>(rows) * kblocks;
  block_amax_kernel<<<static_cast<unsigned>((warps * 32 + k_threads - 1) / k_threads), k_threads, 0, stream>>>(
      scratch, rows, k, kblocks, key);
  const long long entries = kport::kernels::fp8_scale_count(mode, of_a, rows, k);
  scale_kernel<<<static_cast<unsigned>(entries), k_threads, 0, stream>>>(scales, scratch, rows, kblocks, mode, of_a,
                                                                         fp8_max(dtype));
  const std::size_t n = static_cast<std::size_t>(rows) * k;
  if (dtype == DType::e5m2)
    quantize_kernel<<<grid_for(n), k_threads, 0, stream>>>(static_cast<__nv_fp8_e5m2*>(q), scales, rows, k, kblocks,
                                                           mode, of_a, key);
  else
    quantize_kernel<<<grid_for(n), k_threads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(q), scales, rows, k, kblocks,
                                                           mode, of_a, key);
  return cudaGetLastError();
}

cudaError_t dequantize_fp8(const void* q, const float* scales, int rows, int k, DType dtype, Fp8Scale mode, bool of_a,
                           float* dst, cudaStream_t stream) {
  const int kblocks = (k + k_fp8_block - 1) / k_fp8_block;
  const std::size_t n = static_cast<std::size_t>(rows) * k;
  if (dtype == DType::e5m2)
    dequantize_kernel<<<grid_for(n), k_threads, 0, stream>>>(static_cast<const __nv_fp8_e5m2*>(q), scales, rows, k,
                                                             kblocks, mode, of_a, dst);
  else
    dequantize_kernel<<<grid_for(n), k_threads, 0, stream>>>(static_cast<const __nv_fp8_e4m3*>(q), scales, rows, k,
                                                             kblocks, mode, of_a, dst);
  return cudaGetLastError();
}

cudaError_t make_fp8_grouped_b(void* q, float* scales, int groups, int n, int k, DType dtype, Fp8Scale mode,
                               std::uint64_t seed, std::uint64_t stream_id, float* scratch, cudaStream_t stream) {
  const long long per_group = kport::kernels::fp8_scale_count(mode, false, n, k);
  for (int g = 0; g < groups; ++g) {
    float* sg = scales + kport::kernels::fp8_group_scale_b_offset(mode, g, n, k);
    cudaError_t e = make_fp8_operand(static_cast<std::uint8_t*>(q) + static_cast<std::size_t>(g) * n * k, sg, n, k,
                                     dtype, mode, false, seed, stream_id + g, scratch, stream);
    if (e != cudaSuccess) return e;
    multiply_kernel<<<grid_for(static_cast<std::size_t>(per_group)), k_threads, 0, stream>>>(sg, per_group,
                                                                                             fp8_group_gain(g));
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t dequantize_fp8_grouped_b(const void* q, const float* scales, int groups, int n, int k, DType dtype,
                                     Fp8Scale mode, float* dst, cudaStream_t stream) {
  for (int g = 0; g < groups; ++g) {
    const std::size_t at = static_cast<std::size_t>(g) * n * k;
    const cudaError_t e = dequantize_fp8(static_cast<const std::uint8_t*>(q) + at,
                                         scales + kport::kernels::fp8_group_scale_b_offset(mode, g, n, k), n, k, dtype,
                                         mode, false, dst + at, stream);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace kport::harness
