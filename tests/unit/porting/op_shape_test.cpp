#include "kport/porting/op_shape.h"

#include <gtest/gtest.h>

namespace kport::porting {

TEST(OpShape, SpellsTheShapeInTheFamilysOwnOrderAndCanonicalizesTheKey) {
  auto g = op_shape("gemm", "k=3000,n=3000,m=3000");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->text, "m=3000,n=3000,k=3000");
  EXPECT_EQ(g->shape.canonical(), "k=3000,m=3000,n=3000");
  auto r = op_shape("rmsnorm", "cols=8192,rows=4096");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "rows=4096,cols=8192");
}

TEST(OpShape, AttentionWithoutCausalIsTheNonCausalShapeTheHarnessReports) {
  auto a = op_shape("attention", "b=4,h=16,l=4096,d=128");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->text, "b=4,h=16,l=4096,d=128,causal=0");
  EXPECT_TRUE(a->shape == op_shape("attention", "causal=0,d=128,l=4096,h=16,b=4")->shape);
  EXPECT_FALSE(a->shape == op_shape("attention", "b=4,h=16,l=4096,d=128,causal=1")->shape);
}

TEST(OpShape, ShapesTheFamilyCannotRunAreRefusedNamingTheKey) {
  struct Bad {
    const char* family;
    const char* text;
    const char* names;
  };
  for (const Bad& b :
       {Bad{"gemm", "m=1,n=2", "'k'"}, Bad{"gemm", "m=1,n=2,k=3,rows=4", "'rows'"}, Bad{"gemm", "m=0,n=2,k=3", "'m'"},
        Bad{"gemm", "m=1,n=2,k=2000000000", "'k'"}, Bad{"attention", "b=1,h=1,l=1,d=64,causal=2", "'causal'"},
        Bad{"softmax", "rows=1", "'cols'"}, Bad{"gemm", "m=1;n=2", "1;n=2"}}) {
    auto s = op_shape(b.family, b.text);
    ASSERT_FALSE(s.ok()) << b.family << " " << b.text;
    EXPECT_EQ(s.error().code, Errc::invalid_argument);
    EXPECT_NE(s.error().message.find(b.names), std::string::npos) << s.error().message;
  }
}

TEST(OpShape, AnUnknownFamilyIsRefusedListingTheKnownOnes) {
  auto s = op_shape("conv2d", "n=1");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::invalid_argument);
  EXPECT_NE(s.error().message.find("gemm, attention, rmsnorm, softmax, gemm_fp8"), std::string::npos);
  EXPECT_EQ(op_families().size(), 5u);
}

TEST(OpShape, Fp8GemmScaleDefaultsToPerTensorAndIsAnEnumeration) {
  auto d = op_shape("gemm_fp8", "m=4096,n=7168,k=16384");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->text, "m=4096,n=7168,k=16384,scale=0");  // as the harness prints it
  auto b = op_shape("gemm_fp8", "scale=2,k=16384,n=7168,m=4096");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->text, "m=4096,n=7168,k=16384,scale=2");
  EXPECT_FALSE(b->shape == d->shape);
  auto bad = op_shape("gemm_fp8", "m=1,n=1,k=128,scale=3");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("out of range (0 .. 2)"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(op_shape("gemm", "m=1,n=1,k=1,scale=0").ok());  // not a gemm dimension
}

}  // namespace kport::porting
