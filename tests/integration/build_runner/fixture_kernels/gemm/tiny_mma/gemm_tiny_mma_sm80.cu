// Fixture: one m16n8k16 fp16 mma.sync per warp. Includes a header the build generates,
// so it compiles only once ninja's prerequisites for it have run.
#include <cstdint>

#include "generated/fixture_ops.cuh"
static_assert(KPORT_FIXTURE_GENERATED == 1, "the generated header is the build's");
__global__ void gemm_tiny_mma(const std::uint32_t* a, const std::uint32_t* b, float* c) {
  std::uint32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], b0 = b[0], b1 = b[1];
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  c[threadIdx.x] = d0 + d1 + d2 + d3;
}
