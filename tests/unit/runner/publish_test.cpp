// harness_variants: what a build runner tells the coordinator about the variants its
// harness knows, including those it left out on the target it built.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "publish.h"

namespace json = boost::json;
using kport::runner::harness_variants;

namespace {

TEST(PublishVariants, EveryListedVariantWithItsFeaturesAlsoTheOnesNotBuilt) {
  // The shape `kport-harness-sm_90a list` prints: features comma separated per variant.
  auto doc = json::parse(R"({"target":"sm_90a","variants":[
    {"variant":"gemm.wgmma_tma","features":"wgmma,tma,mbarrier,setmaxnreg","status":"built","instances":[]},
    {"variant":"gemm.tcgen05","features":"tcgen05,tmem,tma,mbarrier","status":"not_applicable",
     "reason":"missing features: tcgen05, tmem"},
    {"variant":"softmax.simt","features":["simt"],"status":"built"},
    {"variant":"nodot","features":"simt"},
    {"variant":"gemm.nofeatures"},
    {"features":"simt"}]})")
                 .as_object();
  json::array v = harness_variants(doc);
  ASSERT_EQ(v.size(), 3u) << json::serialize(v);
  EXPECT_EQ(v[0], json::parse(
                      R"({"family":"gemm","variant":"wgmma_tma","features":["wgmma","tma","mbarrier","setmaxnreg"]})"));
  EXPECT_EQ(v[1],
            json::parse(R"({"family":"gemm","variant":"tcgen05","features":["tcgen05","tmem","tma","mbarrier"]})"));
  EXPECT_EQ(v[2], json::parse(R"({"family":"softmax","variant":"simt","features":["simt"]})"));
  EXPECT_TRUE(harness_variants(json::object{}).empty());
  EXPECT_TRUE(harness_variants(json::parse(R"({"variants":"no"})").as_object()).empty());
}

}  // namespace
