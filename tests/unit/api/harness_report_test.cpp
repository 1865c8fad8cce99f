// The harness report: read once, by version, strictly.
#include "kport/api/harness_report.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace json = boost::json;
using namespace kport;

namespace {

// A bench report as kport-harness prints it (version 1), one measured case.
json::object bench_report() {
  return json::parse(R"({"schema_version":1,"command":"bench","target":"sm_90a","seed":18446744073709551615,
    "device":{"name":"NVIDIA H200"},"results":[{"instance":"gemm.simt.default","family":"gemm","variant":"simt",
    "dtype":"fp32","shape":{"m":64},"shape_text":"m=64,n=64,k=64","seed":7,"verdict":"measured",
    "clock_before":{"sm_mhz":1980},"clock_after":{"sm_mhz":1970},
    "timing":{"median_ms":0.125,"stddev_ms":0.001,"samples":40,"rse":0.0004,"discarded_throttled":3,
              "sm_mhz_after_samples":{"min":1950,"median":1965,"max":1980}},
    "baseline":null,"tflops":4.5}],"summary":{"measured":1}})")
      .as_object();
}

}  // namespace

TEST(HarnessReport, ReadsAVersionOneReport) {
  auto r = api::parse_harness_report(json::serialize(bench_report()));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->schema_version, 1);
  EXPECT_EQ(r->command, "bench");
  EXPECT_EQ(r->seed, 18446744073709551615ull);
  ASSERT_EQ(r->results.size(), 1u);
  const auto& e = r->results[0];
  EXPECT_EQ(e.key(), "gemm.simt.default|fp32|m=64,n=64,k=64");
  EXPECT_EQ(e.verdict, "measured");
  EXPECT_EQ(e.seed, 7u);
  ASSERT_TRUE(e.timing);
  EXPECT_EQ(e.timing->median_ms, 0.125);
  EXPECT_EQ(e.timing->samples, 40);
  EXPECT_EQ(e.timing->discarded_throttled, 3);
  EXPECT_EQ(e.timing->sm_mhz_median, 1965.0);
  EXPECT_FALSE(e.baseline) << "null: no in-process baseline";
  EXPECT_EQ(e.clock_before_mhz, 1980.0);
  EXPECT_EQ(e.raw.at("timing").at("rse"), json::value(0.0004)) << "the entry as printed is kept for env";
}

TEST(HarnessReport, RoundTripsAnEntryThroughItsRawForm) {
  auto r = api::parse_harness_report(json::serialize(bench_report()));
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto again = api::parse_harness_entry(r->results[0].raw);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->key(), r->results[0].key());
  EXPECT_EQ(again->timing->median_ms, r->results[0].timing->median_ms);
  EXPECT_EQ(again->tflops, r->results[0].tflops);
}

TEST(HarnessReport, AMissingVersionIsAClearError) {
  json::object o = bench_report();
  o.erase("schema_version");
  auto r = api::parse_harness_report(json::serialize(o));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("has no schema_version"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("rebuild"), std::string::npos) << "says what to do: " << r.error().message;
}

TEST(HarnessReport, AnUnknownVersionIsAClearError) {
  json::object o = bench_report();
  o["schema_version"] = 2;
  auto r = api::parse_harness_report(json::serialize(o));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema_version 2 but this runner reads version 1"), std::string::npos)
      << r.error().message;
  o["schema_version"] = "1";
  r = api::parse_harness_report(json::serialize(o));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'schema_version' must be an integer"), std::string::npos) << r.error().message;
}

TEST(HarnessReport, AWrongTypeInAnEntryNamesTheField) {
  json::object o = bench_report();
  o["results"].as_array()[0].as_object()["timing"].as_object()["median_ms"] = "slow";
  auto r = api::parse_harness_report(json::serialize(o));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'results[0].timing.median_ms' must be a number"), std::string::npos)
      << r.error().message;
  o = bench_report();
  o["results"].as_array()[0].as_object().erase("verdict");
  r = api::parse_harness_report(json::serialize(o));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'results[0].verdict' is required"), std::string::npos) << r.error().message;
}

TEST(HarnessReport, ReadsTheFatalErrorOfAnAbortedRun) {
  auto r = api::parse_harness_report(R"({"schema_version":1,"command":"check","results":[],
    "error":{"code":"kernel_fault","message":"left the GPU context unusable"}})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->error_code, "kernel_fault");
  EXPECT_TRUE(r->results.empty());
}

TEST(HarnessReport, ReadsTheErrorDocumentOfEveryVersion) {
  auto r = api::parse_harness_report(
      R"({"error":{"code":"no_device","message":"cudaGetDeviceCount: no CUDA-capable device"}})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->schema_version, 0);
  EXPECT_EQ(r->error_code, "no_device");
  EXPECT_TRUE(r->results.empty());
  EXPECT_FALSE(api::parse_harness_report(R"({"error":{"code":7}})").ok()) << "error.code must be a string";
  EXPECT_FALSE(api::parse_harness_report(R"({"error":{"code":"x"},"results":[]})").ok())
      << "a report, without its version";
}

TEST(HarnessReport, TextThatIsNotAnObjectIsRefused) {
  EXPECT_FALSE(api::parse_harness_report("").ok());
  EXPECT_FALSE(api::parse_harness_report("[1]").ok());
  EXPECT_FALSE(api::parse_harness_report("{\"schema_version\":1} trailing").ok());
}
