// attention.wgmma_tma: the host side of the Hopper attention kernel
// (attention_wgmma_tma_sm90.cuh has the algorithm), shared by the instances' units. Builds the
// Q, K, V and O TMA tensor maps per launch (common/tma_host_sm90.h: the driver's encoder, no
// link against libcuda), picks the dtype/causal instantiation and launches one CTA per (query
// tile, batch*head). Each unit instantiates what its instances use, so the head dims compile
// side by side.
#pragma once

#include <cmath>
#include <string>

#include "attention_wgmma_tma_sm90.cuh"
#include "common/tma_host_sm90.h"
#include "kport/kernels/registry.h"

namespace kport::kernels::attention_wgmma_tma {
namespace {

// [B*H, L, d] viewed as 3-D so that rows past L are zero-filled instead of read from
// the next head; box = 64 columns (one 128-byte swizzle row) x `rows`.
bool make_map(CUtensorMap* map, const void* ptr, const AttentionArgs& a, int rows) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(a.head_dim), static_cast<cuuint64_t>(a.seq_len),
                              static_cast<cuuint64_t>(a.batch) * a.heads};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(a.head_dim) * 2,
                                 static_cast<cuuint64_t>(a.seq_len) * a.head_dim * 2};
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(rows), 1};
  return tma_host::make_tmap_16bit_sw128<3>(map, ptr, dims, strides, box, a.dtype);
}

template <class Cfg, class T, bool Causal>
cudaError_t launch_typed(const AttentionArgs& a, cudaStream_t stream) {
  CUtensorMap tm_q, tm_k, tm_v, tm_o;
  if (!make_map(&tm_q, a.q, a, Cfg::k_br) || !make_map(&tm_k, a.k, a, Cfg::k_bc) ||
      !make_map(&tm_v, a.v, a, Cfg::k_bc) || !make_map(&tm_o, a.o, a, 64))
    return cudaErrorInvalidValue;
  auto kernel = attention_fwd_wgmma_kernel<Cfg, T, Causal>;
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::k_smem_bytes);
  if (attr != cudaSuccess) return attr;
  const dim3 grid = attention_grid::grid((a.seq_len + Cfg::k_br - 1) / Cfg::k_br, a);
  const float scale_log2 = a.scale * 1.4426950408889634f;
  kernel<<<grid, Cfg::k_threads, Cfg::k_smem_bytes, stream>>>(tm_q, tm_k, tm_v, tm_o, a.lse, a.seq_len, scale_log2);
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
  if (tma_host::encode_tiled() == nullptr) return "driver has no cuTensorMapEncodeTiled";
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
std::string config_json() {
  return "{\"head_dim\":" + std::to_string(Cfg::k_d) + ",\"br\":" + std::to_string(Cfg::k_br) +
         ",\"bc\":" + std::to_string(Cfg::k_bc) + ",\"stages\":" + std::to_string(Cfg::k_stages) +
         ",\"pingpong\":" + (Cfg::k_pingpong ? "true" : "false") +
         ",\"consumer_warpgroups\":" + std::to_string(Cfg::k_consumers) +
         ",\"threads\":" + std::to_string(Cfg::k_threads) + ",\"smem_bytes\":" + std::to_string(Cfg::k_smem_bytes) +
         "," + attention_grid::k_limits_config + "}";
}

template <class Cfg>
Instance make_instance(const char* name) {
  return Instance{
      Family::attention,         "wgmma_tma",        name,           {"wgmma", "tma", "mbarrier", "setmaxnreg"},
      {DType::bf16, DType::f16}, config_json<Cfg>(), &supports<Cfg>, &launch<Cfg>};
}

}  // namespace
}  // namespace kport::kernels::attention_wgmma_tma
