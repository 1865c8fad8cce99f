// gemm.wgmma_tma's supports(): the TMA instances take rows of whole 16 bytes and 16-byte
// aligned matrices; 128x256x64_s4_ca8, which copies its stages in 8-byte pieces, takes rows of
// whole 8 bytes (2500 columns) and 8-byte aligned matrices, and each refuses the rest with a
// reason. Host code only: nothing is launched (the pointers are never dereferenced).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kport/kernels/registry.h"
#include "registered.h"

using namespace kport::kernels;
using stand_ins::registered;

namespace {

// Fake device addresses: only their alignment is read.
const void* at(std::uintptr_t address) { return reinterpret_cast<const void*>(address); }

Problem gemm_problem(int m, int n, int k, std::uintptr_t base = 0x10000, DType t = DType::bf16) {
  Problem p;
  p.family = Family::gemm;
  p.gemm.a = at(base);
  p.gemm.b = at(base + 0x100000);
  p.gemm.c = const_cast<void*>(at(base + 0x200000));
  p.gemm.m = m;
  p.gemm.n = n;
  p.gemm.k = k;
  p.gemm.dtype = t;
  return p;
}

const char* const k_ca8 = "gemm.wgmma_tma.128x256x64_s4_ca8";

}  // namespace

TEST(GemmWgmmaTmaSupports, RowsOfEightByteMultiplesGoToTheCopyingInstance) {
  const Instance& ca8 = registered(k_ca8);
  const Instance& tma = registered("gemm.wgmma_tma.128x256x64_s4");
  EXPECT_EQ(ca8.supports(gemm_problem(2500, 2500, 2500)), "");
  EXPECT_EQ(ca8.supports(gemm_problem(4096, 4100, 4100, 0x10000, DType::f16)), "");
  EXPECT_EQ(ca8.supports(gemm_problem(1, 2500, 4)), "");
  EXPECT_EQ(ca8.supports(gemm_problem(4096, 4096, 4096)), "");  // aligned rows too, at TMA's cost
  const std::string tma_why = tma.supports(gemm_problem(2500, 2500, 2500));
  EXPECT_NE(tma_why.find("16-byte row strides"), std::string::npos) << tma_why;
  EXPECT_EQ(tma.supports(gemm_problem(4096, 4096, 4096)), "");
}

TEST(GemmWgmmaTmaSupports, TheCopyingInstanceRefusesWhatItsPiecesCannotCarry) {
  const Instance& ca8 = registered(k_ca8);
  const std::string odd_k = ca8.supports(gemm_problem(2500, 2500, 2502));
  EXPECT_NE(odd_k.find("multiples of 4"), std::string::npos) << odd_k;
  EXPECT_NE(odd_k.find("mma_sync"), std::string::npos) << odd_k;
  EXPECT_NE(ca8.supports(gemm_problem(64, 2501, 2500)).find("multiples of 4"), std::string::npos);
  EXPECT_NE(ca8.supports(gemm_problem(2500, 2500, 2500, 0x10004)).find("8-byte aligned"), std::string::npos);
  EXPECT_EQ(ca8.supports(gemm_problem(2500, 2500, 2500, 0x10008)), "");
  EXPECT_NE(ca8.supports(gemm_problem(64, 64, 64, 0x10000, DType::f32)).find("bf16 or f16"), std::string::npos);
  EXPECT_NE(ca8.supports(gemm_problem(-1, 64, 64)), "");
  Problem rows;
  rows.family = Family::rmsnorm;
  EXPECT_NE(ca8.supports(rows), "");
}

TEST(GemmWgmmaTmaSupports, EachInstanceDeclaresTheRowsItRuns) {
  // kernels/kport.json reads these keys as the rows an instance runs at all, so a best answer
  // at 2500 columns can name the copying instance and not a TMA one.
  const Instance& ca8 = registered(k_ca8);
  EXPECT_NE(ca8.config_json.find(R"("run_n_align_bytes":8,"run_k_align_bytes":8)"), std::string::npos)
      << ca8.config_json;
  EXPECT_NE(registered("gemm.wgmma_tma.128x128x64_s6").config_json.find(R"("run_k_align_bytes":16)"),
            std::string::npos);
  bool copies = false;
  for (const std::string& f : ca8.features) copies = copies || f == "cp_async";
  EXPECT_TRUE(copies);
  EXPECT_EQ(ca8.variant, "wgmma_tma");
}
