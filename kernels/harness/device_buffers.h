// Device memory of one problem: inputs filled with seeded random values, outputs poisoned
// with NaN (all bits set) before every checked run, and host copies for the CPU reference.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kport/kernels/registry.h"
#include "shapes.h"

namespace kport::harness {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  cudaError_t allocate(std::size_t bytes);
  void* get() const { return m_ptr; }
  std::size_t bytes() const { return m_bytes; }

 private:
  void* m_ptr = nullptr;
  std::size_t m_bytes = 0;
};

struct ProblemBuffers {
  kport::kernels::Problem problem{};
  DeviceBuffer in0, in1, in2;  // gemm a, b; attention q, k, v; rowwise x, w
  DeviceBuffer out, lse;
  DeviceBuffer scale_a, scale_b;  // gemm_fp8 and grouped_gemm_fp8: fp32 scales
  DeviceBuffer ue8m0_a, ue8m0_b;  // their block128_ue8m0: the scales as packed UE8M0 bytes
  // The grouped families' masked layout: masked_m on the device and its host copy (the case's
  // kport::kernels::masked_counts); empty for the contiguous layout.
  DeviceBuffer masked_m;
  std::vector<int> counts;
  // A declared family's tensors, in its def's order (FamilyArgs::tensors), and their elements.
  DeviceBuffer tensors[kport::kernels::k_max_family_tensors];
  std::size_t tensor_elems[kport::kernels::k_max_family_tensors] = {};
  std::size_t out_elems = 0;
  std::size_t lse_elems = 0;
};

// Allocates and fills the inputs (values uniform in ranges chosen per family, a declared
// family's input i in its range from stream i + 1) from `seed` and poisons the outputs; a
// masked grouped case also gets its counts (masked_m). On cudaErrorMemoryAllocation the caller reports the case as an
// error and continues; the buffers free themselves.
cudaError_t setup_problem(const Shape& shape, DType dtype, std::uint64_t seed, ProblemBuffers& b, cudaStream_t stream);
cudaError_t poison_outputs(ProblemBuffers& b, cudaStream_t stream);

// Bytes setup_problem allocates (to refuse cases that cannot fit before trying).
double problem_device_bytes(const Shape& shape, DType dtype);

// Copies n elements of `dtype` at element offset `offset` to the host, widened to float
// (fp8 too: exact).
cudaError_t download_as_float(const void* src, DType dtype, std::size_t offset, std::size_t n, std::vector<float>& out);

}  // namespace kport::harness
