// Sweep of the row-wise register kernels' memory knobs on one GPU, against a copy of the
// same bytes in the same process: which load and store cache policies, block sizes and
// vectors per thread bring rmsnorm and softmax closest to the copy. Not part of the library:
// the winner moves into kernels/common/rowwise_vec16.cuh and is checked there.
// Method: L2 flushed (a 256 MB memset) before every sample, CUDA events around one launch,
// samples interleaved over the variants in rounds, median per variant.
//   nvcc -O3 -std=c++20 -arch=sm_90a -I kernels bench/rowwise/sweep.cu -o sweep
//   ./sweep [rounds]
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "common/warp_reduce.cuh"

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

using T = __nv_bfloat16;
using kport::kernels::warp_reduce_max;
using kport::kernels::warp_reduce_sum;

template <int P>
__device__ __forceinline__ uint4 ld16(const void* p) {
  uint4 r;
  if constexpr (P == 0)
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  else if constexpr (P == 1)
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  else if constexpr (P == 2)
    asm volatile(
        "{\n.reg .b64 pol;\ncreatepolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
        "ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], pol;\n}"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
        : "l"(p));
  else
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  return r;
}

template <int P>
__device__ __forceinline__ void st16(void* p, uint4 v) {
  if constexpr (P == 0)
    asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  else if constexpr (P == 1)
    asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
  else if constexpr (P == 2)
    asm volatile("st.global.L1::no_allocate.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
  else
    asm volatile(
        "{\n.reg .b64 pol;\ncreatepolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
        "st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, pol;\n}" ::"l"(p),
        "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
        : "memory");
}

template <bool k_max>
__device__ __forceinline__ float row_reduce(float v, float* scratch, int tpr_log2) {
  v = k_max ? warp_reduce_max(v) : warp_reduce_sum(v);
  if (tpr_log2 <= 5) return v;
  const int lane = threadIdx.x & 31;
  const int local_row = threadIdx.x >> tpr_log2;
  const int warp_in_row = (threadIdx.x & ((1 << tpr_log2) - 1)) >> 5;
  const int warps_per_row = 1 << (tpr_log2 - 5);
  if (lane == 0) scratch[local_row * 32 + warp_in_row] = v;
  __syncthreads();
  v = lane < warps_per_row ? scratch[local_row * 32 + lane] : (k_max ? -INFINITY : 0.0f);
  return k_max ? warp_reduce_max(v) : warp_reduce_sum(v);
}

// op: 0 rmsnorm, 1 softmax, 2 copy with the same geometry (no reduction).
template <int KV, int OP, int LP, int SP, int MAXT, int MINB, bool EARLYW>
__global__ void __launch_bounds__(MAXT, MINB)
    rowwise(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int rows, int cols, int tpr_log2) {
  __shared__ float sa[1024 / 32 * 32 / 1];
  __shared__ float sb[1024 / 32 * 32 / 1];
  const int tpr = 1 << tpr_log2;
  const int lt = threadIdx.x & (tpr - 1);
  const long row = static_cast<long>(blockIdx.x) * (blockDim.x >> tpr_log2) + (threadIdx.x >> tpr_log2);
  const bool active = row < rows;
  const int vecs = cols / 8;
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  uint4 xv[KV];
  [[maybe_unused]] uint4 wv[OP == 0 && EARLYW ? KV : 1];
#pragma unroll
  for (int i = 0; i < KV; ++i) {
    const int vi = lt + i * tpr;
    if (!(active && vi < vecs)) continue;
    xv[i] = ld16<LP>(xr + vi * 8);
    if constexpr (OP == 0 && EARLYW) wv[i] = *reinterpret_cast<const uint4*>(w + vi * 8);
  }
  if constexpr (OP == 2) {
#pragma unroll
    for (int i = 0; i < KV; ++i) {
      const int vi = lt + i * tpr;
      if (active && vi < vecs) st16<SP>(yr + vi * 8, xv[i]);
    }
  } else if constexpr (OP == 0) {
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < KV; ++i) {
      if (!(active && lt + i * tpr < vecs)) continue;
      const T* e = reinterpret_cast<const T*>(&xv[i]);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float f = __bfloat162float(e[j]);
        ss += f * f;
      }
    }
    ss = row_reduce<false>(ss, sa, tpr_log2);
    const float inv = rsqrtf(ss / static_cast<float>(cols) + 1e-6f);
#pragma unroll
    for (int i = 0; i < KV; ++i) {
      const int vi = lt + i * tpr;
      if (!(active && vi < vecs)) continue;
      uint4 wi;
      if constexpr (EARLYW)
        wi = wv[i];
      else
        wi = *reinterpret_cast<const uint4*>(w + vi * 8);
      const T* e = reinterpret_cast<const T*>(&xv[i]);
      const T* we = reinterpret_cast<const T*>(&wi);
      uint4 o;
      T* oe = reinterpret_cast<T*>(&o);
#pragma unroll
      for (int j = 0; j < 8; ++j) oe[j] = __float2bfloat16_rn(__bfloat162float(e[j]) * inv * __bfloat162float(we[j]));
      st16<SP>(yr + vi * 8, o);
    }
  } else {
    float mx = -INFINITY;
#pragma unroll
    for (int i = 0; i < KV; ++i) {
      if (!(active && lt + i * tpr < vecs)) continue;
      const T* e = reinterpret_cast<const T*>(&xv[i]);
#pragma unroll
      for (int j = 0; j < 8; ++j) mx = fmaxf(mx, __bfloat162float(e[j]));
    }
    mx = row_reduce<true>(mx, sa, tpr_log2);
    float ex[KV][8];
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < KV; ++i) {
      if (!(active && lt + i * tpr < vecs)) continue;
      const T* e = reinterpret_cast<const T*>(&xv[i]);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        ex[i][j] = __expf(__bfloat162float(e[j]) - mx);
        sum += ex[i][j];
      }
    }
    sum = row_reduce<false>(sum, sb, tpr_log2);
    const float inv = 1.0f / sum;
#pragma unroll
    for (int i = 0; i < KV; ++i) {
      const int vi = lt + i * tpr;
      if (!(active && vi < vecs)) continue;
      uint4 o;
      T* oe = reinterpret_cast<T*>(&o);
#pragma unroll
      for (int j = 0; j < 8; ++j) oe[j] = __float2bfloat16_rn(ex[i][j] * inv);
      st16<SP>(yr + vi * 8, o);
    }
  }
}

struct Variant {
  std::string name;
  std::function<void(cudaStream_t)> run;
  std::vector<float> ms;
};

struct Buffers {
  T *x, *w, *y;
  int rows, cols;
};

template <int KV, int OP, int LP, int SP, int MAXT = 512, int MINB = 1, bool EARLYW = (KV <= 4)>
void add(std::vector<Variant>& out, const Buffers& b, int min_block, const char* opname) {
  static_assert(MAXT >= 256);
  const long vecs = static_cast<long>(b.cols) / 8;
  int tpr_log2 = 5;
  while ((1L << tpr_log2) * KV < vecs && (1 << tpr_log2) < 1024) ++tpr_log2;
  const long tpr = 1L << tpr_log2;
  if ((vecs + tpr - 1) / tpr > KV) return;
  if (KV > 1 && (vecs + tpr - 1) / tpr <= KV / 2) return;  // the plan would pick a smaller KV
  const int threads = static_cast<int>(std::max<long>(tpr, min_block));
  if (threads > MAXT) return;
  const int rpb = threads >> tpr_log2;
  const unsigned blocks = static_cast<unsigned>((b.rows + rpb - 1) / rpb);
  char name[128];
  std::snprintf(name, sizeof name, "%s kv%d ld%d st%d blk%d tpr%ld lb%d,%d w%d", opname, KV, LP, SP, threads, tpr, MAXT,
                MINB, EARLYW ? 1 : 0);
  out.push_back({name,
                 [=](cudaStream_t s) {
                   rowwise<KV, OP, LP, SP, MAXT, MINB, EARLYW>
                       <<<blocks, threads, 0, s>>>(b.x, b.w, b.y, b.rows, b.cols, tpr_log2);
                 },
                 {}});
}

template <int OP>
void add_all(std::vector<Variant>& v, const Buffers& b, const char* opname) {
  add<4, OP, 0, 0>(v, b, 256, opname);  // the library's regs_v4 today
  add<8, OP, 0, 0>(v, b, 256, opname);  // regs_v8
  add<2, OP, 0, 0>(v, b, 256, opname);  // regs_v2
  for (int blk : {256, 512}) {
    add<2, OP, 1, 0>(v, b, blk, opname);
    add<4, OP, 1, 0>(v, b, blk, opname);
    add<8, OP, 1, 0>(v, b, blk, opname);
    add<4, OP, 1, 0, 512, 1, false>(v, b, blk, opname);
    add<8, OP, 1, 0, 512, 1, false>(v, b, blk, opname);
  }
  add<2, OP, 1, 0, 256, 6>(v, b, 256, opname);
  add<4, OP, 1, 0, 256, 4>(v, b, 256, opname);
  add<4, OP, 1, 0, 256, 4, false>(v, b, 256, opname);
  add<4, OP, 1, 0, 256, 5, false>(v, b, 256, opname);
  add<8, OP, 1, 0, 256, 3, false>(v, b, 256, opname);
  add<8, OP, 1, 0, 256, 4, false>(v, b, 256, opname);
  add<4, OP, 1, 0, 512, 2>(v, b, 512, opname);
  add<4, OP, 1, 0, 512, 2, false>(v, b, 512, opname);
  add<8, OP, 1, 0, 512, 2, false>(v, b, 512, opname);
  add<2, OP, 1, 0, 1024, 1>(v, b, 1024, opname);
  add<4, OP, 1, 0, 1024, 1, false>(v, b, 1024, opname);
  add<4, OP, 1, 1>(v, b, 256, opname);
  add<4, OP, 1, 2>(v, b, 256, opname);
}

__global__ void fill(T* p, long n, unsigned seed) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = __float2bfloat16_rn((static_cast<float>(h & 0xffff) / 65536.0f - 0.5f) * 4.0f);
  }
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 25;
  const int shapes[][2] = {{32768, 4096}, {65536, 1024}, {8192, 16384}, {16384, 8192}, {4096, 4096}};
  char* flush;
  const size_t flush_bytes = 256u << 20;
  CK(cudaMalloc(&flush, flush_bytes));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (const auto& sh : shapes) {
    Buffers b{nullptr, nullptr, nullptr, sh[0], sh[1]};
    const long n = static_cast<long>(b.rows) * b.cols;
    CK(cudaMalloc(&b.x, n * sizeof(T)));
    CK(cudaMalloc(&b.y, n * sizeof(T)));
    CK(cudaMalloc(&b.w, b.cols * sizeof(T)));
    fill<<<1024, 256>>>(b.x, n, 1);
    fill<<<64, 256>>>(b.w, b.cols, 2);
    CK(cudaDeviceSynchronize());
    std::vector<Variant> v;
    v.push_back({"copy cudaMemcpyAsync",
                 [=](cudaStream_t st) { cudaMemcpyAsync(b.y, b.x, n * sizeof(T), cudaMemcpyDeviceToDevice, st); },
                 {}});
    add_all<2>(v, b, "copy-kernel");
    add_all<0>(v, b, "rmsnorm");
    add_all<1>(v, b, "softmax");
    for (auto& var : v) {
      var.run(s);
      var.run(s);
    }
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    for (int r = 0; r < rounds; ++r) {
      for (auto& var : v) {
        CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, s));
        CK(cudaEventRecord(e0, s));
        var.run(s);
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        var.ms.push_back(ms);
      }
    }
    CK(cudaGetLastError());
    const double bytes = 2.0 * n * sizeof(T);
    auto med = [](std::vector<float> m) {
      std::sort(m.begin(), m.end());
      return m[m.size() / 2];
    };
    const double copy_gbs = bytes / (med(v[0].ms) * 1e-3) / 1e9;
    std::printf("== %dx%d bf16: copy %.0f GB/s\n", b.rows, b.cols, copy_gbs);
    for (auto& var : v) {
      const double m = med(var.ms);
      const double gbs = bytes / (m * 1e-3) / 1e9;
      std::printf("%-48s %8.2f us %7.0f GB/s %.3f\n", var.name.c_str(), m * 1e3, gbs, gbs / copy_gbs);
    }
    std::fflush(stdout);
    CK(cudaFree(b.x));
    CK(cudaFree(b.y));
    CK(cudaFree(b.w));
  }
  return 0;
}
