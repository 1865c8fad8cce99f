#include "kport/porting/shape.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kport/porting/op_shape.h"
#include "kport/porting/wave_model.h"
#include "kport_families.h"

namespace kport::porting {
namespace {

using test::kport_rules;

const ShapeRules& gemm() { return kport_rules("gemm"); }
const ShapeRules& attention() { return kport_rules("attention"); }

}  // namespace

TEST(Shape, ParsesAndCanonicalizesKeyOrder) {
  auto s = Shape::parse("n=8,m=4,k=16");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->canonical(), "k=16,m=4,n=8");
  EXPECT_EQ(s->get("m"), 4);
  EXPECT_EQ(s->get("x"), -1);
  EXPECT_TRUE(*s == *Shape::parse("k=16,m=4,n=8"));
}

TEST(Shape, RejectsMalformedInputWithTheOffendingPart) {
  for (const char* bad : {"", "m", "m=", "m=-1", "m=1x", "M=4", "m=1,m=2", "m=1,,n=2", "m=99999999999999999999"}) {
    auto s = Shape::parse(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.error().code, Errc::invalid_argument) << bad;
    EXPECT_FALSE(s.error().message.empty());
  }
  EXPECT_NE(Shape::parse("m=4,q=x").error().message.find("'x'"), std::string::npos);
}

TEST(Shape, DistanceIsLogRatioAndExactKeysMustMatch) {
  auto a = *Shape::parse("m=4096,n=4096,k=4096");
  auto b = *Shape::parse("m=8192,n=4096,k=4096");
  EXPECT_DOUBLE_EQ(a.distance(a, gemm()), 0.0);
  EXPECT_NEAR(a.distance(b, gemm()), std::log(2.0), 1e-12);
  EXPECT_TRUE(std::isinf(a.distance(*Shape::parse("rows=1,cols=2"), gemm())));
  auto d64 = *Shape::parse("b=4,h=16,l=4096,d=64,causal=0");
  auto d128 = *Shape::parse("b=4,h=16,l=4096,d=128,causal=0");
  auto causal = *Shape::parse("b=4,h=16,l=4096,d=128,causal=1");
  EXPECT_TRUE(std::isinf(d64.distance(d128, attention())));
  EXPECT_TRUE(std::isinf(d128.distance(causal, attention())));
}

// A row-wise fp8 figure answered a block-scaled question as a shape at distance ln 2.
TEST(Shape, AnFp8ScalingModeIsNeverAnsweredFromAnother) {
  auto row = *Shape::parse("m=4096,n=7168,k=16384,scale=1");
  auto block = *Shape::parse("m=4096,n=7168,k=16384,scale=2");
  auto block_other = *Shape::parse("m=2048,n=7168,k=16384,scale=2");
  EXPECT_TRUE(std::isinf(row.distance(block, kport_rules("gemm_fp8"))));
  EXPECT_TRUE(std::isinf(block.distance(row, kport_rules("gemm_fp8"))));
  EXPECT_NEAR(block.distance(block_other, kport_rules("gemm_fp8")), std::log(2.0), 1e-12);
  EXPECT_TRUE(kport_rules("gemm_fp8").exact("scale"));
}

TEST(Shape, AnExtentOnTheOtherSideOfATileBoundaryIsAWorseStandIn) {
  auto q = *Shape::parse("m=3000,n=3000,k=3000");
  auto aligned = *Shape::parse("m=3072,n=3072,k=3072");
  auto partial = *Shape::parse("m=2600,n=2600,k=2600");
  auto unaligned_rows = *Shape::parse("m=2500,n=2500,k=2500");  // 2500 elements: not 16-byte rows
  EXPECT_NEAR(q.distance(aligned, gemm()), 3 * std::log(3072.0 / 3000) + 3.0, 1e-12);  // three extents cross 128
  EXPECT_NEAR(q.distance(partial, gemm()), 3 * std::log(3000.0 / 2600), 1e-12);
  EXPECT_NEAR(q.distance(unaligned_rows, gemm()), 3 * std::log(3000.0 / 2500) + 3 * 2.0, 1e-12);
  EXPECT_LT(q.distance(partial, gemm()), q.distance(aligned, gemm()));
  EXPECT_LT(q.distance(aligned, gemm()), q.distance(unaligned_rows, gemm()));
  // A sequence length crosses at 64.
  auto l1000 = *Shape::parse("b=1,h=8,l=1000,d=128,causal=0");
  auto l1024 = *Shape::parse("b=1,h=8,l=1024,d=128,causal=0");
  EXPECT_NEAR(l1000.distance(l1024, attention()), std::log(1.024) + 1.0, 1e-12);
}

TEST(Shape, RowLengthCountsTwiceARowCountAndBatchOrHeadsHalf) {
  auto q = *Shape::parse("rows=1,cols=8192");
  EXPECT_NEAR(q.distance(*Shape::parse("rows=1,cols=131072"), kport_rules("rmsnorm")), 2 * std::log(16.0), 1e-12);
  EXPECT_NEAR(q.distance(*Shape::parse("rows=16,cols=4096"), kport_rules("softmax")),
              std::log(16.0) + 2 * std::log(2.0), 1e-12);
  auto a = *Shape::parse("b=4,h=16,l=4096,d=128,causal=0");
  EXPECT_NEAR(a.distance(*Shape::parse("b=8,h=16,l=4096,d=128,causal=0"), attention()), 0.5 * std::log(2.0), 1e-12);
}

// What kport declares for its own families, it does not assume of a family that shares
// their dimension names: the rules are the declaration's, not the names'.
TEST(Shape, RulesComeFromTheFamilysDeclarationNotTheDimensionNames) {
  auto d64 = *Shape::parse("b=4,h=16,l=4096,d=64,causal=0");
  auto d128 = *Shape::parse("b=4,h=16,l=4096,d=128,causal=0");
  EXPECT_NEAR(d64.distance(d128, ShapeRules{}), std::log(2.0), 1e-12) << "undeclared: plain";
  auto q = *Shape::parse("m=3000,n=3000,k=3000");
  EXPECT_NEAR(q.distance(*Shape::parse("m=3072,n=3072,k=3072"), ShapeRules{}), 3 * std::log(3072.0 / 3000), 1e-12);
}

// A foreign family's exact dimension, with a name kport never uses: a rotary embedding
// whose `rotary_dim` picks the kernel's code, and whose `tokens` count twice and cross
// at 16.
TEST(Shape, AForeignFamilysDeclaredExactDimensionNeverStandsIn) {
  OpFamily rope;
  rope.name = "rope";
  rope.dims = {{"tokens", std::nullopt, 1, k_max_dim, {2.0, {{16, 0.5}}, false}},
               {"heads", std::nullopt, 1, k_max_dim, {}},
               {"rotary_dim", std::nullopt, 1, k_max_dim, {1.0, {}, true}}};
  rope.dtypes = {"bf16"};
  ASSERT_TRUE(check_family(rope).ok()) << check_family(rope).error().message;
  const ShapeRules rules = rope.shape_rules();
  EXPECT_TRUE(rules.exact("rotary_dim"));
  EXPECT_FALSE(rules.exact("heads"));
  auto q = *Shape::parse("tokens=4096,heads=32,rotary_dim=64");
  EXPECT_TRUE(std::isinf(q.distance(*Shape::parse("tokens=4096,heads=32,rotary_dim=128"), rules)));
  EXPECT_NEAR(q.distance(*Shape::parse("tokens=8192,heads=32,rotary_dim=64"), rules), 2 * std::log(2.0), 1e-12);
  EXPECT_NEAR(q.distance(*Shape::parse("tokens=4100,heads=32,rotary_dim=64"), rules), 2 * std::log(4100.0 / 4096) + 0.5,
              1e-12);
  EXPECT_NEAR(q.distance(*Shape::parse("tokens=4096,heads=64,rotary_dim=64"), rules), std::log(2.0), 1e-12);
  // Its problem size counts the extents, not the mode.
  EXPECT_DOUBLE_EQ(problem_size(q, rules), 4096.0 * 32);
}

// A declaration that does not hold is refused naming the dimension's field.
TEST(Shape, ADimensionRuleThatDoesNotHoldIsRefusedNamingItsField) {
  OpFamily f;
  f.name = "rope";
  f.dtypes = {"bf16"};
  auto refusal = [&](Shape::DimRule rule) {
    f.dims = {{"tokens", std::nullopt, 1, k_max_dim, {}}, {"rotary_dim", std::nullopt, 1, k_max_dim, std::move(rule)}};
    auto st = check_family(f);
    return st.ok() ? std::string() : st.error().message;
  };
  EXPECT_EQ(refusal({2.0, {}, true}),
            "field 'dims[1].exact' of family rope: an exact dimension is never near another value: give it no weight "
            "or align");
  EXPECT_EQ(refusal({0.0, {}, false}),
            "field 'dims[1].weight' of family rope: must be a number above 0 and at most 100");
  EXPECT_EQ(refusal({1.0, {{1, 1.0}}, false}),
            "field 'dims[1].align[0].multiple' of family rope: must be an integer in 2 .. 2^30");
  EXPECT_EQ(refusal({1.0, {{8, 1.0}, {8, 2.0}}, false}),
            "field 'dims[1].align[1].multiple' of family rope: 8 is given twice");
  EXPECT_EQ(refusal({1.0, {{8, -1.0}}, false}),
            "field 'dims[1].align[0].penalty' of family rope: must be a number in 0 .. 100");
  EXPECT_EQ(refusal({1.0, {{2, 1.0}, {4, 1.0}, {8, 1.0}}, false}),
            "field 'dims[1].align' of family rope: must list at most 2 alignments");
}

}  // namespace kport::porting
