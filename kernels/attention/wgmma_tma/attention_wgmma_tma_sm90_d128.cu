// attention.wgmma_tma instances of head dim 128. The kernel is in attention_wgmma_tma_sm90.cuh,
// its host side in attention_wgmma_tma_host_sm90.cuh.
#include "attention_wgmma_tma_host_sm90.cuh"

namespace kport::kernels::attention_wgmma_tma {
namespace {

// Kept after tuning on the H200 (bf16, L=4096, TFLOP/s, same run): Bc=128 with 3 stages 608
// full / 507 causal; Bc=176 with 2 stages 592 / 517 (Bc=128 2 stages 583 / 512, Bc=192 594 /
// 515). Ping-pong between consumer warpgroups won at every shape (575 against 508 without it),
// so every instance uses it.
using D128Bc128 = TileConfig<128, 128, 128, 3, true>;
using D128Bc176 = TileConfig<128, 128, 176, 2, true>;

const Instance k_d128_bc128 = make_instance<D128Bc128>("attention.wgmma_tma.d128_br128_bc128_s3");
const Instance k_d128_bc176 = make_instance<D128Bc176>("attention.wgmma_tma.d128_br128_bc176_s2");

}  // namespace

KPORT_REGISTER_KERNEL(k_d128_bc128);
KPORT_REGISTER_KERNEL(k_d128_bc176);

}  // namespace kport::kernels::attention_wgmma_tma
