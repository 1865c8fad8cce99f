// attention.mma_sync instances: host side of the FlashAttention-2-style kernel (see the
// .cuh for the algorithm). One CTA per (query tile, batch*head); the dtype and the causal
// flag select the instantiation.
#include <cmath>
#include <string>

#include "attention_mma_sync_sm80.cuh"
#include "kport/kernels/registry.h"

namespace kport::kernels::attention_mma_sync {
namespace {

template <class Cfg, class T, bool Causal>
cudaError_t launch_typed(const AttentionArgs& a, cudaStream_t stream) {
  auto kernel = attention_fwd_mma_kernel<Cfg, T, Causal>;
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::k_smem_bytes);
  if (attr != cudaSuccess) return attr;
  const dim3 grid = attention_grid::grid((a.seq_len + Cfg::k_br - 1) / Cfg::k_br, a);
  const float scale_log2 = a.scale * 1.4426950408889634f;
  kernel<<<grid, Cfg::k_threads, Cfg::k_smem_bytes, stream>>>(static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                                              static_cast<const T*>(a.v), static_cast<T*>(a.o), a.lse,
                                                              a.seq_len, scale_log2);
  return cudaGetLastError();
}

template <class Cfg>
std::string supports(const Problem& p) {
  if (p.family != Family::attention) return "not an attention problem";
  const AttentionArgs& a = p.attention;
  if (a.dtype != DType::bf16 && a.dtype != DType::f16)
    return std::string("dtype ") + dtype_name(a.dtype) + " not supported (bf16 and f16 only)";
  if (a.head_dim != Cfg::k_d)
    return "head_dim " + std::to_string(a.head_dim) + " not supported by this instance (needs " +
           std::to_string(Cfg::k_d) + ")";
  if (a.batch < 1 || a.heads < 1 || a.seq_len < 1) return "batch, heads and seq_len must be >= 1";
  if (auto why = attention_grid::refusal(a); !why.empty()) return why;
  if (!(a.scale > 0.f) || !std::isfinite(a.scale)) return "softmax scale must be positive and finite";
  for (const void* ptr : {a.q, a.k, a.v, static_cast<const void*>(a.o)})
    if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0) return "Q, K, V and O must be 16-byte aligned";
  return "";
}

template <class Cfg>
cudaError_t launch(const Problem& p, cudaStream_t stream) {
  const AttentionArgs& a = p.attention;
  if (a.dtype == DType::bf16)
    return a.causal ? launch_typed<Cfg, __nv_bfloat16, true>(a, stream)
                    : launch_typed<Cfg, __nv_bfloat16, false>(a, stream);
  return a.causal ? launch_typed<Cfg, __half, true>(a, stream) : launch_typed<Cfg, __half, false>(a, stream);
}

template <class Cfg>
Instance make_instance(const char* name) {
  const std::string json = "{\"head_dim\":" + std::to_string(Cfg::k_d) + ",\"br\":" + std::to_string(Cfg::k_br) +
                           ",\"bc\":" + std::to_string(Cfg::k_bc) + ",\"warps\":" + std::to_string(Cfg::k_warps) +
                           ",\"stages\":2,\"smem_bytes\":" + std::to_string(Cfg::k_smem_bytes) + "," +
                           attention_grid::k_limits_config + "}";
  return Instance{
      Family::attention,         "mma_sync", name,           {"mma_sync", "mma_sync_bf16", "ldmatrix", "cp_async"},
      {DType::bf16, DType::f16}, json,       &supports<Cfg>, &launch<Cfg>};
}

// Instances kept after tuning on the H200 (bf16, L=4096, TFLOP/s): d128 with 4 warps
// (Br=64) 306 full / 282 causal against 262 / 226 for 8 warps (Br=128) and 277 / 258
// for Bc=32. d64: 4 warps 279; 8 warps reached 275 only when held to 128 registers for
// two blocks per SM, where its causal build spills, so it is not kept.
using D64Br64 = TileConfig<64, 4, 64, 1>;
using D128Br64 = TileConfig<128, 4, 64, 1>;
using D128Br128 = TileConfig<128, 8, 64, 1>;

const Instance k_d64_br64 = make_instance<D64Br64>("attention.mma_sync.d64_br64_bc64");
const Instance k_d128_br64 = make_instance<D128Br64>("attention.mma_sync.d128_br64_bc64");
const Instance k_d128_br128 = make_instance<D128Br128>("attention.mma_sync.d128_br128_bc64");

}  // namespace

KPORT_REGISTER_KERNEL(k_d64_br64);
KPORT_REGISTER_KERNEL(k_d128_br64);
KPORT_REGISTER_KERNEL(k_d128_br128);

}  // namespace kport::kernels::attention_mma_sync
