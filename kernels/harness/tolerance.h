// Numerical tolerances of `check`, in one place.
//
// An output passes when (1) it has no NaN/Inf (the output is poisoned with NaN before the
// run, so an unwritten element fails here), (2) the normwise relative error
// ||out - ref||_2 / ||ref||_2 is at most `normwise`, and (3) the largest absolute error is
// at most `max_abs_rel * max|ref|`; attention also needs |lse - lse_ref| <= `lse_abs`
// everywhere. References are double (CPU) or fp32 (GPU, large shapes) computed from the same
// rounded inputs, so the budget covers the kernel's own rounding:
//   fp32: accumulation order over K up to ~10^4 (~1e-6 normwise) with headroom; tight
//         enough that TF32 arithmetic (~3e-4) fails.
//   fp16: output rounding 2^-11 relative plus fp16 probabilities in attention.
//   bf16: output rounding 2^-8 relative plus bf16 probabilities in attention (FA2-style
//         kernels round P to bf16 before P*V).
//   gemm_fp8 (e4m3, e5m2 inputs): against the dequantized operands multiplied exactly, the
//         bf16 output's rounding and fp32 accumulation: 6e-3 normwise, 1.6e-2 max. On the
//         CPU reference (small problems) each element's magnitude in the normwise
//         denominator and in the max bound is at least k_fp8_cancellation_floor (1/4) of
//         the root-sum-square of its products: the tensor cores' accumulation error scales
//         with the products, so a sum that cancels far below them (a one-element output,
//         say) is judged against their size. The GPU
//         reference (large problems) compares with ||ref|| alone, where cancelled elements
//         are few among many.
//   grouped_gemm_fp8: each group is a gemm_fp8 of the same K, so gemm_fp8's bounds and its
//         cancellation floor, per element of every group.
// A declared family (`def`) takes its def's tolerance for the dtype, else the above; a
// library's FamilyOverride of a family (kport's or declared) replaces it for its dtypes.
#pragma once

#include "kport/kernels/registry.h"

namespace kport::harness {

// gemm_fp8's floor above, as a fraction of an element's products' root-sum-square. The
// element that asked for it: e5m2 block-scaled m=1,n=1,k=128 summed to 0.0927 from products
// whose root-sum-square is 15.9; and for the max bound, e4m3 row-scaled m=1,n=1,k=128 on the
// H200 (2026-12-03), whose 2.9e-6 left a 2.5e-5 error over a bound of 1.6e-2 x 2.9e-6. A
// sixteenth, as it was first, failed 2 of 8,800 one-element cases (every instance, format
// and mode at m=1,n=1,k=128 under 100 seeds, H200, 2026-12-03): the tensor cores add fp8
// products in fewer bits than fp32, and sums of 0.255 came back 0.0016-0.0023 off (normwise
// 0.0062 and 0.0090). At a quarter, 17,600 such cases under 200 seeds passed, the largest
// normwise error 0.0042 against 0.006. On random signs a quarter raises a large output's
// normwise denominator by about 0.4 % (the elements below their floor are few and small).
constexpr double k_fp8_cancellation_floor = 1.0 / 4;

struct Tolerance {
  double normwise;
  double max_abs_rel;
  double lse_abs;
};

Tolerance tolerance_for(kport::kernels::Family family, kport::kernels::DType dtype,
                        const kport::kernels::FamilyDef* def = nullptr);

}  // namespace kport::harness
