// gemm.decode_mma's supports(): each instance takes m up to its rows (8, 16 or 32), n a
// multiple of 8, any K, bf16 and fp16, and refuses the rest with a reason that names who
// takes it. Host code only: nothing is launched.
#include <gtest/gtest.h>

#include <string>

#include "kport/kernels/registry.h"
#include "registered.h"

using namespace kport::kernels;
using stand_ins::registered;

namespace {

Problem gemm_problem(int m, int n, int k, DType t = DType::bf16) {
  Problem p;
  p.family = Family::gemm;
  p.gemm.m = m;
  p.gemm.n = n;
  p.gemm.k = k;
  p.gemm.dtype = t;
  return p;
}

}  // namespace

TEST(GemmDecodeMmaSupports, EachInstanceTakesUpToItsRows) {
  struct Band {
    const char* name;
    int lo, hi;
  };
  for (const Band& b : {Band{"gemm.decode_mma.n64_k4_s2", 1, 8}, Band{"gemm.decode_mma.m16_n64_k4_s1", 1, 16},
                        Band{"gemm.decode_mma.m32_n128_k2_s1", 1, 32}}) {
    const Instance& inst = registered(b.name);
    for (int m = 1; m <= 40; ++m) {
      const std::string why = inst.supports(gemm_problem(m, 4096, 14336));
      if (m >= b.lo && m <= b.hi)
        EXPECT_EQ(why, "") << b.name << " m=" << m;
      else
        EXPECT_NE(why, "") << b.name << " m=" << m;
    }
  }
  EXPECT_NE(registered("gemm.decode_mma.n64_k4_s1").supports(gemm_problem(12, 4096, 4096)).find("m16"),
            std::string::npos);
  EXPECT_NE(registered("gemm.decode_mma.m32_n64_k4_s1").supports(gemm_problem(33, 4096, 4096)).find("tiled gemm"),
            std::string::npos);
  EXPECT_EQ(find_instance("gemm.decode_mma.m64_n128_k2_s1"), nullptr);
}

TEST(GemmDecodeMmaSupports, NMustBeWholeVectorsAndTheTypesSixteenBits) {
  const Instance& inst = registered("gemm.decode_mma.m16_n64_k4_s1");
  EXPECT_EQ(inst.supports(gemm_problem(16, 4104, 65, DType::f16)), "");
  EXPECT_NE(inst.supports(gemm_problem(16, 4100, 4096)).find("multiple of 8"), std::string::npos);
  EXPECT_NE(inst.supports(gemm_problem(16, 4096, 4096, DType::f32)).find("bf16 and fp16"), std::string::npos);
  EXPECT_NE(inst.supports(gemm_problem(0, 4096, 4096)).find("positive"), std::string::npos);
}
