// attention.wgmma_tma instances of head dim 64. The kernel is in attention_wgmma_tma_sm90.cuh,
// its host side in attention_wgmma_tma_host_sm90.cuh.
#include "attention_wgmma_tma_host_sm90.cuh"

namespace kport::kernels::attention_wgmma_tma {
namespace {

// Kept after tuning on the H200 (bf16, L=4096, TFLOP/s, same run): three consumer warpgroups
// (Br=192) 493 against 405 for Br=128, both with ping-pong.
using D64Br192 = TileConfig<64, 192, 128, 2, true>;
using D64Br128 = TileConfig<64, 128, 128, 2, true>;

const Instance k_d64_br192 = make_instance<D64Br192>("attention.wgmma_tma.d64_br192_bc128_s2");
const Instance k_d64_br128 = make_instance<D64Br128>("attention.wgmma_tma.d64_br128_bc128_s2");

}  // namespace

KPORT_REGISTER_KERNEL(k_d64_br192);
KPORT_REGISTER_KERNEL(k_d64_br128);

}  // namespace kport::kernels::attention_wgmma_tma
