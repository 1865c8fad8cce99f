// The harness's own device code: deterministic random fill, comparison against an fp32
// reference, non-finite counting, dtype widening, and the fp32 attention reference.
// Host-callable launchers; every one is asynchronous on `stream` unless it returns results
// to the host, and returns the CUDA error instead of aborting.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kport/kernels/registry.h"
#include "numerics.h"

namespace kport::harness {

using kport::kernels::DType;

// Fills n elements of `dtype` with values uniform in [lo, hi), a pure function of
// (seed, stream_id, index): the same seed gives the same inputs on any GPU. fp8 values are
// rounded to the format and saturated to its largest finite value.
cudaError_t fill_uniform(void* dst, std::size_t n, DType dtype, std::uint64_t seed, std::uint64_t stream_id, float lo,
                         float hi, cudaStream_t stream);

// Widens n elements of `dtype` into fp32 (cuBLAS reference of fp32-output gemm).
cudaError_t widen_to_fp32(const void* src, std::size_t n, DType dtype, float* dst, cudaStream_t stream);

// Compares `out` (n elements of `dtype`) with the fp32 reference; synchronous (returns the
// statistics to the host). `scratch` is device memory of at least compare_scratch_bytes().
std::size_t compare_scratch_bytes();
cudaError_t compare_with_reference(const void* out, DType dtype, const float* ref, std::size_t n, void* scratch,
                                   CompareStats& stats, cudaStream_t stream);

// Counts NaN/Inf among n elements; synchronous.
cudaError_t count_nonfinite(const void* data, DType dtype, std::size_t n, void* scratch, unsigned long long& count,
                            cudaStream_t stream);

// Reads `bytes` of `buf` (16-byte aligned) so that the L2 holds only clean lines of it
// afterwards; `sink` (one unsigned of device memory) is written only if an improbable
// checksum comes out, which keeps the loads. Asynchronous.
cudaError_t l2_read_flush(const void* buf, std::size_t bytes, unsigned* sink, cudaStream_t stream);

// Holds `stream` until the host stores a non-zero value to *flag (mapped pinned memory)
// or timeout_s passes, so that work queued behind it runs back to back with no host
// latency between (nvbench's blocking kernel). Asynchronous.
cudaError_t launch_stream_blocker(const volatile int* flag, double timeout_s, cudaStream_t stream);

// gemm_fp8 operands (fp8_inputs.cu): `rows` x `k` values of `dtype` (e4m3/e5m2) at `q` and
// their fp32 scales at `scales` (kport::kernels::fp8_scale_count entries, the layout of
// GemmFp8Args for operand A when `of_a`, else B), quantized from seeded real values with
// scales from each group's amax, as a quantizer does. `scratch`: fp8_operand_scratch_bytes.
// Asynchronous.
std::size_t fp8_operand_scratch_bytes(int rows, int k);
cudaError_t make_fp8_operand(void* q, float* scales, int rows, int k, DType dtype, kport::kernels::Fp8Scale mode,
                             bool of_a, std::uint64_t seed, std::uint64_t stream_id, float* scratch,
                             cudaStream_t stream);
// dst[rows x k] = q * its scale, in fp32 (the reference's operands). Asynchronous.
cudaError_t dequantize_fp8(const void* q, const float* scales, int rows, int k, DType dtype,
                           kport::kernels::Fp8Scale mode, bool of_a, float* dst, cudaStream_t stream);

// grouped_gemm_fp8's B: group g's weight is a power-of-two gain, 2^((g % 5) - 2), times values
// made as gemm_fp8's, so the groups' weights differ in size as experts' do, and a kernel that
// applies another group's B or scales (of the five nearest) is off by a factor of 2 or more.
constexpr float fp8_group_gain(int group) {
  const int e = group % 5 - 2;
  return e >= 0 ? static_cast<float>(1 << e) : 1.0f / static_cast<float>(1 << -e);
}
// `groups` B operands of n x k (GroupedGemmFp8Args): group g is make_fp8_operand's B from
// stream `stream_id + g` at q + g*n*k, its scales at fp8_group_scale_b_offset(mode, g, n, k)
// multiplied by fp8_group_gain(g) (exact: a power of two). `scratch`:
// fp8_operand_scratch_bytes(n, k). Asynchronous.
cudaError_t make_fp8_grouped_b(void* q, float* scales, int groups, int n, int k, DType dtype,
                               kport::kernels::Fp8Scale mode, std::uint64_t seed, std::uint64_t stream_id,
                               float* scratch, cudaStream_t stream);
// The dequantized B of every group, [groups, n, k] fp32, for the reference. Asynchronous.
cudaError_t dequantize_fp8_grouped_b(const void* q, const float* scales, int groups, int n, int k, DType dtype,
                                     kport::kernels::Fp8Scale mode, float* dst, cudaStream_t stream);

// fp32 attention over [B,H,L,d] inputs of `args.dtype` by its definition (cuBLAS fp32
// gemms in pedantic math around a row softmax): o_ref [B,H,L,d] fp32 and lse_ref [B,H,L]
// fp32. `scratch`: device memory of attention_reference_scratch_bytes(args) (about 1.4 GiB
// at most: the scores of a chunk of heads or rows, and its inputs widened). Asynchronous.
std::size_t attention_reference_scratch_bytes(const kport::kernels::AttentionArgs& args);
cudaError_t attention_reference_fp32(const kport::kernels::AttentionArgs& args, cublasHandle_t cublas, void* scratch,
                                     float* o_ref, float* lse_ref, cudaStream_t stream);

}  // namespace kport::harness
