// Every promoting gemm_fp8.wgmma_tma instance, in block128 mode, scales each column of D by
// the scale of the 128-row block of B that the column lies in: also where a tile of 160 or
// 192 columns straddles two blocks, and at the N edge where the tile's second block would lie
// past the last one. The harness's `check` cannot see a wrong block here: its quantizer gives
// nearly every 128x128 block of B the same scale (each holds some row of the largest
// magnitude). So here every block of B and every (row, K block) of A has its own power-of-two
// scale, neighbouring blocks of B differ by at least 2x, and the operands are small multiples
// of 1/2, so that every fp32 sum is exact and D must equal the double reference to bf16
// rounding. Skips with the reason without a compute capability 9.0 device.
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kport/kernels/registry.h"
#include "sm90_gpu_test_support.h"

using namespace kport::kernels;

namespace {

using kport::test_gpu::bf16_to_float;
using kport::test_gpu::DeviceBuffer;
using kport::test_gpu::operand;
using kport::test_gpu::to_fp8;

std::string skip_reason() { return kport::test_gpu::sm90_skip_reason("the sm_90a kernels"); }

struct Shape {
  int m, n, k;
};

// A problem's host side: operands, scales in the registry's block128 layout
// (fp8_scale_index) and the double reference.
struct Inputs {
  Shape s;
  std::vector<float> a, b, sa, sb;
  std::vector<double> ref;

  explicit Inputs(Shape shape) : s(shape) {
    const int kblocks = s.k / k_fp8_block, nblocks = (s.n + k_fp8_block - 1) / k_fp8_block;
    a.resize(static_cast<size_t>(s.m) * s.k);
    b.resize(static_cast<size_t>(s.n) * s.k);
    for (int i = 0; i < s.m; ++i)
      for (int c = 0; c < s.k; ++c) a[static_cast<size_t>(i) * s.k + c] = operand(i, c, 0x1234u);
    for (int j = 0; j < s.n; ++j)
      for (int c = 0; c < s.k; ++c) b[static_cast<size_t>(j) * s.k + c] = operand(j, c, 0xBEEFu);
    // 2^-1..2^1 for A; 2^-2..2^2 for B, where block p+1 of B is 2^3 or 2^-2 times block p in
    // every K block.
    sa.assign(fp8_scale_count(Fp8Scale::block128, true, s.m, s.k), 0.0f);
    sb.assign(fp8_scale_count(Fp8Scale::block128, false, s.n, s.k), 0.0f);
    for (int kb = 0; kb < kblocks; ++kb) {
      for (int i = 0; i < s.m; ++i) sa[index(true, i, kb)] = std::ldexp(1.0f, (i + 2 * kb) % 3 - 1);
      for (int p = 0; p < nblocks; ++p) sb[index(false, p * k_fp8_block, kb)] = std::ldexp(1.0f, (3 * p + kb) % 5 - 2);
    }
    ref.assign(static_cast<size_t>(s.m) * s.n, 0.0);
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j)
        for (int kb = 0; kb < kblocks; ++kb) {
          double part = 0.0;
          for (int c = kb * k_fp8_block; c < (kb + 1) * k_fp8_block; ++c)
            part += static_cast<double>(a[static_cast<size_t>(i) * s.k + c]) * b[static_cast<size_t>(j) * s.k + c];
          ref[static_cast<size_t>(i) * s.n + j] += part * sa[index(true, i, kb)] * sb[index(false, j, kb)];
        }
  }
  long long index(bool of_a, int row, int kb) const {
    return fp8_scale_index(Fp8Scale::block128, of_a, row, kb, of_a ? s.m : s.n, s.k / k_fp8_block);
  }
};

std::vector<std::uint8_t> encode(const std::vector<float>& v, DType t) {
  std::vector<std::uint8_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = to_fp8(v[i], t);
  return out;
}

// The multiple of N an instance publishes as run_n_multiple
// (the instances that store D by TMA), else 1.
int run_n_multiple(const Instance& inst) { return kport::test_gpu::config_int(inst, "run_n_multiple", 1); }

// Runs `inst` on one problem and dtype and compares D with the reference; returns the number
// of wrong elements (and reports the first few). A shape whose N the instance publishes that it
// does not run (run_n_multiple) is refused, with its reason, and not compared.
int run_and_compare(const Instance& inst, const Inputs& in, DType dtype) {
  const Shape s = in.s;
  const std::vector<std::uint8_t> a8 = encode(in.a, dtype), b8 = encode(in.b, dtype);
  DeviceBuffer<std::uint8_t> da(a8.size()), db(b8.size());
  DeviceBuffer<float> dsa(in.sa.size()), dsb(in.sb.size());
  // One row more than D: the kernel must leave it alone.
  const size_t d_count = static_cast<size_t>(s.m + 1) * s.n;
  DeviceBuffer<std::uint16_t> dd(d_count);
  EXPECT_EQ(cudaMemcpy(da.ptr, a8.data(), a8.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(db.ptr, b8.data(), b8.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dsa.ptr, in.sa.data(), in.sa.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dsb.ptr, in.sb.data(), in.sb.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(dd.ptr, 0xFF, d_count * 2), cudaSuccess);  // NaN: what is never written shows

  Problem p;
  p.family = Family::gemm_fp8;
  p.gemm_fp8 = {da.ptr, db.ptr, dd.ptr, dsa.ptr, dsb.ptr, s.m, s.n, s.k, Fp8Scale::block128, dtype};
  const std::string why = inst.supports(p);
  if (s.n % run_n_multiple(inst) != 0) {
    EXPECT_NE(why, "") << inst.name << " takes N=" << s.n << ", which it publishes that it does not run";
    return 0;
  }
  EXPECT_EQ(why, "") << inst.name;
  if (!why.empty()) return 1;
  EXPECT_EQ(inst.launch(p, nullptr), cudaSuccess) << inst.name;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << inst.name;
  std::vector<std::uint16_t> d(d_count);
  EXPECT_EQ(cudaMemcpy(d.data(), dd.ptr, d_count * 2, cudaMemcpyDeviceToHost), cudaSuccess);

  int wrong = 0;
  for (int i = 0; i < s.m; ++i)
    for (int j = 0; j < s.n; ++j) {
      const double ref = in.ref[static_cast<size_t>(i) * s.n + j];
      const double got = bf16_to_float(d[static_cast<size_t>(i) * s.n + j]);
      // bf16 keeps 8 significant bits: round to nearest lands within 2^-8 of the value; a
      // neighbour block's scale would be off by 4x or 8x.
      if (!(std::fabs(got - ref) <= std::ldexp(std::fabs(ref), -7)) && ++wrong <= 5)
        ADD_FAILURE() << inst.name << " " << dtype_name(dtype) << " " << s.m << "x" << s.n << "x" << s.k << ": D[" << i
                      << "][" << j << "] (B scale block " << j / k_fp8_block << ") = " << got << ", expected " << ref;
    }
  for (int j = 0; j < s.n; ++j)
    if (d[static_cast<size_t>(s.m) * s.n + j] != 0xFFFF && ++wrong <= 5)
      ADD_FAILURE() << inst.name << ": wrote past the last row of D at column " << j;
  return wrong;
}

}  // namespace

TEST(GemmFp8BlockScalesOnGpu, EveryColumnTakesTheScaleOfItsBlockOfB) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  // N: tiles of 160, 176 and 192 columns straddling scale blocks of B at every start offset
  // (7167), last tiles whose second or third block lies past B (448, 1001, 7167), N below one
  // block (3), and whole tiles of 128 and 64 columns (640).
  const Shape shapes[] = {{130, 448, 384}, {77, 1001, 256}, {65, 7167, 256}, {200, 640, 128}, {33, 3, 256}};
  std::vector<Inputs> inputs;
  for (const Shape& s : shapes) inputs.emplace_back(s);
  int tested = 0;
  for (const Instance* inst : registry()) {
    if (inst->family != Family::gemm_fp8) continue;
    Problem probe;
    probe.family = Family::gemm_fp8;
    probe.gemm_fp8 = {reinterpret_cast<void*>(256),
                      reinterpret_cast<void*>(256),
                      reinterpret_cast<void*>(256),
                      reinterpret_cast<const float*>(256),
                      reinterpret_cast<const float*>(256),
                      128,
                      128,
                      128,
                      Fp8Scale::block128,
                      DType::e4m3};
    if (!inst->supports(probe).empty()) continue;  // not a promoting instance
    for (DType t : {DType::e4m3, DType::e5m2})
      for (const Inputs& in : inputs) EXPECT_EQ(run_and_compare(*inst, in, t), 0) << inst->name;
    ++tested;
  }
  EXPECT_GT(tested, 0) << "no gemm_fp8 instance with block128 scales is linked";
}
