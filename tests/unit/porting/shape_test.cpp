#include "kport/porting/shape.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kport::porting {

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
  EXPECT_DOUBLE_EQ(a.distance(a), 0.0);
  EXPECT_NEAR(a.distance(b), std::log(2.0), 1e-12);
  EXPECT_TRUE(std::isinf(a.distance(*Shape::parse("rows=1,cols=2"))));
  auto d64 = *Shape::parse("b=4,h=16,l=4096,d=64,causal=0");
  auto d128 = *Shape::parse("b=4,h=16,l=4096,d=128,causal=0");
  auto causal = *Shape::parse("b=4,h=16,l=4096,d=128,causal=1");
  EXPECT_TRUE(std::isinf(d64.distance(d128)));
  EXPECT_TRUE(std::isinf(d128.distance(causal)));
}

// A row-wise fp8 figure answered a block-scaled question as a shape at distance ln 2.
TEST(Shape, AnFp8ScalingModeIsNeverAnsweredFromAnother) {
  auto row = *Shape::parse("m=4096,n=7168,k=16384,scale=1");
  auto block = *Shape::parse("m=4096,n=7168,k=16384,scale=2");
  auto block_other = *Shape::parse("m=2048,n=7168,k=16384,scale=2");
  EXPECT_TRUE(std::isinf(row.distance(block)));
  EXPECT_TRUE(std::isinf(block.distance(row)));
  EXPECT_NEAR(block.distance(block_other), std::log(2.0), 1e-12);
  EXPECT_TRUE(Shape::must_match_exactly("scale"));
}

TEST(Shape, AnExtentOnTheOtherSideOfATileBoundaryIsAWorseStandIn) {
  auto q = *Shape::parse("m=3000,n=3000,k=3000");
  auto aligned = *Shape::parse("m=3072,n=3072,k=3072");
  auto partial = *Shape::parse("m=2600,n=2600,k=2600");
  auto unaligned_rows = *Shape::parse("m=2500,n=2500,k=2500");                 // 2500 elements: not 16-byte rows
  EXPECT_NEAR(q.distance(aligned), 3 * std::log(3072.0 / 3000) + 3.0, 1e-12);  // three extents cross 128
  EXPECT_NEAR(q.distance(partial), 3 * std::log(3000.0 / 2600), 1e-12);
  EXPECT_NEAR(q.distance(unaligned_rows), 3 * std::log(3000.0 / 2500) + 3 * 2.0, 1e-12);
  EXPECT_LT(q.distance(partial), q.distance(aligned));
  EXPECT_LT(q.distance(aligned), q.distance(unaligned_rows));
  // A sequence length crosses at 64.
  auto l1000 = *Shape::parse("b=1,h=8,l=1000,d=128,causal=0");
  auto l1024 = *Shape::parse("b=1,h=8,l=1024,d=128,causal=0");
  EXPECT_NEAR(l1000.distance(l1024), std::log(1.024) + 1.0, 1e-12);
}

TEST(Shape, RowLengthCountsTwiceARowCountAndBatchOrHeadsHalf) {
  auto q = *Shape::parse("rows=1,cols=8192");
  EXPECT_NEAR(q.distance(*Shape::parse("rows=1,cols=131072")), 2 * std::log(16.0), 1e-12);
  EXPECT_NEAR(q.distance(*Shape::parse("rows=16,cols=4096")), std::log(16.0) + 2 * std::log(2.0), 1e-12);
  auto a = *Shape::parse("b=4,h=16,l=4096,d=128,causal=0");
  EXPECT_NEAR(a.distance(*Shape::parse("b=8,h=16,l=4096,d=128,causal=0")), 0.5 * std::log(2.0), 1e-12);
}

}  // namespace kport::porting
