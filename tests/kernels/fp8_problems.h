// Stand-in fp8 problems for the supports() tests of the gemm_fp8 and grouped_gemm_fp8 variants
// (and registered.h's instance a test asks about). supports() only looks at the addresses: A, B, D and the
// fp32 scales are 256-byte aligned stand-ins (A's at `a`, for a test that misaligns it), and
// the UE8M0 bytes are handed over with block128_ue8m0 only, as the harness does.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "kport/kernels/registry.h"
#include "registered.h"

namespace kport::kernels::stand_ins {

// The arguments of an m x n x k problem (a GemmFp8Args or GroupedGemmFp8Args): A, B, D and
// the scales as stand-ins, A's at `a`.
template <class Args>
Args stand_in_args(int m, int n, int k, Fp8Scale scale, DType dtype, std::uintptr_t a) {
  auto at = [](std::uintptr_t address) { return reinterpret_cast<void*>(address); };
  Args args{};
  args.a = at(a);
  args.b = at(0x20000);
  args.d = at(0x30000);
  args.scale_a = static_cast<const float*>(at(0x40000));
  args.scale_b = static_cast<const float*>(at(0x50000));
  args.m = m;
  args.n = n;
  args.k = k;
  args.scale = scale;
  args.dtype = dtype;
  if (scale == Fp8Scale::block128_ue8m0) {
    args.ue8m0_a = static_cast<const std::uint8_t*>(at(0x60000));
    args.ue8m0_b = static_cast<const std::uint8_t*>(at(0x70000));
  }
  return args;
}

inline Problem gemm_fp8_problem(int m, int n, int k, Fp8Scale scale, DType dtype = DType::e4m3,
                                std::uintptr_t a = 0x10000) {
  Problem p;
  p.family = Family::gemm_fp8;
  p.gemm_fp8 = stand_in_args<GemmFp8Args>(m, n, k, scale, dtype, a);
  return p;
}

// The contiguous layout (masked_m unset) of g groups of m rows.
inline Problem grouped_gemm_fp8_problem(int g, int m, int n, int k, Fp8Scale scale, DType dtype = DType::e4m3,
                                        std::uintptr_t a = 0x10000) {
  Problem p;
  p.family = Family::grouped_gemm_fp8;
  p.grouped_gemm_fp8 = stand_in_args<GroupedGemmFp8Args>(m, n, k, scale, dtype, a);
  p.grouped_gemm_fp8.groups = g;
  return p;
}

}  // namespace kport::kernels::stand_ins
