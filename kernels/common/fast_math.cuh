// Fast fp32 math on the special-function unit, for softmax-style kernels.
#pragma once

namespace kport::kernels {

// 2^x with ex2.approx.ftz: about 2 ulp, denormal results flushed to zero. Meant for
// inputs <= 0 or -inf (max-subtracted softmax scores), where the flush is harmless and
// saves the range fix-up exp2f() adds.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace kport::kernels
