// `check`: runs each selected case once on fresh seeded inputs with poisoned outputs and
// compares with the reference: CPU double for small problems, GPU fp32 for large ones (cuBLAS
// for gemm; for attention cuBLAS gemms around a row softmax), CPU double on sampled rows for
// rmsnorm/softmax, the family's own CPU reference in double over every element for a declared
// family.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "commands.h"
#include "cublas_grouped.h"
#include "declared_family.h"
#include "device/harness_kernels.h"
#include "device_buffers.h"
#include "gpu_context.h"
#include "numerics.h"
#include "reference/reference.h"
#include "report.h"
#include "case_selection.h"

namespace kport::harness {

using kport::kernels::DType;
using kport::kernels::Family;
using kport::kernels::Instance;

namespace {

// Problems up to these sizes are checked against the CPU double reference.
constexpr double k_cpu_gemm_macs = 1 << 27;
constexpr double k_cpu_attention_macs = 1 << 26;
constexpr int k_sampled_rows = 64;

cudaDataType_t cuda_type(DType t) { return t == DType::f32 ? CUDA_R_32F : t == DType::f16 ? CUDA_R_16F : CUDA_R_16BF; }

Json case_json(const Case& c, std::uint64_t seed) {
  return {{"instance", c.instance->name},
          {"family", kport::kernels::family_name(*c.instance)},
          {"variant", c.instance->variant},
          {"dtype", kport::kernels::dtype_name(c.dtype)},
          {"shape", shape_json(c.shape)},
          {"shape_text", shape_string(c.shape)},
          {"seed", seed}};
}

// One output of a declared family against its reference.
struct OutputCheck {
  std::string name;
  CompareStats stats;
};

struct CheckError {
  cudaError_t err;
  std::string where;
};

// Row-major gemm through cuBLAS with fp32 output: C^T = B^T A^T in column-major terms.
cublasStatus_t cublas_gemm(cublasHandle_t h, const kport::kernels::GemmArgs& g, void* c, cudaDataType_t c_type,
                           cublasComputeType_t compute) {
  const float alpha = 1.0f, beta = 0.0f;
  return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k, &alpha, g.b, cuda_type(g.dtype), g.n, g.a,
                      cuda_type(g.dtype), g.k, &beta, c, c_type, g.n, compute, CUBLAS_GEMM_DEFAULT);
}

class Checker {
 public:
  Checker(GpuContext& ctx, Report& report, const Options& o) : m_ctx(ctx), m_report(report), m_opt(o) {}

  Json run(const Case& c, std::uint64_t seed) {
    Json r = case_json(c, seed);
    const auto t0 = std::chrono::steady_clock::now();
    run_inner(c, seed, r);
    r["wall_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

 private:
  void error_result(Json& r, const std::string& what, cudaError_t err, const Case& c) {
    r["verdict"] = "error";
    r["reason"] = what + ": " + cuda_error_text(err);
    if (error_is_sticky(err)) {
      m_report.add(r);
      m_report.abort({"kernel_fault",
                      c.instance->name + " (" + shape_string(c.shape) + ", " + kport::kernels::dtype_name(c.dtype) +
                          ") left the GPU context unusable: " + cuda_error_text(err) + "; remaining cases were not run",
                      k_exit_cuda});
    }
  }

  void run_inner(const Case& c, std::uint64_t seed, Json& r) {
    const Instance& inst = *c.instance;
    if (std::find(inst.dtypes.begin(), inst.dtypes.end(), c.dtype) == inst.dtypes.end()) {
      r["verdict"] = "unsupported";
      r["reason"] = std::string("dtype ") + kport::kernels::dtype_name(c.dtype) + " is not among the instance's dtypes";
      return;
    }
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    if (problem_device_bytes(c.shape, c.dtype) * 2.2 > double(free_b)) {
      r["verdict"] = "error";
      r["reason"] = "problem and its reference do not fit the free device memory";
      return;
    }
    ProblemBuffers b;
    if (cudaError_t e = setup_problem(c.shape, c.dtype, seed, b, m_ctx.stream); e != cudaSuccess)
      return error_result(r, "setting up inputs", e, c);
    const std::string refusal = inst.supports(b.problem);
    if (!refusal.empty()) {
      r["verdict"] = "unsupported";
      r["reason"] = refusal;
      return;
    }
    cudaEvent_t done;
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    cudaError_t e = inst.launch(b.problem, m_ctx.stream);
    if (e == cudaSuccess) e = cudaEventRecord(done, m_ctx.stream);
    bool timed_out = false;
    if (e == cudaSuccess) e = wait_with_watchdog(done, m_opt.timeout_s, timed_out);
    cudaEventDestroy(done);
    if (timed_out) {
      r["verdict"] = "error";
      r["reason"] = "kernel did not finish within " + std::to_string(m_opt.timeout_s) + " s";
      m_report.add(r);
      m_report.abort({"kernel_timeout",
                      inst.name + " (" + shape_string(c.shape) + ") did not finish within --timeout-s " +
                          std::to_string(m_opt.timeout_s),
                      k_exit_timeout});
    }
    if (e != cudaSuccess) return error_result(r, "kernel", e, c);

    CompareStats stats;
    double lse_err = -1.0;
    unsigned long long lse_bad = 0;
    std::string reference;
    std::vector<OutputCheck> outputs;
    CheckError ce{cudaSuccess, ""};
    switch (c.shape.family) {
      case Family::gemm: ce = check_gemm(b, stats, reference); break;
      case Family::gemm_fp8: ce = check_gemm_fp8(b, stats, reference); break;
      case Family::grouped_gemm: ce = check_grouped_gemm(b, stats, reference); break;
      case Family::grouped_gemm_fp8: ce = check_grouped_gemm_fp8(b, stats, reference); break;
      case Family::attention: ce = check_attention(b, stats, lse_err, lse_bad, reference); break;
      case Family::declared: ce = check_declared(b, stats, outputs, reference); break;
      default: ce = check_rowwise(b, seed, stats, reference); break;
    }
    if (ce.err != cudaSuccess) return error_result(r, ce.where, ce.err, c);
    const Tolerance tol = tolerance_for(c.shape.family, c.dtype, c.shape.def);
    Verdict v = judge(stats, tol, lse_err, lse_bad);
    // Each output of a declared family passes on its own, so that a small output is not
    // hidden in the norm of a large one; the reason names the output.
    for (const OutputCheck& out : outputs) {
      if (!v.passed || outputs.size() < 2) break;
      if (const Verdict vo = judge(out.stats, tol); !vo.passed) v = {false, "output '" + out.name + "': " + vo.reason};
    }
    r["verdict"] = v.passed ? "passed" : "failed";
    if (!v.passed) r["reason"] = v.reason;
    r["reference"] = reference;
    r.update(stats_json(stats));
    if (lse_err >= 0) {
      r["lse_max_abs_error"] = lse_err;
      r["lse_nonfinite"] = lse_bad;
    }
    if (outputs.size() > 1) {
      Json per = Json::object();
      for (const OutputCheck& out : outputs) per[out.name] = stats_json(out.stats);
      r["outputs"] = per;
    }
    r["tolerance"] = {{"normwise", tol.normwise}, {"max_abs_rel", tol.max_abs_rel}};
    if (c.shape.family == Family::attention) r["tolerance"]["lse_abs"] = tol.lse_abs;
  }

  // Reference of a declared family: its def's CPU reference in double over host copies of
  // every input (widened to float, exact), each output compared in full. `stats` adds up all
  // outputs; `outputs` holds each one's.
  CheckError check_declared(ProblemBuffers& b, CompareStats& stats, std::vector<OutputCheck>& outputs,
                            std::string& reference) {
    const auto& a = b.problem.declared;
    const auto& def = *a.def;
    reference = "cpu_double";
    const std::size_t n = def.tensors.size();
    std::vector<std::vector<float>> host(n);
    std::vector<std::vector<double>> ref(n);
    std::vector<const float*> in(n, nullptr);
    std::vector<double*> out(n, nullptr);
    for (std::size_t i = 0; i < n; ++i) {
      const DType td = tensor_dtype(def, i, a.dtype);
      if (cudaError_t e = download_as_float(a.tensors[i], td, 0, b.tensor_elems[i], host[i]); e != cudaSuccess)
        return {e, "copying tensor '" + def.tensors[i].name + "' to the host"};
      if (def.tensors[i].role == kport::kernels::TensorRole::input) {
        in[i] = host[i].data();
      } else {
        ref[i].assign(b.tensor_elems[i], 0.0);
        out[i] = ref[i].data();
      }
    }
    kport::kernels::FamilyArgs shape = a;  // the reference sees dims and dtype, no device pointers
    for (auto& t : shape.tensors) t = nullptr;
    def.reference(shape, in.data(), out.data());
    for (std::size_t i = 0; i < n; ++i) {
      if (def.tensors[i].role != kport::kernels::TensorRole::output) continue;
      OutputCheck one{def.tensors[i].name, {}};
      compare_host(host[i].data(), ref[i].data(), host[i].size(), one.stats);
      compare_host(host[i].data(), ref[i].data(), host[i].size(), stats);
      outputs.push_back(one);
    }
    return {cudaSuccess, ""};
  }

  CheckError check_gemm(ProblemBuffers& b, CompareStats& stats, std::string& reference) {
    const auto& g = b.problem.gemm;
    if (m_opt.reference == "auto" && double(g.m) * g.n * g.k <= k_cpu_gemm_macs) {
      reference = "cpu_double";
      std::vector<float> a, bm, out;
      cudaError_t e = download_as_float(g.a, g.dtype, 0, std::size_t(g.m) * g.k, a);
      if (e == cudaSuccess) e = download_as_float(g.b, g.dtype, 0, std::size_t(g.k) * g.n, bm);
      if (e == cudaSuccess) e = download_as_float(g.c, g.dtype, 0, b.out_elems, out);
      if (e != cudaSuccess) return {e, "copying gemm data to the host"};
      std::vector<double> ref(b.out_elems);
      kport::reference::gemm(a.data(), bm.data(), ref.data(), g.m, g.n, g.k);
      compare_host(out.data(), ref.data(), out.size(), stats);
      return {cudaSuccess, ""};
    }
    reference = "gpu_cublas_fp32_pedantic";
    DeviceBuffer ref, scratch;
    cudaError_t e = ref.allocate(b.out_elems * sizeof(float));
    if (e == cudaSuccess) e = scratch.allocate(compare_scratch_bytes());
    if (e != cudaSuccess) return {e, "allocating the reference"};
    cublasSetMathMode(m_ctx.cublas, CUBLAS_PEDANTIC_MATH);
    const cublasStatus_t st = cublas_gemm(m_ctx.cublas, g, ref.get(), CUDA_R_32F, CUBLAS_COMPUTE_32F);
    cublasSetMathMode(m_ctx.cublas, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) return {cudaErrorUnknown, "cuBLAS reference gemm"};
    e = compare_with_reference(g.c, g.dtype, static_cast<float*>(ref.get()), b.out_elems, scratch.get(), stats,
                               m_ctx.stream);
    return {e, "comparing with the cuBLAS reference"};
  }

  // The masked layout compares each group's first counts[g] rows of D only (the rows after
  // them are unspecified): rows_of is that count, or m for the contiguous layout.
  static int rows_of(const ProblemBuffers& b, int group, int m) {
    return b.counts.empty() ? m : std::clamp(b.counts[group], 0, m);
  }
  static double valid_rows(const ProblemBuffers& b, int groups, int m) {
    double rows = 0;
    for (int i = 0; i < groups; ++i) rows += rows_of(b, i, m);
    return rows;
  }
  // compare_host over each group's valid rows (out, ref and floor as [groups*m, n]).
  static void compare_groups(const ProblemBuffers& b, int groups, int m, int n, const float* out, const double* ref,
                             CompareStats& stats, const double* floor = nullptr) {
    for (int i = 0; i < groups; ++i) {
      const std::size_t at = std::size_t(i) * m * n;
      compare_host(out + at, ref + at, std::size_t(rows_of(b, i, m)) * n, stats, floor ? floor + at : nullptr);
    }
  }
  // compare_with_reference over each group's valid rows of D (of `dtype`) against the fp32 `ref`.
  cudaError_t compare_groups_on_gpu(const ProblemBuffers& b, int groups, int m, int n, const void* d, DType dtype,
                                    const float* ref, void* scratch, CompareStats& stats) {
    if (b.counts.empty()) return compare_with_reference(d, dtype, ref, b.out_elems, scratch, stats, m_ctx.stream);
    for (int i = 0; i < groups; ++i) {
      const std::size_t at = std::size_t(i) * m * n, count = std::size_t(rows_of(b, i, m)) * n;
      if (count == 0) continue;
      CompareStats part;
      const void* d_at = static_cast<const char*>(d) + at * kport::kernels::dtype_size(dtype);
      if (cudaError_t e = compare_with_reference(d_at, dtype, ref + at, count, scratch, part, m_ctx.stream);
          e != cudaSuccess)
        return e;
      add_stats(stats, part);
    }
    return cudaSuccess;
  }

  // Reference of grouped_gemm: each group's gemm in double on the CPU (kport::reference::
  // grouped_gemm), or all of them in one cuBLAS strided batched call in fp32 pedantic math
  // (groups are equal, so the batch is exactly the grouped problem). The masked layout:
  // each group's valid rows only, on the GPU one cuBLAS gemm per group.
  CheckError check_grouped_gemm(ProblemBuffers& b, CompareStats& stats, std::string& reference) {
    const auto& g = b.problem.grouped_gemm;
    const std::size_t rows = std::size_t(g.groups) * g.m;
    const int* counts = b.counts.empty() ? nullptr : b.counts.data();
    if (m_opt.reference == "auto" && valid_rows(b, g.groups, g.m) * g.n * g.k <= k_cpu_gemm_macs) {
      reference = counts ? "cpu_double_valid_rows" : "cpu_double";
      std::vector<float> a, bm, out;
      cudaError_t e = download_as_float(g.a, g.dtype, 0, rows * g.k, a);
      if (e == cudaSuccess) e = download_as_float(g.b, g.dtype, 0, std::size_t(g.groups) * g.k * g.n, bm);
      if (e == cudaSuccess) e = download_as_float(g.d, g.dtype, 0, b.out_elems, out);
      if (e != cudaSuccess) return {e, "copying grouped_gemm data to the host"};
      std::vector<double> ref(b.out_elems);
      kport::reference::grouped_gemm(a.data(), bm.data(), ref.data(), g.groups, g.m, g.n, g.k, counts);
      compare_groups(b, g.groups, g.m, g.n, out.data(), ref.data(), stats);
      return {cudaSuccess, ""};
    }
    reference = counts ? "gpu_cublas_fp32_pedantic_valid_rows" : "gpu_cublas_fp32_pedantic_strided_batched";
    DeviceBuffer ref, scratch;
    cudaError_t e = ref.allocate(b.out_elems * sizeof(float));
    if (e == cudaSuccess) e = scratch.allocate(compare_scratch_bytes());
    if (e != cudaSuccess) return {e, "allocating the reference"};
    auto* pref = static_cast<float*>(ref.get());
    cublasSetMathMode(m_ctx.cublas, CUBLAS_PEDANTIC_MATH);
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    if (counts == nullptr) {
      st = cublas_grouped_gemm(m_ctx.cublas, g, pref, CUDA_R_32F, CUBLAS_COMPUTE_32F);
    } else {
      const std::size_t e_size = kport::kernels::dtype_size(g.dtype);
      for (int i = 0; i < g.groups && st == CUBLAS_STATUS_SUCCESS; ++i) {
        const int count = rows_of(b, i, g.m);
        if (count == 0) continue;
        const kport::kernels::GemmArgs one{static_cast<const char*>(g.a) + std::size_t(i) * g.m * g.k * e_size,
                                           static_cast<const char*>(g.b) + std::size_t(i) * g.k * g.n * e_size,
                                           nullptr,
                                           count,
                                           g.n,
                                           g.k,
                                           g.dtype};
        st = cublas_gemm(m_ctx.cublas, one, pref + std::size_t(i) * g.m * g.n, CUDA_R_32F, CUBLAS_COMPUTE_32F);
      }
    }
    cublasSetMathMode(m_ctx.cublas, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) return {cudaErrorUnknown, "cuBLAS reference gemm of the groups"};
    e = compare_groups_on_gpu(b, g.groups, g.m, g.n, g.d, g.dtype, pref, scratch.get(), stats);
    return {e, "comparing with the cuBLAS reference"};
  }

  // Reference of gemm_fp8: the operands dequantized (each stored value times its scale) and
  // multiplied in double on the CPU, or in fp32 by cuBLAS in pedantic math on the GPU.
  CheckError check_gemm_fp8(ProblemBuffers& b, CompareStats& stats, std::string& reference) {
    const auto& g = b.problem.gemm_fp8;
    const auto count = [&](bool of_a) {
      return static_cast<std::size_t>(kport::kernels::fp8_scale_count(g.scale, of_a, of_a ? g.m : g.n, g.k));
    };
    if (m_opt.reference == "auto" && double(g.m) * g.n * g.k <= k_cpu_gemm_macs) {
      reference = "cpu_double_dequantized";
      std::vector<float> a, bm, sa, sb, out;
      cudaError_t e = download_as_float(g.a, g.dtype, 0, std::size_t(g.m) * g.k, a);
      if (e == cudaSuccess) e = download_as_float(g.b, g.dtype, 0, std::size_t(g.n) * g.k, bm);
      if (e == cudaSuccess) e = download_as_float(g.scale_a, DType::f32, 0, count(true), sa);
      if (e == cudaSuccess) e = download_as_float(g.scale_b, DType::f32, 0, count(false), sb);
      if (e == cudaSuccess) e = download_as_float(g.d, DType::bf16, 0, b.out_elems, out);
      if (e != cudaSuccess) return {e, "copying gemm_fp8 data to the host"};
      kport::reference::dequantize_fp8(a.data(), sa.data(), g.m, g.k, g.scale, true);
      kport::reference::dequantize_fp8(bm.data(), sb.data(), g.n, g.k, g.scale, false);
      std::vector<double> ref(b.out_elems), floor(b.out_elems);
      kport::reference::gemm_nt(a.data(), bm.data(), ref.data(), g.m, g.n, g.k, floor.data());
      for (double& f : floor) f *= k_fp8_cancellation_floor;
      compare_host(out.data(), ref.data(), out.size(), stats, floor.data());
      return {cudaSuccess, ""};
    }
    reference = "gpu_cublas_fp32_pedantic_dequantized";
    DeviceBuffer a32, b32, ref, scratch;
    cudaError_t e = a32.allocate(std::size_t(g.m) * g.k * sizeof(float));
    if (e == cudaSuccess) e = b32.allocate(std::size_t(g.n) * g.k * sizeof(float));
    if (e == cudaSuccess) e = ref.allocate(b.out_elems * sizeof(float));
    if (e == cudaSuccess) e = scratch.allocate(compare_scratch_bytes());
    if (e != cudaSuccess) return {e, "allocating the reference"};
    auto* pa = static_cast<float*>(a32.get());
    auto* pb = static_cast<float*>(b32.get());
    e = dequantize_fp8(g.a, g.scale_a, g.m, g.k, g.dtype, g.scale, true, pa, m_ctx.stream);
    if (e == cudaSuccess) e = dequantize_fp8(g.b, g.scale_b, g.n, g.k, g.dtype, g.scale, false, pb, m_ctx.stream);
    if (e != cudaSuccess) return {e, "dequantizing the operands"};
    // Row-major D[m,n] = A[m,k] B[n,k]^T is column-major D^T = B^T(op T of [k,n]) A.
    const float alpha = 1.0f, beta = 0.0f;
    cublasSetMathMode(m_ctx.cublas, CUBLAS_PEDANTIC_MATH);
    const cublasStatus_t st = cublasSgemm(m_ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, g.n, g.m, g.k, &alpha, pb, g.k, pa,
                                          g.k, &beta, static_cast<float*>(ref.get()), g.n);
    cublasSetMathMode(m_ctx.cublas, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) return {cudaErrorUnknown, "cuBLAS reference gemm"};
    e = compare_with_reference(g.d, DType::bf16, static_cast<float*>(ref.get()), b.out_elems, scratch.get(), stats,
                               m_ctx.stream);
    return {e, "comparing with the cuBLAS reference"};
  }

  // Reference of grouped_gemm_fp8: A (one tall operand) and every group's B dequantized, then
  // each group's gemm in double on the CPU with gemm_fp8's cancellation floor, or in fp32 by
  // one cuBLAS strided batched call in pedantic math on the GPU. The masked layout: each
  // group's valid rows only, on the GPU one cuBLAS gemm per group.
  CheckError check_grouped_gemm_fp8(ProblemBuffers& b, CompareStats& stats, std::string& reference) {
    const auto& g = b.problem.grouped_gemm_fp8;
    const int rows = g.groups * g.m;
    const std::size_t na = std::size_t(rows) * g.k, nb = std::size_t(g.groups) * g.n * g.k;
    const int* counts = b.counts.empty() ? nullptr : b.counts.data();
    if (m_opt.reference == "auto" && valid_rows(b, g.groups, g.m) * g.n * g.k <= k_cpu_gemm_macs) {
      reference = counts ? "cpu_double_dequantized_valid_rows" : "cpu_double_dequantized";
      std::vector<float> a, bm, sa, sb, out;
      const auto sa_count = static_cast<std::size_t>(kport::kernels::fp8_scale_count(g.scale, true, rows, g.k));
      const auto sb_count =
          static_cast<std::size_t>(kport::kernels::fp8_group_scale_b_offset(g.scale, g.groups, g.n, g.k));
      cudaError_t e = download_as_float(g.a, g.dtype, 0, na, a);
      if (e == cudaSuccess) e = download_as_float(g.b, g.dtype, 0, nb, bm);
      if (e == cudaSuccess) e = download_as_float(g.scale_a, DType::f32, 0, sa_count, sa);
      if (e == cudaSuccess) e = download_as_float(g.scale_b, DType::f32, 0, sb_count, sb);
      if (e == cudaSuccess) e = download_as_float(g.d, DType::bf16, 0, b.out_elems, out);
      if (e != cudaSuccess) return {e, "copying grouped_gemm_fp8 data to the host"};
      kport::reference::dequantize_fp8(a.data(), sa.data(), rows, g.k, g.scale, true);
      kport::reference::dequantize_fp8_grouped_b(bm.data(), sb.data(), g.groups, g.n, g.k, g.scale);
      std::vector<double> ref(b.out_elems), floor(b.out_elems);
      kport::reference::grouped_gemm_nt(a.data(), bm.data(), ref.data(), g.groups, g.m, g.n, g.k, floor.data(), counts);
      for (double& f : floor) f *= k_fp8_cancellation_floor;
      compare_groups(b, g.groups, g.m, g.n, out.data(), ref.data(), stats, floor.data());
      return {cudaSuccess, ""};
    }
    reference = counts ? "gpu_cublas_fp32_pedantic_dequantized_valid_rows"
                       : "gpu_cublas_fp32_pedantic_dequantized_strided_batched";
    DeviceBuffer a32, b32, ref, scratch;
    cudaError_t e = a32.allocate(na * sizeof(float));
    if (e == cudaSuccess) e = b32.allocate(nb * sizeof(float));
    if (e == cudaSuccess) e = ref.allocate(b.out_elems * sizeof(float));
    if (e == cudaSuccess) e = scratch.allocate(compare_scratch_bytes());
    if (e != cudaSuccess) return {e, "allocating the reference"};
    auto* pa = static_cast<float*>(a32.get());
    auto* pb = static_cast<float*>(b32.get());
    e = dequantize_fp8(g.a, g.scale_a, rows, g.k, g.dtype, g.scale, true, pa, m_ctx.stream);
    if (e == cudaSuccess)
      e = dequantize_fp8_grouped_b(g.b, g.scale_b, g.groups, g.n, g.k, g.dtype, g.scale, pb, m_ctx.stream);
    if (e != cudaSuccess) return {e, "dequantizing the operands"};
    // Per group, row-major D_g[m,n] = A_g[m,k] B_g[n,k]^T is column-major D_g^T = B_g^T A_g.
    const float alpha = 1.0f, beta = 0.0f;
    auto* pref = static_cast<float*>(ref.get());
    cublasSetMathMode(m_ctx.cublas, CUBLAS_PEDANTIC_MATH);
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    if (counts == nullptr) {
      st = cublasSgemmStridedBatched(m_ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, g.n, g.m, g.k, &alpha, pb, g.k,
                                     static_cast<long long>(g.n) * g.k, pa, g.k, static_cast<long long>(g.m) * g.k,
                                     &beta, pref, g.n, static_cast<long long>(g.m) * g.n, g.groups);
    } else {
      for (int i = 0; i < g.groups && st == CUBLAS_STATUS_SUCCESS; ++i) {
        const int count = rows_of(b, i, g.m);
        if (count > 0)
          st = cublasSgemm(m_ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, g.n, count, g.k, &alpha,
                           pb + std::size_t(i) * g.n * g.k, g.k, pa + std::size_t(i) * g.m * g.k, g.k, &beta,
                           pref + std::size_t(i) * g.m * g.n, g.n);
      }
    }
    cublasSetMathMode(m_ctx.cublas, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) return {cudaErrorUnknown, "cuBLAS reference gemm of the groups"};
    e = compare_groups_on_gpu(b, g.groups, g.m, g.n, g.d, DType::bf16, pref, scratch.get(), stats);
    return {e, "comparing with the cuBLAS reference"};
  }

  CheckError check_attention(ProblemBuffers& b, CompareStats& stats, double& lse_err, unsigned long long& lse_bad,
                             std::string& reference) {
    const auto& a = b.problem.attention;
    const std::size_t n = b.out_elems, nl = b.lse_elems;
    const double macs = double(a.batch) * a.heads * a.seq_len * double(a.seq_len) * a.head_dim;
    if (m_opt.reference == "auto" && macs <= k_cpu_attention_macs) {
      reference = "cpu_double";
      std::vector<float> q, k, v, o, lse;
      cudaError_t e = download_as_float(a.q, a.dtype, 0, n, q);
      if (e == cudaSuccess) e = download_as_float(a.k, a.dtype, 0, n, k);
      if (e == cudaSuccess) e = download_as_float(a.v, a.dtype, 0, n, v);
      if (e == cudaSuccess) e = download_as_float(a.o, a.dtype, 0, n, o);
      if (e == cudaSuccess) e = download_as_float(a.lse, DType::f32, 0, nl, lse);
      if (e != cudaSuccess) return {e, "copying attention data to the host"};
      std::vector<double> o_ref(n), lse_ref(nl);
      kport::reference::attention(q.data(), k.data(), v.data(), o_ref.data(), lse_ref.data(), a.batch, a.heads,
                                  a.seq_len, a.head_dim, a.causal, a.scale);
      compare_host(o.data(), o_ref.data(), n, stats);
      CompareStats ls;
      compare_host(lse.data(), lse_ref.data(), nl, ls);
      lse_err = ls.max_abs_diff;
      lse_bad = ls.nonfinite;
      return {cudaSuccess, ""};
    }
    reference = "gpu_cublas_fp32_attention";
    DeviceBuffer o_ref, lse_ref, work, scratch;
    cudaError_t e = o_ref.allocate(n * sizeof(float));
    if (e == cudaSuccess) e = lse_ref.allocate(nl * sizeof(float));
    if (e == cudaSuccess) e = work.allocate(attention_reference_scratch_bytes(a));
    if (e == cudaSuccess) e = scratch.allocate(compare_scratch_bytes());
    if (e != cudaSuccess) return {e, "allocating the reference"};
    e = attention_reference_fp32(a, m_ctx.cublas, work.get(), static_cast<float*>(o_ref.get()),
                                 static_cast<float*>(lse_ref.get()), m_ctx.stream);
    if (e != cudaSuccess) return {e, "fp32 attention reference"};
    e = compare_with_reference(a.o, a.dtype, static_cast<float*>(o_ref.get()), n, scratch.get(), stats, m_ctx.stream);
    if (e != cudaSuccess) return {e, "comparing with the fp32 attention reference"};
    CompareStats ls;
    e = compare_with_reference(a.lse, DType::f32, static_cast<float*>(lse_ref.get()), nl, scratch.get(), ls,
                               m_ctx.stream);
    lse_err = ls.max_abs_diff;
    lse_bad = ls.nonfinite;
    return {e, "comparing lse"};
  }

  CheckError check_rowwise(ProblemBuffers& b, std::uint64_t seed, CompareStats& stats, std::string& reference) {
    const auto& a = b.problem.rowwise;
    const bool softmax = b.problem.family == Family::softmax;
    std::vector<int> rows;
    if (a.rows <= 2 * k_sampled_rows) {
      for (int i = 0; i < a.rows; ++i) rows.push_back(i);
      reference = "cpu_double";
    } else {
      // First, last and seeded random rows: edges of the grid plus a spread of the middle.
      std::mt19937_64 rng(seed ^ 0x5EEDu);
      rows = {0, a.rows - 1};
      while (static_cast<int>(rows.size()) < k_sampled_rows)
        rows.push_back(static_cast<int>(rng() % static_cast<std::uint64_t>(a.rows)));
      reference = "cpu_double_sampled_rows";
    }
    std::vector<float> w, x, y;
    if (!softmax) {
      if (cudaError_t e = download_as_float(a.w, a.dtype, 0, a.cols, w); e != cudaSuccess)
        return {e, "copying the weight to the host"};
    }
    std::vector<double> ref(a.cols);
    for (int row : rows) {
      const std::size_t off = std::size_t(row) * a.cols;
      cudaError_t e = download_as_float(a.x, a.dtype, off, a.cols, x);
      if (e == cudaSuccess) e = download_as_float(a.y, a.dtype, off, a.cols, y);
      if (e != cudaSuccess) return {e, "copying rows to the host"};
      if (softmax)
        kport::reference::softmax_row(x.data(), ref.data(), a.cols);
      else
        kport::reference::rmsnorm_row(x.data(), w.data(), ref.data(), a.cols, a.eps);
      compare_host(y.data(), ref.data(), a.cols, stats);
    }
    // Sampled rows say nothing about the others: count NaN/Inf (poison) everywhere.
    DeviceBuffer scratch;
    cudaError_t e = scratch.allocate(compare_scratch_bytes());
    if (e != cudaSuccess) return {e, "allocating scratch"};
    unsigned long long bad = 0;
    e = count_nonfinite(a.y, a.dtype, b.out_elems, scratch.get(), bad, m_ctx.stream);
    stats.nonfinite = std::max(stats.nonfinite, bad);
    return {e, "counting NaN/Inf in the output"};
  }

  GpuContext& m_ctx;
  Report& m_report;
  const Options& m_opt;
};

}  // namespace

std::uint64_t resolve_seed(const Options& o) {
  if (o.seed_given) return o.seed;
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

int run_check(const Options& o) {
  std::vector<Case> cases;
  if (auto err = check_declared_families(kport::kernels::registry())) return report_error(*err);
  if (auto err = select_cases(o, kport::kernels::registry(), cases)) return report_error(*err);
  if (o.plan) return print_plan(o, cases);
  GpuContext ctx;
  if (auto err = open_gpu(ctx, false)) return report_error(*err);
  const std::uint64_t seed = resolve_seed(o);
  Report report("check", device_json(ctx));
  report.doc()["seed"] = seed;
  Checker checker(ctx, report, o);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    // One seed per run; each case derives its own so cases differ yet replay exactly.
    const std::uint64_t case_seed = seed + 0x9E3779B97F4A7C15ull * (i + 1);
    report.add(checker.run(cases[i], o.all ? case_seed : seed));
  }
  return report.finish();
}

}  // namespace kport::harness
