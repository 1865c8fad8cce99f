// The kernel library's contract: op families, their argument structs, and the
// registry of variant instances that kport-harness lists, checks and times.
//
// Layouts (all row-major, contiguous):
//   gemm:      A[M,K] * B[K,N] -> C[M,N]; inputs and C in `dtype`, fp32 accumulation.
//   attention: Q,K,V,O as [B,H,L,d]; lse as fp32 [B,H,L] (natural log of the row sum of
//              exp(scale * q.k), the softmax statistics); causal masks key j > query i.
//   rmsnorm:   y[r,:] = x[r,:] / sqrt(mean(x[r,:]^2) + eps) * w[:]; w has `cols` entries.
//   softmax:   y[r,:] = softmax(x[r,:]) over the row; `w` unused.
//   gemm_fp8:  D[M,N] = (sa . A[M,K]) * (sb . B[N,K])^T: A and B both K-contiguous (B is
//              stored "N x K", as the 8-bit wgmma needs both operands K-major), in e4m3 or
//              e5m2 (`dtype`, both operands), fp32 accumulation, D in bf16. Scales are fp32
//              and multiply the stored values; their layout depends on `scale` (GemmFp8Args);
//              block128_ue8m0 also hands them over as UE8M0 bytes.
//   grouped_gemm: G independent gemms in gemm's layout (the contiguous layout of prefill MoE):
//              A[G*M,K] holds the M rows of group 0, then of group 1, ...; B[G,K,N] holds
//              each group's K x N weight (N contiguous, as gemm's B); D[G*M,N] =
//              A[g*M..,:] * B[g] for each group g. M, the rows of each group, is a multiple of
//              k_grouped_m_align. Inputs and D in `dtype`, fp32 accumulation.
//              The masked layout (MoE decode, `masked_m` not null): the same memory read as
//              A[G][M][K] and D[G][M][N], M any positive capacity, and only the first
//              masked_m[g] rows of group g valid (counts in device memory, each 0..M, read by
//              the kernel when it runs); D's rows past a group's count are unspecified.
//   grouped_gemm_fp8: grouped_gemm's contiguous layout in gemm_fp8's operands: A[G*M,K] and
//              B[G,N,K] fp8 (e4m3 or e5m2, both K-contiguous), D[G*M,N] bf16, fp32
//              accumulation; D[g*M+i,:] = (sa . A[g*M+i,:]) * (sb_g . B[g])^T. Scales as
//              gemm_fp8's, A's for the one tall A and B's once per group
//              (GroupedGemmFp8Args; block128_ue8m0's bytes too). M is a multiple of
//              k_grouped_m_align. The masked layout as grouped_gemm's (A[G][M][K], D[G][M][N],
//              masked_m[g] valid rows, M free), the scales laid out as the contiguous layout's.
//   declared:  a family a library declares as data (kport/kernels/family_def.h: its dims,
//              tensors, work counts, CPU reference, tolerances and grids); its instances get
//              FamilyArgs and name the FamilyDef in Instance::def.
// Every instance registers itself from its own translation unit (KPORT_REGISTER_KERNEL),
// so a harness links exactly the variants that were built for its target.
#pragma once

#include <cuda_runtime.h>

#include "kport/kernels/fp8_scales.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kport::kernels {

enum class DType { f32, f16, bf16, e4m3, e5m2 };
enum class Family { gemm, attention, rmsnorm, softmax, gemm_fp8, grouped_gemm, grouped_gemm_fp8, declared };

struct FamilyDef;  // kport/kernels/family_def.h
struct Instance;

const char* dtype_name(DType t);
// kport's name of a family ("gemm"); "declared" for Family::declared, whose name is its def's.
const char* family_name(Family f);
// The name of the instance's family: its def's name for a declared family, else kport's.
const char* family_name(const Instance& inst);
inline bool dtype_is_fp8(DType t) { return t == DType::e4m3 || t == DType::e5m2; }
inline int dtype_size(DType t) { return t == DType::f32 ? 4 : dtype_is_fp8(t) ? 1 : 2; }

struct GemmArgs {
  const void* a;
  const void* b;
  void* c;
  int m, n, k;
  DType dtype;
};

struct GemmFp8Args {
  const void* a;  // [M,K] fp8, row-major
  const void* b;  // [N,K] fp8, row-major
  void* d;        // [M,N] bf16, row-major
  // tensor: [1] each. row: scale_a[M], scale_b[N]. block128 and block128_ue8m0, kb =
  //   ceil(K/128): scale_a[kb][fp8_scale_a_stride(M)] (row i of K block j at j*stride + i),
  //   scale_b[ceil(N/128)][kb] (rows 128*p.. of B, K block j at p*kb + j).
  const float* scale_a;
  const float* scale_b;
  int m, n, k;
  Fp8Scale scale;
  DType dtype;  // e4m3 or e5m2
  // block128_ue8m0 only (else null): the same scales as UE8M0 bytes, fp8_ue8m0_bytes(M, K)
  // and fp8_ue8m0_bytes(N, K) of them in fp8_scales.h's tiled layout, 16-byte aligned.
  const std::uint8_t* ue8m0_a = nullptr;
  const std::uint8_t* ue8m0_b = nullptr;
};

// Every group's row count is a multiple of this (the M tile of the tensor-core instances), so
// no tile of rows straddles two groups.
constexpr int k_grouped_m_align = 128;

struct GroupedGemmArgs {
  const void* a;        // [groups*m, K] row-major
  const void* b;        // [groups, K, N] row-major
  void* d;              // [groups*m, N] row-major
  int groups, m, n, k;  // m: rows of each group
  DType dtype;
  // The masked layout: device memory, groups counts of valid leading rows of each group, each
  // 0..m, read when the kernel runs. Null: the contiguous layout (every row valid, m a
  // multiple of k_grouped_m_align).
  const int* masked_m = nullptr;
};

struct GroupedGemmFp8Args {
  const void* a;  // [groups*m, K] fp8, row-major: group g's rows from g*m on
  const void* b;  // [groups, N, K] fp8, row-major: each group's N x K weight, as gemm_fp8's B
  void* d;        // [groups*m, N] bf16, row-major
  // scale_a: gemm_fp8's scale_a of the tall A ([groups*m, K]): tensor, one scale for all of A;
  //   row, [groups*m]; block128, [kb][fp8_scale_a_stride(groups*m)].
  // scale_b: gemm_fp8's scale_b of an N x K B once per group, group g's at
  //   fp8_group_scale_b_offset(scale, g, N, K): tensor, [groups]; row, [groups][N]; block128
  //   and block128_ue8m0, [groups][ceil(N/128)][kb].
  const float* scale_a;
  const float* scale_b;
  int groups, m, n, k;  // m: rows of each group, a multiple of k_grouped_m_align unless masked
  Fp8Scale scale;
  DType dtype;  // e4m3 or e5m2
  // The masked layout, as GroupedGemmArgs::masked_m (scales as above: A's of its groups*m rows).
  const int* masked_m = nullptr;
  // block128_ue8m0 only (else null): the same scales as UE8M0 bytes in fp8_scales.h's tiled
  // layout, 16-byte aligned: ue8m0_a the tall A's, fp8_ue8m0_bytes(groups*m, K) bytes;
  // ue8m0_b each group's N x K B's one after the other, group g's at
  // fp8_group_ue8m0_b_offset(g, N, K).
  const std::uint8_t* ue8m0_a = nullptr;
  const std::uint8_t* ue8m0_b = nullptr;
};

struct AttentionArgs {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;  // [B,H,L] fp32
  int batch, heads, seq_len, head_dim;
  bool causal;
  float scale;
  DType dtype;
};

struct RowwiseArgs {  // rmsnorm and softmax
  const void* x;
  const void* w;  // rmsnorm weight [cols]; nullptr for softmax
  void* y;
  int rows, cols;
  float eps;
  DType dtype;
};

// At most this many dims and tensors in a declared family.
constexpr int k_max_family_dims = 8;
constexpr int k_max_family_tensors = 8;

// The problem of a declared family: the shape's dims and one device pointer per tensor, each in
// the order its FamilyDef lists them. A tensor holds the product of its extent's dims elements,
// row-major, in the case's dtype or in fp32 as the def says. Inputs are only read.
struct FamilyArgs {
  const FamilyDef* def;
  long long dims[k_max_family_dims];
  void* tensors[k_max_family_tensors];
  DType dtype;

  // By name: the dim's value (-1 when the family has no such dim) and the tensor's pointer
  // (nullptr when it has no such tensor). Host code; a kernel takes the values as arguments.
  long long dim(std::string_view name) const;
  void* tensor(std::string_view name) const;
};

// Problem handed to a kernel: exactly one member is meaningful, chosen by family.
struct Problem {
  Family family;
  GemmArgs gemm{};
  GemmFp8Args gemm_fp8{};
  GroupedGemmArgs grouped_gemm{};
  GroupedGemmFp8Args grouped_gemm_fp8{};
  AttentionArgs attention{};
  RowwiseArgs rowwise{};
  FamilyArgs declared{};
};

// An instance answers supports() before it is launched: "" when it can run the
// problem, otherwise the reason it cannot ("head_dim 96 not supported"). A
// supports() refusal is a clean "not supported", never an error.
struct Instance {
  Family family;
  std::string variant;                // "simt", "mma_sync", "wgmma_tma", "tcgen05", "vec16"
  std::string name;                   // "gemm.wgmma_tma.128x256x64_s4"
  std::vector<std::string> features;  // what the variant needs: "mma_sync", "wgmma", ...
  std::vector<DType> dtypes;
  std::string config_json;  // tiles, stages, warps as a JSON object
  std::string (*supports)(const Problem&);
  cudaError_t (*launch)(const Problem&, cudaStream_t);
  // The family's definition when `family` is Family::declared (registered with
  // KPORT_REGISTER_FAMILY); nullptr for kport's own families.
  const FamilyDef* def = nullptr;
};

// All instances linked into this binary, in registration order.
std::vector<const Instance*>& registry();
const Instance* find_instance(const std::string& name);

struct Registrar {
  explicit Registrar(const Instance& inst) { registry().push_back(&inst); }
};

}  // namespace kport::kernels

#define KPORT_KERNEL_CONCAT2(a, b) a##b
#define KPORT_KERNEL_CONCAT(a, b) KPORT_KERNEL_CONCAT2(a, b)
// KPORT_REGISTER_KERNEL(instance): `instance` is a static const Instance object.
#define KPORT_REGISTER_KERNEL(instance) \
  static ::kport::kernels::Registrar KPORT_KERNEL_CONCAT(kport_registrar_, __LINE__) { instance }
