// Every grouped_gemm instance in the masked layout of MoE decode: A [g][m][k] and D [g][m][n]
// with m off the 128-row tile, group g's first masked_m[g] rows valid, the counts in device
// memory. The launch is captured into a graph once and replayed after the counts change on the
// device: D's valid rows must match the double reference each time, so the kernel reads the
// counts when it runs, not when it is launched. Counts include an empty group (whose rows must
// keep their poison: its tiles are skipped), a whole group, and counts ending inside a tile.
// The operands are small multiples of 1/2, so every fp32 sum is exact and D must equal the
// reference to bf16 rounding. Skips with the reason without a compute capability 9.0 device.
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

struct Shape {
  int g, m, n, k;
};

// Exact in bf16: the operands are multiples of 1/2 up to 2.
std::uint16_t to_bf16(float v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  return static_cast<std::uint16_t>(bits >> 16);
}

// Captures one launch of `inst` and replays it under each set of counts; returns the wrong
// elements of the valid rows (and of an empty group's rows, which must stay untouched).
int run_masked(const Instance& inst, Shape s, const std::vector<std::vector<int>>& runs) {
  const size_t rows = static_cast<size_t>(s.g) * s.m;
  std::vector<float> a(rows * s.k), b(static_cast<size_t>(s.g) * s.k * s.n);
  for (size_t i = 0; i < rows; ++i)
    for (int c = 0; c < s.k; ++c) a[i * s.k + c] = operand(static_cast<int>(i), c, 0x51u);
  for (int g = 0; g < s.g; ++g)  // each group its own weight
    for (int p = 0; p < s.k; ++p)
      for (int j = 0; j < s.n; ++j)
        b[(static_cast<size_t>(g) * s.k + p) * s.n + j] = operand(p, j, 0xC0DEu + 31u * static_cast<unsigned>(g));
  std::vector<double> ref(rows * s.n, 0.0);
  for (size_t i = 0; i < rows; ++i) {
    const size_t g = i / s.m;
    for (int p = 0; p < s.k; ++p)
      for (int j = 0; j < s.n; ++j) ref[i * s.n + j] += double(a[i * s.k + p]) * b[(g * s.k + p) * s.n + j];
  }
  std::vector<std::uint16_t> a16(a.size()), b16(b.size());
  for (size_t i = 0; i < a.size(); ++i) a16[i] = to_bf16(a[i]);
  for (size_t i = 0; i < b.size(); ++i) b16[i] = to_bf16(b[i]);
  DeviceBuffer<std::uint16_t> da(a16.size()), db(b16.size()), dd((rows + 1) * s.n);
  DeviceBuffer<int> dcounts(s.g);
  EXPECT_EQ(cudaMemcpy(da.ptr, a16.data(), a16.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(db.ptr, b16.data(), b16.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(dcounts.ptr, 0, s.g * sizeof(int)), cudaSuccess);

  Problem p;
  p.family = Family::grouped_gemm;
  p.grouped_gemm = {da.ptr, db.ptr, dd.ptr, s.g, s.m, s.n, s.k, DType::bf16, dcounts.ptr};
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
  int wrong = exec == nullptr ? 1 : 0;
  for (const auto& counts : runs) {
    if (exec == nullptr) break;
    const size_t d_count = (rows + 1) * s.n;
    EXPECT_EQ(cudaMemset(dd.ptr, 0xFF, d_count * 2), cudaSuccess);  // NaN: what is never written shows
    EXPECT_EQ(cudaMemcpy(dcounts.ptr, counts.data(), s.g * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess) << inst.name;
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << inst.name;
    std::vector<std::uint16_t> d(d_count);
    EXPECT_EQ(cudaMemcpy(d.data(), dd.ptr, d_count * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int g = 0; g < s.g; ++g)
      for (int i = 0; i < s.m; ++i)
        for (int j = 0; j < s.n; ++j) {
          const size_t at = (static_cast<size_t>(g) * s.m + i) * s.n + j;
          if (i >= counts[g]) {
            if (counts[g] == 0 && d[at] != 0xFFFF && ++wrong <= 5)
              ADD_FAILURE() << inst.name << ": wrote row " << i << " of group " << g << ", which has no valid rows";
            continue;
          }
          const double got = bf16_to_float(d[at]);
          if (!(std::fabs(got - ref[at]) <= std::ldexp(std::fabs(ref[at]), -7)) && ++wrong <= 5)
            ADD_FAILURE() << inst.name << " g=" << s.g << ",m=" << s.m << ",n=" << s.n << ",k=" << s.k << ": D[" << g
                          << "][" << i << "][" << j << "] = " << got << ", expected " << ref[at] << " (count "
                          << counts[g] << ")";
        }
    for (int j = 0; j < s.n; ++j)
      if (d[rows * s.n + j] != 0xFFFF && ++wrong <= 5)
        ADD_FAILURE() << inst.name << ": wrote past the last group's rows at column " << j;
  }
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  return wrong;
}

}  // namespace

TEST(GroupedGemmMaskedOnGpu, EachGroupsValidRowsFromCountsReadOnTheDevice) {
  if (const std::string why = kport::test_gpu::sm90_skip_reason("the sm_90a kernels"); !why.empty())
    GTEST_SKIP() << why;
  // m of 200 (two tile rows, the second of 72 rows) and of 65; K not a multiple of 64 (the
  // last K block of a group zero-filled), N off every tile.
  const Shape shapes[] = {{4, 200, 264, 136}, {3, 65, 72, 64}};
  const std::vector<std::vector<int>> runs[] = {{{0, 200, 130, 7}, {129, 0, 64, 200}}, {{65, 0, 1}, {0, 33, 65}}};
  int tested = 0;
  for (const Instance* inst : registry()) {
    if (inst->family != Family::grouped_gemm) continue;
    for (int i = 0; i < 2; ++i) EXPECT_EQ(run_masked(*inst, shapes[i], runs[i]), 0) << inst->name;
    ++tested;
  }
  EXPECT_GE(tested, 3) << "the simt and both wgmma_tma instances of grouped_gemm should be linked";
}
