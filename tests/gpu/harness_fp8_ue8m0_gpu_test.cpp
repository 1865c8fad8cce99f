// The harness's inputs for gemm_fp8's UE8M0 block scales (scale=3) on a GPU: each fp32 block
// scale is the smallest power of two at or above the block128 (scale=2) scale of the same
// seed (both are the group's amax over the format's largest value), and the UE8M0 bytes the
// harness hands to the variants hold exactly those scales in fp8_scales.h's tiled layout,
// every row of B its block's. Needs a device that runs the harness's sm_90a device code
// (compute capability 9.0); skipped with the reason otherwise.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "device_buffers.h"
#include "kport/kernels/fp8_scales.h"
#include "shapes.h"
#include "sm90_gpu_test_support.h"

using namespace kport::kernels;
using kport::harness::ProblemBuffers;
using kport::harness::Shape;

namespace {

std::string skip_reason() { return kport::test_gpu::sm90_skip_reason("the harness's sm_90a device code"); }

template <class T>
std::vector<T> download(const void* src, long long n) {
  std::vector<T> out(static_cast<std::size_t>(n));
  EXPECT_EQ(cudaMemcpy(out.data(), src, out.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

float pow2_at_or_above(float x) {
  int e = 0;
  const float f = std::frexp(x, &e);
  return std::ldexp(1.0f, f == 0.5f ? e - 1 : e);
}

}  // namespace

TEST(HarnessFp8Ue8m0Gpu, BlockScalesArePowersOfTwoAndTheBytesHoldThem) {
  if (const std::string why = skip_reason(); !why.empty()) GTEST_SKIP() << why;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (DType dtype : {DType::e4m3, DType::e5m2})
    for (const char* mnk : {"m=130,n=300,k=640", "m=1,n=129,k=128", "m=256,n=256,k=2048"}) {
      SCOPED_TRACE(std::string(mnk) + " " + dtype_name(dtype));
      Shape s2, s3;
      ASSERT_FALSE(kport::harness::parse_shape(Family::gemm_fp8, std::string(mnk) + ",scale=2", s2));
      ASSERT_FALSE(kport::harness::parse_shape(Family::gemm_fp8, std::string(mnk) + ",scale=3", s3));
      ProblemBuffers b2, b3;
      ASSERT_EQ(kport::harness::setup_problem(s2, dtype, 7, b2, stream), cudaSuccess);
      ASSERT_EQ(kport::harness::setup_problem(s3, dtype, 7, b3, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      const GemmFp8Args& g2 = b2.problem.gemm_fp8;
      const GemmFp8Args& g3 = b3.problem.gemm_fp8;
      EXPECT_EQ(g2.ue8m0_a, nullptr);  // only the UE8M0 mode hands bytes over
      ASSERT_NE(g3.ue8m0_a, nullptr);
      ASSERT_NE(g3.ue8m0_b, nullptr);
      const int kblocks = (g3.k + k_fp8_block - 1) / k_fp8_block;
      for (bool of_a : {true, false}) {
        const int rows = of_a ? g3.m : g3.n;
        const long long count = fp8_scale_count(Fp8Scale::block128_ue8m0, of_a, rows, g3.k);
        const auto f2 = download<float>(of_a ? g2.scale_a : g2.scale_b, count);
        const auto f3 = download<float>(of_a ? g3.scale_a : g3.scale_b, count);
        for (long long i = 0; i < count; ++i)
          EXPECT_EQ(f3[static_cast<std::size_t>(i)], pow2_at_or_above(f2[static_cast<std::size_t>(i)]))
              << (of_a ? "A" : "B") << " scale " << i;
        const auto bytes = download<std::uint8_t>(of_a ? g3.ue8m0_a : g3.ue8m0_b, fp8_ue8m0_bytes(rows, g3.k));
        for (int r = 0; r < rows; ++r)
          for (int j = 0; j < kblocks; ++j) {
            std::uint8_t want = 0;
            const float scale =
                f3[static_cast<std::size_t>(fp8_scale_index(Fp8Scale::block128_ue8m0, of_a, r, j, rows, kblocks))];
            ASSERT_TRUE(ue8m0_from_float(scale, want)) << scale;
            ASSERT_EQ(bytes[static_cast<std::size_t>(fp8_ue8m0_offset(r, j, g3.k))], want)
                << (of_a ? "A" : "B") << " row " << r << " K block " << j;
          }
      }
    }
  cudaStreamDestroy(stream);
}
