// Every grouped_gemm_fp8 instance, in every scale mode and both formats, gives each group's
// rows the product with that group's B and that group's scales of B: every group has its own
// operand values and its own power-of-two scales (neighbouring groups' differ by 2x at least,
// per tensor, per row or per 128x128 block), so a tile that loads another group's B, or
// applies another group's scales, misses by a factor of 2 or more. The operands are small
// multiples of 1/2, so every fp32 sum is exact and D must equal the double reference to bf16
// rounding; the row after D must stay untouched. Shapes: tiles of 160 columns straddling
// scale blocks of B and a last tile past N (448, 1001), N off every tile (200), and K not a
// multiple of 128 (272, per tensor and row-wise only), where each group's last K block must be
// zero-filled rather than read from the next group. The masked layout: each group's first
// masked_m[g] rows against the same reference, with m off the tile, an empty group and counts
// ending mid-tile, the counts read from device memory when the kernel runs (a captured graph
// replayed after they change). Skips with the reason without a compute capability 9.0 device.
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
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
using kport::test_gpu::config_int;
using kport::test_gpu::DeviceBuffer;
using kport::test_gpu::operand;
using kport::test_gpu::to_fp8;

std::string skip_reason() { return kport::test_gpu::sm90_skip_reason("the sm_90a kernels"); }

struct Shape {
  int g, m, n, k;
};

// `s` as the instance runs it: M rounded up to its rows per group, N to the multiple it
// publishes (a shape off them is refused with the reason, tests/kernels' supports tests).
Shape for_instance(const Instance& inst, Shape s) {
  const int bm = config_int(inst, "group_m_align", 1), n_align = config_int(inst, "run_n_multiple", 0);
  s.m = (s.m + bm - 1) / bm * bm;
  if (n_align > 0) s.n = (s.n + n_align - 1) / n_align * n_align;
  return s;
}

// A problem's host side: operands, scales in the registry's layouts (A's of the tall A, B's
// once per group at fp8_group_scale_b_offset) and the double reference.
struct Inputs {
  Shape s;
  Fp8Scale mode;
  std::vector<float> a, b, sa, sb;
  std::vector<double> ref;

  Inputs(Shape shape, Fp8Scale scale) : s(shape), mode(scale) {
    const int rows = s.g * s.m, kblocks = (s.k + k_fp8_block - 1) / k_fp8_block;
    a.resize(static_cast<size_t>(rows) * s.k);
    b.resize(static_cast<size_t>(s.g) * s.n * s.k);
    for (int i = 0; i < rows; ++i)
      for (int c = 0; c < s.k; ++c) a[static_cast<size_t>(i) * s.k + c] = operand(i, c, 0x1234u);
    for (int g = 0; g < s.g; ++g)
      for (int j = 0; j < s.n; ++j)
        for (int c = 0; c < s.k; ++c)
          b[(static_cast<size_t>(g) * s.n + j) * s.k + c] = operand(j, c, 0xBEEFu + 77u * static_cast<unsigned>(g));
    // A: 2^-1..2^1 by row and K block; B: 2^-2..2^2, where group g+1 is 2^3 or 2^-2 times group g
    // at every row and block (and block p+1 of a group likewise against block p).
    sa.assign(fp8_scale_count(mode, true, rows, s.k), 1.0f);
    sb.assign(fp8_group_scale_b_offset(mode, s.g, s.n, s.k), 0.0f);
    for (int kb = 0; kb < kblocks; ++kb)
      for (int i = 0; i < rows; ++i) sa[index_a(i, kb)] = std::ldexp(1.0f, (i + 2 * kb) % 3 - 1);
    for (int g = 0; g < s.g; ++g)
      for (int kb = 0; kb < kblocks; ++kb)
        for (int j = 0; j < s.n; ++j) {
          const int unit = mode == Fp8Scale::row ? j : mode == Fp8Scale::block128 ? j / k_fp8_block + kb : 0;
          sb[index_b(g, j, kb)] = std::ldexp(1.0f, (3 * g + 3 * unit) % 5 - 2);
        }
    ref.assign(static_cast<size_t>(rows) * s.n, 0.0);
    for (int i = 0; i < rows; ++i) {
      const int g = i / s.m;
      for (int j = 0; j < s.n; ++j)
        for (int kb = 0; kb < kblocks; ++kb) {
          double part = 0.0;
          for (int c = kb * k_fp8_block; c < std::min(s.k, (kb + 1) * k_fp8_block); ++c)
            part += static_cast<double>(a[static_cast<size_t>(i) * s.k + c]) *
                    b[(static_cast<size_t>(g) * s.n + j) * s.k + c];
          ref[static_cast<size_t>(i) * s.n + j] += part * sa[index_a(i, kb)] * sb[index_b(g, j, kb)];
        }
    }
  }
  long long index_a(int row, int kb) const {
    return fp8_scale_index(mode, true, row, kb, s.g * s.m, (s.k + k_fp8_block - 1) / k_fp8_block);
  }
  long long index_b(int g, int row, int kb) const {
    return fp8_group_scale_b_offset(mode, g, s.n, s.k) +
           fp8_scale_index(mode, false, row, kb, s.n, (s.k + k_fp8_block - 1) / k_fp8_block);
  }
};

std::vector<std::uint8_t> encode(const std::vector<float>& v, DType t) {
  std::vector<std::uint8_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = to_fp8(v[i], t);
  return out;
}

// Runs `inst` on one problem and dtype and compares D with the reference; returns the number
// of wrong elements (and reports the first few).
int run_and_compare(const Instance& inst, const Inputs& in, DType dtype) {
  const Shape s = in.s;
  const int rows = s.g * s.m;
  const std::vector<std::uint8_t> a8 = encode(in.a, dtype), b8 = encode(in.b, dtype);
  DeviceBuffer<std::uint8_t> da(a8.size()), db(b8.size());
  DeviceBuffer<float> dsa(in.sa.size()), dsb(in.sb.size());
  // One row more than D: the kernel must leave it alone.
  const size_t d_count = static_cast<size_t>(rows + 1) * s.n;
  DeviceBuffer<std::uint16_t> dd(d_count);
  EXPECT_EQ(cudaMemcpy(da.ptr, a8.data(), a8.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(db.ptr, b8.data(), b8.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dsa.ptr, in.sa.data(), in.sa.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dsb.ptr, in.sb.data(), in.sb.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(dd.ptr, 0xFF, d_count * 2), cudaSuccess);  // NaN: what is never written shows

  Problem p;
  p.family = Family::grouped_gemm_fp8;
  p.grouped_gemm_fp8 = {da.ptr, db.ptr, dd.ptr, dsa.ptr, dsb.ptr, s.g, s.m, s.n, s.k, in.mode, dtype};
  const std::string why = inst.supports(p);
  EXPECT_EQ(why, "") << inst.name;
  if (!why.empty()) return 1;
  EXPECT_EQ(inst.launch(p, nullptr), cudaSuccess) << inst.name;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << inst.name;
  std::vector<std::uint16_t> d(d_count);
  EXPECT_EQ(cudaMemcpy(d.data(), dd.ptr, d_count * 2, cudaMemcpyDeviceToHost), cudaSuccess);

  int wrong = 0;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < s.n; ++j) {
      const double ref = in.ref[static_cast<size_t>(i) * s.n + j];
      const double got = bf16_to_float(d[static_cast<size_t>(i) * s.n + j]);
      // bf16 rounding lands within 2^-8 of the value; another group's B or scales are off by far more.
      if (!(std::fabs(got - ref) <= std::ldexp(std::fabs(ref), -7)) && ++wrong <= 5)
        ADD_FAILURE() << inst.name << " " << dtype_name(dtype) << " scale=" << static_cast<int>(in.mode) << " g=" << s.g
                      << ",m=" << s.m << ",n=" << s.n << ",k=" << s.k << ": D[" << i << "][" << j << "] (group "
                      << i / s.m << ") = " << got << ", expected " << ref;
    }
  for (int j = 0; j < s.n; ++j)
    if (d[static_cast<size_t>(rows) * s.n + j] != 0xFFFF && ++wrong <= 5)
      ADD_FAILURE() << inst.name << ": wrote past the last row of D at column " << j;
  return wrong;
}

}  // namespace

TEST(GroupedGemmFp8OnGpu, EveryGroupTakesItsOwnBAndScales) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const Shape shapes[] = {{3, 128, 448, 384}, {4, 256, 200, 256}, {2, 128, 1001, 256}};
  const Shape k_not_128 = {3, 128, 96, 272};
  int tested = 0;
  for (const Instance* inst : registry()) {
    if (inst->family != Family::grouped_gemm_fp8) continue;
    for (Fp8Scale mode : {Fp8Scale::tensor, Fp8Scale::row, Fp8Scale::block128}) {
      // A mode the instance's config does not list is refused (tests/kernels' supports tests).
      const char* listed = mode == Fp8Scale::row        ? "\"row\""
                           : mode == Fp8Scale::block128 ? "\"block128\""
                                                        : "\"tensor\"";
      if (inst->config_json.find(listed) == std::string::npos) continue;
      std::vector<Inputs> inputs;
      for (const Shape& s : shapes) inputs.emplace_back(for_instance(*inst, s), mode);
      if (mode != Fp8Scale::block128) inputs.emplace_back(for_instance(*inst, k_not_128), mode);
      for (DType t : {DType::e4m3, DType::e5m2})
        for (const Inputs& in : inputs) EXPECT_EQ(run_and_compare(*inst, in, t), 0) << inst->name;
    }
    ++tested;
  }
  EXPECT_GT(tested, 0) << "no grouped_gemm_fp8 instance is linked";
}

namespace {

// One masked run of `inst` through a captured graph: D's valid rows under `counts` (uploaded
// before the graph runs; the graph and its arguments stay as captured) against the reference,
// and an empty group's rows left as they were (its tiles are skipped). Returns the wrong elements.
int replay_and_compare(const Instance& inst, const Inputs& in, DType dtype, cudaGraphExec_t exec, cudaStream_t stream,
                       int* device_counts, std::uint16_t* dd, const std::vector<int>& counts) {
  const Shape s = in.s;
  const size_t d_count = static_cast<size_t>(s.g * s.m + 1) * s.n;
  EXPECT_EQ(cudaMemset(dd, 0xFF, d_count * 2), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(device_counts, counts.data(), counts.size() * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess) << inst.name;
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << inst.name;
  std::vector<std::uint16_t> d(d_count);
  EXPECT_EQ(cudaMemcpy(d.data(), dd, d_count * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  int wrong = 0;
  for (int g = 0; g < s.g; ++g)
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j) {
        const size_t at = (static_cast<size_t>(g) * s.m + i) * s.n + j;
        if (i >= counts[g]) {
          if (counts[g] == 0 && d[at] != 0xFFFF && ++wrong <= 5)
            ADD_FAILURE() << inst.name << ": wrote row " << i << " of group " << g << ", which has no valid rows";
          continue;
        }
        const double ref = in.ref[at], got = bf16_to_float(d[at]);
        if (!(std::fabs(got - ref) <= std::ldexp(std::fabs(ref), -7)) && ++wrong <= 5)
          ADD_FAILURE() << inst.name << " " << dtype_name(dtype) << " scale=" << static_cast<int>(in.mode)
                        << " masked g=" << s.g << ",m=" << s.m << ",n=" << s.n << ",k=" << s.k << ": D[" << g << "]["
                        << i << "][" << j << "] = " << got << ", expected " << ref;
      }
  for (int j = 0; j < s.n; ++j)
    if (d[static_cast<size_t>(s.g) * s.m * s.n + j] != 0xFFFF && ++wrong <= 5)
      ADD_FAILURE() << inst.name << ": wrote past the last group's rows at column " << j;
  return wrong;
}

// The masked layout of `in` (its A read as [g][m][k]): the launch captured once, replayed under
// each set of counts.
int run_masked(const Instance& inst, const Inputs& in, DType dtype, const std::vector<std::vector<int>>& runs) {
  const Shape s = in.s;
  const std::vector<std::uint8_t> a8 = encode(in.a, dtype), b8 = encode(in.b, dtype);
  DeviceBuffer<std::uint8_t> da(a8.size()), db(b8.size());
  DeviceBuffer<float> dsa(in.sa.size()), dsb(in.sb.size());
  DeviceBuffer<std::uint16_t> dd(static_cast<size_t>(s.g * s.m + 1) * s.n);
  DeviceBuffer<int> dcounts(s.g);
  EXPECT_EQ(cudaMemcpy(da.ptr, a8.data(), a8.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(db.ptr, b8.data(), b8.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dsa.ptr, in.sa.data(), in.sa.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dsb.ptr, in.sb.data(), in.sb.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(dcounts.ptr, 0, s.g * sizeof(int)), cudaSuccess);

  Problem p;
  p.family = Family::grouped_gemm_fp8;
  p.grouped_gemm_fp8 = {da.ptr, db.ptr, dd.ptr, dsa.ptr, dsb.ptr, s.g, s.m, s.n, s.k, in.mode, dtype, dcounts.ptr};
  const std::string why = inst.supports(p);
  EXPECT_EQ(why, "") << inst.name;
  if (!why.empty()) return 1;
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), cudaSuccess);
  const cudaError_t launched = inst.launch(p, stream);
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  EXPECT_EQ(launched, cudaSuccess) << inst.name;
  EXPECT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess) << inst.name;
  int wrong = 0;
  if (exec != nullptr)
    for (const auto& counts : runs)
      wrong += replay_and_compare(inst, in, dtype, exec, stream, dcounts.ptr, dd.ptr, counts);
  else
    wrong = 1;
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  return wrong;
}

}  // namespace

TEST(GroupedGemmFp8OnGpu, TheMaskedLayoutComputesEachGroupsValidRowsFromCountsOnTheDevice) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  // m of 200 (two tile rows, the second of 72) and of 65 (one, past a 64-row half); counts of
  // 0, of a whole group, ending mid-tile and of one row, then changed on the device.
  const Shape shapes[] = {{4, 200, 264, 256}, {3, 65, 160, 384}};
  const std::vector<std::vector<int>> runs[] = {{{0, 200, 130, 7}, {129, 0, 64, 200}}, {{65, 0, 1}, {0, 33, 65}}};
  int tested = 0;
  for (const Instance* inst : registry()) {
    if (inst->family != Family::grouped_gemm_fp8) continue;
    if (config_int(*inst, "group_m_align", 0) != 128 || config_int(*inst, "promote_every_k", 0) == 0) {
      // A taller or unpromoted tile has no masked kernel: it refuses the layout, naming the
      // instances that run it.
      Problem p;
      p.family = Family::grouped_gemm_fp8;
      int counts = 0;
      p.grouped_gemm_fp8 = {nullptr, nullptr, nullptr, nullptr,          nullptr,     2,
                            256,     256,     256,     Fp8Scale::tensor, DType::e4m3, &counts};
      EXPECT_NE(inst->supports(p).find("the masked layout (valid < m) runs the promoting 128-row tiles"),
                std::string::npos)
          << inst->name << ": " << inst->supports(p);
      continue;
    }
    for (Fp8Scale mode : {Fp8Scale::tensor, Fp8Scale::row, Fp8Scale::block128})
      for (int i = 0; i < 2; ++i) {
        // Block scales in the masked layout take m a multiple of 4 (supports() says so).
        if (mode == Fp8Scale::block128 && shapes[i].m % 4 != 0) continue;
        const Inputs in(shapes[i], mode);
        for (DType t : {DType::e4m3, DType::e5m2}) EXPECT_EQ(run_masked(*inst, in, t, runs[i]), 0) << inst->name;
      }
    ++tested;
  }
  EXPECT_GT(tested, 0) << "no grouped_gemm_fp8 instance is linked";
}
