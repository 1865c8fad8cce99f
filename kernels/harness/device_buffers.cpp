#include "device_buffers.h"

#include <algorithm>
#include <cstring>

#include "declared_family.h"
#include "device/harness_kernels.h"
#include "kport/kernels/masked_counts.h"
#include "reference/dtype_bits.h"

namespace kport::harness {

namespace {
#define KPORT_TRY(expr)                         \
  do {                                          \
    const cudaError_t status_ = (expr);         \
    if (status_ != cudaSuccess) return status_; \
  } while (0)

// Distinct random streams per buffer, so a and b (or q and k) are independent.
constexpr std::uint64_t k_stream_in0 = 1, k_stream_in1 = 2, k_stream_in2 = 3;
// grouped_gemm_fp8's B: group g from stream k_stream_groups + g, clear of the ones above.
constexpr std::uint64_t k_stream_groups = 1000;

// block128_ue8m0: the fp32 block scales (powers of two, made on the device) of A (`of_a`: one
// operand of `rows` rows, the tall A of a grouped case) or of `groups` B operands of `rows`
// rows one after the other (gemm_fp8's B is one group), packed on the host by the code the
// unit tests check into the tiled UE8M0 layout the variants read. Synchronous; small (one
// byte per row and 128 K).
cudaError_t pack_ue8m0(const DeviceBuffer& scales, DeviceBuffer& packed, bool of_a, int groups, int rows, int k) {
  using namespace kport::kernels;
  std::vector<float> host(static_cast<std::size_t>(groups * fp8_scale_count(Fp8Scale::block128_ue8m0, of_a, rows, k)));
  KPORT_TRY(cudaMemcpy(host.data(), scales.get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(groups * fp8_ue8m0_bytes(rows, k)));
  const bool packed_all = of_a ? groups == 1 && fp8_pack_ue8m0(host.data(), true, rows, k, bytes.data())
                               : fp8_pack_ue8m0_grouped_b(host.data(), groups, rows, k, bytes.data());
  if (!packed_all) return cudaErrorInvalidValue;  // not a power of 2
  KPORT_TRY(packed.allocate(bytes.size()));
  return cudaMemcpy(packed.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
}

// A masked grouped case's counts, on the host and in device memory; null for the contiguous
// layout. Synchronous.
cudaError_t make_counts(const Shape& s, ProblemBuffers& b, const int*& masked_m) {
  masked_m = nullptr;
  b.counts.clear();
  if (s.valid < 0) return cudaSuccess;
  b.counts = kport::kernels::masked_counts(s.groups, s.m, s.valid);
  KPORT_TRY(b.masked_m.allocate(b.counts.size() * sizeof(int)));
  KPORT_TRY(cudaMemcpy(b.masked_m.get(), b.counts.data(), b.counts.size() * sizeof(int), cudaMemcpyHostToDevice));
  masked_m = static_cast<const int*>(b.masked_m.get());
  return cudaSuccess;
}
}  // namespace

DeviceBuffer::~DeviceBuffer() {
  if (m_ptr != nullptr) cudaFree(m_ptr);
}

cudaError_t DeviceBuffer::allocate(std::size_t bytes) {
  if (m_ptr != nullptr) cudaFree(m_ptr);
  m_ptr = nullptr;
  m_bytes = 0;
  KPORT_TRY(cudaMalloc(&m_ptr, bytes == 0 ? 16 : bytes));
  m_bytes = bytes;
  return cudaSuccess;
}

double problem_device_bytes(const Shape& s, DType dtype) {
  const double e = kport::kernels::dtype_size(dtype);
  switch (s.family) {
    case Family::gemm: return e * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
    case Family::gemm_fp8:  // the operands, D, and the fp32 operands and D of the reference
      return e * (double(s.m) * s.k + double(s.k) * s.n) + 2.0 * s.m * double(s.n) +
             4.0 * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n) / 2.2;
    case Family::grouped_gemm_fp8:  // as gemm_fp8, every group
      return s.groups * (e * (double(s.m) * s.k + double(s.k) * s.n) + 2.0 * s.m * double(s.n) +
                         4.0 * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n) / 2.2);
    case Family::grouped_gemm:  // A, B, D, and the fp32 D of the cuBLAS reference
      return s.groups *
             (e * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n) + 4.0 * s.m * double(s.n) / 2.2);
    case Family::attention:
      return e * 4.0 * s.batch * s.heads * double(s.seq_len) * s.head_dim + 4.0 * s.batch * s.heads * double(s.seq_len);
    case Family::declared: {
      double bytes = 0;
      for (std::size_t i = 0; s.def != nullptr && i < s.def->tensors.size(); ++i)
        bytes += tensor_elements(*s.def, i, s.dims) * kport::kernels::dtype_size(tensor_dtype(*s.def, i, dtype));
      return bytes;
    }
    default: return e * (2.0 * s.rows * double(s.cols) + s.cols);
  }
}

cudaError_t setup_problem(const Shape& s, DType dtype, std::uint64_t seed, ProblemBuffers& b, cudaStream_t stream) {
  const std::size_t e = kport::kernels::dtype_size(dtype);
  b.problem = make_problem(s, dtype);
  switch (s.family) {
    case Family::gemm: {
      const std::size_t na = std::size_t(s.m) * s.k, nb = std::size_t(s.k) * s.n;
      b.out_elems = std::size_t(s.m) * s.n;
      KPORT_TRY(b.in0.allocate(na * e));
      KPORT_TRY(b.in1.allocate(nb * e));
      KPORT_TRY(b.out.allocate(b.out_elems * e));
      KPORT_TRY(fill_uniform(b.in0.get(), na, dtype, seed, k_stream_in0, -1.0f, 1.0f, stream));
      KPORT_TRY(fill_uniform(b.in1.get(), nb, dtype, seed, k_stream_in1, -1.0f, 1.0f, stream));
      b.problem.gemm.a = b.in0.get();
      b.problem.gemm.b = b.in1.get();
      b.problem.gemm.c = b.out.get();
      break;
    }
    case Family::gemm_fp8: {
      const std::size_t na = std::size_t(s.m) * s.k, nb = std::size_t(s.n) * s.k;
      const auto mode = static_cast<kport::kernels::Fp8Scale>(s.scale);
      b.out_elems = std::size_t(s.m) * s.n;
      KPORT_TRY(b.in0.allocate(na));
      KPORT_TRY(b.in1.allocate(nb));
      KPORT_TRY(b.out.allocate(b.out_elems * 2));  // bf16
      KPORT_TRY(b.scale_a.allocate(kport::kernels::fp8_scale_count(mode, true, s.m, s.k) * sizeof(float)));
      KPORT_TRY(b.scale_b.allocate(kport::kernels::fp8_scale_count(mode, false, s.n, s.k) * sizeof(float)));
      DeviceBuffer scratch;
      KPORT_TRY(scratch.allocate(fp8_operand_scratch_bytes(std::max(s.m, s.n), s.k)));
      auto* amax = static_cast<float*>(scratch.get());
      KPORT_TRY(make_fp8_operand(b.in0.get(), static_cast<float*>(b.scale_a.get()), s.m, s.k, dtype, mode, true, seed,
                                 k_stream_in0, amax, stream));
      KPORT_TRY(make_fp8_operand(b.in1.get(), static_cast<float*>(b.scale_b.get()), s.n, s.k, dtype, mode, false, seed,
                                 k_stream_in1, amax, stream));
      KPORT_TRY(cudaStreamSynchronize(stream));  // before the scratch is freed
      auto& g = b.problem.gemm_fp8;
      g.a = b.in0.get(), g.b = b.in1.get(), g.d = b.out.get();
      g.scale_a = static_cast<const float*>(b.scale_a.get());
      g.scale_b = static_cast<const float*>(b.scale_b.get());
      if (mode == kport::kernels::Fp8Scale::block128_ue8m0) {
        KPORT_TRY(pack_ue8m0(b.scale_a, b.ue8m0_a, true, 1, s.m, s.k));
        KPORT_TRY(pack_ue8m0(b.scale_b, b.ue8m0_b, false, 1, s.n, s.k));
        g.ue8m0_a = static_cast<const std::uint8_t*>(b.ue8m0_a.get());
        g.ue8m0_b = static_cast<const std::uint8_t*>(b.ue8m0_b.get());
      }
      break;
    }
    case Family::grouped_gemm: {
      // Equal groups, one after the other: A [g*m, k], B [g, k, n], D [g*m, n] (the masked
      // layout's [g][m][k] and [g][m][n] are the same memory); the same value range as gemm, so
      // each group is a gemm of the gemm family's inputs.
      const std::size_t rows = std::size_t(s.groups) * s.m;
      const std::size_t na = rows * s.k, nb = std::size_t(s.groups) * s.k * s.n;
      b.out_elems = rows * s.n;
      KPORT_TRY(b.in0.allocate(na * e));
      KPORT_TRY(b.in1.allocate(nb * e));
      KPORT_TRY(b.out.allocate(b.out_elems * e));
      KPORT_TRY(fill_uniform(b.in0.get(), na, dtype, seed, k_stream_in0, -1.0f, 1.0f, stream));
      KPORT_TRY(fill_uniform(b.in1.get(), nb, dtype, seed, k_stream_in1, -1.0f, 1.0f, stream));
      auto& g = b.problem.grouped_gemm;
      g.a = b.in0.get(), g.b = b.in1.get(), g.d = b.out.get();
      KPORT_TRY(make_counts(s, b, g.masked_m));
      break;
    }
    case Family::grouped_gemm_fp8: {
      // A is one tall operand of g*m rows, quantized as gemm_fp8's A (one scale for all of it
      // per tensor); B is every group's weight made as gemm_fp8's B from its own stream, at
      // its own power-of-two gain (make_fp8_grouped_b), with its own scales.
      const int rows = s.groups * s.m;  // parse_shape keeps it within 2^30
      const std::size_t na = std::size_t(rows) * s.k, nb = std::size_t(s.groups) * s.n * s.k;
      const auto mode = static_cast<kport::kernels::Fp8Scale>(s.scale);
      b.out_elems = std::size_t(rows) * s.n;
      KPORT_TRY(b.in0.allocate(na));
      KPORT_TRY(b.in1.allocate(nb));
      KPORT_TRY(b.out.allocate(b.out_elems * 2));  // bf16
      KPORT_TRY(b.scale_a.allocate(kport::kernels::fp8_scale_count(mode, true, rows, s.k) * sizeof(float)));
      KPORT_TRY(b.scale_b.allocate(kport::kernels::fp8_group_scale_b_offset(mode, s.groups, s.n, s.k) * sizeof(float)));
      DeviceBuffer scratch;
      KPORT_TRY(scratch.allocate(fp8_operand_scratch_bytes(std::max(rows, s.n), s.k)));
      auto* amax = static_cast<float*>(scratch.get());
      KPORT_TRY(make_fp8_operand(b.in0.get(), static_cast<float*>(b.scale_a.get()), rows, s.k, dtype, mode, true, seed,
                                 k_stream_in0, amax, stream));
      KPORT_TRY(make_fp8_grouped_b(b.in1.get(), static_cast<float*>(b.scale_b.get()), s.groups, s.n, s.k, dtype, mode,
                                   seed, k_stream_groups, amax, stream));
      KPORT_TRY(cudaStreamSynchronize(stream));  // before the scratch is freed
      auto& g = b.problem.grouped_gemm_fp8;
      g.a = b.in0.get(), g.b = b.in1.get(), g.d = b.out.get();
      g.scale_a = static_cast<const float*>(b.scale_a.get());
      g.scale_b = static_cast<const float*>(b.scale_b.get());
      if (mode == kport::kernels::Fp8Scale::block128_ue8m0) {  // A's of the tall A, B's group after group
        KPORT_TRY(pack_ue8m0(b.scale_a, b.ue8m0_a, true, 1, rows, s.k));
        KPORT_TRY(pack_ue8m0(b.scale_b, b.ue8m0_b, false, s.groups, s.n, s.k));
        g.ue8m0_a = static_cast<const std::uint8_t*>(b.ue8m0_a.get());
        g.ue8m0_b = static_cast<const std::uint8_t*>(b.ue8m0_b.get());
      }
      KPORT_TRY(make_counts(s, b, g.masked_m));
      break;
    }
    case Family::attention: {
      const std::size_t n = std::size_t(s.batch) * s.heads * s.seq_len * s.head_dim;
      b.out_elems = n;
      b.lse_elems = std::size_t(s.batch) * s.heads * s.seq_len;
      KPORT_TRY(b.in0.allocate(n * e));
      KPORT_TRY(b.in1.allocate(n * e));
      KPORT_TRY(b.in2.allocate(n * e));
      KPORT_TRY(b.out.allocate(n * e));
      KPORT_TRY(b.lse.allocate(b.lse_elems * sizeof(float)));
      // q and k in [-2, 2): with scale 1/sqrt(d) the scores spread over a few units, so
      // the softmax is neither flat nor one-hot.
      KPORT_TRY(fill_uniform(b.in0.get(), n, dtype, seed, k_stream_in0, -2.0f, 2.0f, stream));
      KPORT_TRY(fill_uniform(b.in1.get(), n, dtype, seed, k_stream_in1, -2.0f, 2.0f, stream));
      KPORT_TRY(fill_uniform(b.in2.get(), n, dtype, seed, k_stream_in2, -1.0f, 1.0f, stream));
      auto& a = b.problem.attention;
      a.q = b.in0.get(), a.k = b.in1.get(), a.v = b.in2.get();
      a.o = b.out.get();
      a.lse = static_cast<float*>(b.lse.get());
      break;
    }
    case Family::declared: {
      // Each tensor its own buffer; input i from random stream i + 1, as in0, in1, ... are.
      auto& a = b.problem.declared;
      b.out_elems = 0;
      for (std::size_t i = 0; s.def != nullptr && i < s.def->tensors.size(); ++i) {
        const auto& t = s.def->tensors[i];
        const DType td = tensor_dtype(*s.def, i, dtype);
        const auto n = static_cast<std::size_t>(tensor_elements(*s.def, i, s.dims));
        b.tensor_elems[i] = n;
        KPORT_TRY(b.tensors[i].allocate(n * kport::kernels::dtype_size(td)));
        if (t.role == kport::kernels::TensorRole::input)
          KPORT_TRY(fill_uniform(b.tensors[i].get(), n, td, seed, i + 1, t.lo, t.hi, stream));
        else
          b.out_elems += n;
        a.tensors[i] = b.tensors[i].get();
      }
      break;
    }
    default: {
      const std::size_t n = std::size_t(s.rows) * s.cols;
      b.out_elems = n;
      KPORT_TRY(b.in0.allocate(n * e));
      KPORT_TRY(b.out.allocate(n * e));
      const bool softmax = s.family == Family::softmax;
      KPORT_TRY(fill_uniform(b.in0.get(), n, dtype, seed, k_stream_in0, softmax ? -4.0f : -3.0f, softmax ? 4.0f : 3.0f,
                             stream));
      b.problem.rowwise.x = b.in0.get();
      b.problem.rowwise.y = b.out.get();
      if (!softmax) {
        KPORT_TRY(b.in1.allocate(std::size_t(s.cols) * e));
        KPORT_TRY(fill_uniform(b.in1.get(), s.cols, dtype, seed, k_stream_in1, 0.5f, 1.5f, stream));
        b.problem.rowwise.w = b.in1.get();
      }
      break;
    }
  }
  KPORT_TRY(poison_outputs(b, stream));
  return cudaStreamSynchronize(stream);
}

cudaError_t poison_outputs(ProblemBuffers& b, cudaStream_t stream) {
  // All bits set is a NaN in fp32, fp16 and bf16, and in e4m3 and e5m2.
  if (b.out.get() != nullptr) KPORT_TRY(cudaMemsetAsync(b.out.get(), 0xFF, b.out.bytes(), stream));
  if (b.lse.get() != nullptr) KPORT_TRY(cudaMemsetAsync(b.lse.get(), 0xFF, b.lse.bytes(), stream));
  const auto* def = b.problem.family == Family::declared ? b.problem.declared.def : nullptr;
  for (std::size_t i = 0; def != nullptr && i < def->tensors.size(); ++i)
    if (def->tensors[i].role == kport::kernels::TensorRole::output)
      KPORT_TRY(cudaMemsetAsync(b.tensors[i].get(), 0xFF, b.tensors[i].bytes(), stream));
  return cudaSuccess;
}

cudaError_t download_as_float(const void* src, DType dtype, std::size_t offset, std::size_t n,
                              std::vector<float>& out) {
  const std::size_t e = kport::kernels::dtype_size(dtype);
  out.resize(n);
  if (dtype == DType::f32) {
    return cudaMemcpy(out.data(), static_cast<const char*>(src) + offset * e, n * e, cudaMemcpyDeviceToHost);
  }
  if (kport::kernels::dtype_is_fp8(dtype)) {
    std::vector<std::uint8_t> raw(n);
    KPORT_TRY(cudaMemcpy(raw.data(), static_cast<const char*>(src) + offset, n, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i)
      out[i] = dtype == DType::e4m3 ? kport::reference::e4m3_to_float(raw[i]) : kport::reference::e5m2_to_float(raw[i]);
    return cudaSuccess;
  }
  std::vector<std::uint16_t> raw(n);
  KPORT_TRY(cudaMemcpy(raw.data(), static_cast<const char*>(src) + offset * e, n * e, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i)
    out[i] = dtype == DType::bf16 ? kport::reference::bf16_to_float(raw[i]) : kport::reference::fp16_to_float(raw[i]);
  return cudaSuccess;
}

}  // namespace kport::harness
