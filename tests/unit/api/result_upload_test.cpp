// ResultUpload: the one mapping of a result between the GPU runner and the coordinator.
#include "kport/api/result_upload.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace json = boost::json;
using namespace kport;

namespace {

api::ResultUpload full() {
  api::ResultUpload r;
  r.commit = "0123456789abcdef0123456789abcdef01234567";
  r.target = "sm_90a";
  r.family = "gemm";
  r.variant = "wgmma_tma";
  r.instance = "gemm.wgmma_tma.128x256x64_s4";
  r.dtype = "bf16";
  r.shape = "m=4096,n=4096,k=4096";
  r.toolkit = "13.0";
  r.gpu_model = "NVIDIA H200";
  r.gpu_uuid = "GPU-1";
  r.arch = "9.0";
  r.driver = "580.65";
  r.sm_clock_mhz = 1980;
  r.env = json::object{{"harness_sha256", "ab"}};
  r.status = api::CaseStatus::passed;
  r.max_abs_err = 0.004;
  r.max_rel_err = 0.001;
  r.normwise_rel_err = 0.0012;
  r.tolerance = 0.01;
  r.nan_inf_count = 0;
  r.seed = 18446744073709551615ull;  // every bit of a 64-bit seed
  r.median_us = 412.5;
  r.stddev_us = 1.5;
  r.samples = 200;
  r.samples_dropped = 3;
  r.tflops = 333.0;
  r.baseline = "cublasGemmEx";
  r.baseline_median_us = 420.0;
  r.ratio = 1.018;
  r.unstable = true;
  return r;
}

}  // namespace

TEST(ResultUpload, RoundTripsEveryField) {
  const api::ResultUpload in = full();
  auto out = api::parse_result_upload(api::to_json(in));
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(api::to_json(*out), api::to_json(in));
  EXPECT_EQ(out->seed, in.seed);
  EXPECT_EQ(out->status, api::CaseStatus::passed);
  EXPECT_EQ(out->median_us, 412.5);
  EXPECT_TRUE(out->unstable);
  EXPECT_EQ(out->samples_dropped, 3);
}

TEST(ResultUpload, LeavesAbsentFiguresOut) {
  api::ResultUpload r;
  r.family = "gemm";
  r.variant = "simt";
  r.instance = "gemm.simt.default";
  r.dtype = "fp32";
  r.shape = "m=64,n=64,k=64";
  r.status = api::CaseStatus::crashed;
  const json::object o = api::to_json(r);
  for (const char* k : {"commit", "target", "seed", "max_abs_err", "median_us", "samples", "samples_dropped",
                        "baseline", "unstable", "sm_clock_mhz"})
    EXPECT_FALSE(o.contains(k)) << k;
  EXPECT_EQ(o.at("status"), "crashed");
}

TEST(ResultUpload, RejectsAWrongTypeNamingTheField) {
  json::object o = api::to_json(full());
  o["median_us"] = "fast";
  auto r = api::parse_result_upload(o, "results[3]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::invalid_argument);
  EXPECT_NE(r.error().message.find("'results[3].median_us' must be a number"), std::string::npos) << r.error().message;
}

TEST(ResultUpload, RejectsAMissingFieldNamingIt) {
  json::object o = api::to_json(full());
  o.erase("instance");
  auto r = api::parse_result_upload(o, "results[0]");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'results[0].instance' is required"), std::string::npos) << r.error().message;
}

TEST(ResultUpload, RejectsAnUnknownStatusAndANegativeFigure) {
  json::object o = api::to_json(full());
  o["status"] = "fine";
  auto r = api::parse_result_upload(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'status' must be one of passed"), std::string::npos) << r.error().message;
  o = api::to_json(full());
  o["max_abs_err"] = -1;
  r = api::parse_result_upload(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'max_abs_err' must be a number >= 0"), std::string::npos) << r.error().message;
}

TEST(ResultUpload, FillsFromTheHarnessRenamedAndRescaledOnce) {
  auto check =
      api::parse_harness_entry(json::parse(R"({"instance":"i","dtype":"bf16","shape_text":"m=1","verdict":"passed",
      "max_abs_error":0.5,"max_abs_ref":4.0,"normwise_rel_error":0.001,"nonfinite":2,"tolerance":{"normwise":0.01}})")
                                   .as_object());
  ASSERT_TRUE(check.ok()) << check.error().message;
  auto bench =
      api::parse_harness_entry(json::parse(R"({"instance":"i","dtype":"bf16","shape_text":"m=1","verdict":"measured",
      "timing":{"median_ms":0.25,"stddev_ms":0.001,"samples":40,"discarded_throttled":2,"sm_mhz_after_samples":{"median":1965}},
      "clock_before":{"sm_mhz":1980},"baseline":{"name":"cublasGemmEx","timing":{"median_ms":0.5}},"ratio":2.0,"tflops":100,
      "unstable":true,"unstable_reason":"rounds disagree"})")
                                   .as_object());
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  api::ResultUpload r;
  api::fill_from_check(r, *check);
  api::fill_from_bench(r, *bench);
  EXPECT_EQ(r.max_abs_err, 0.5);
  EXPECT_EQ(r.max_rel_err, 0.125);
  EXPECT_EQ(r.normwise_rel_err, 0.001);
  EXPECT_EQ(r.nan_inf_count, 2);
  EXPECT_EQ(r.tolerance, 0.01);
  EXPECT_EQ(r.median_us, 250.0);
  EXPECT_EQ(r.stddev_us, 1.0);
  EXPECT_EQ(r.samples, 40);
  EXPECT_EQ(r.samples_dropped, 2) << "timing.discarded_throttled";
  EXPECT_EQ(r.sm_clock_mhz, 1965.0) << "the clock after the kept samples, not the reads around the measurement";
  EXPECT_EQ(r.baseline, "cublasGemmEx");
  EXPECT_EQ(r.baseline_median_us, 500.0);
  EXPECT_TRUE(r.unstable);
  EXPECT_EQ(r.message, "timing unstable: rounds disagree");
}

// The metric table's reader walks a row's path into the harness's entry, rescales, rounds
// an integer metric, and leaves out what is absent, not a number, or below the minimum.
TEST(ResultMetrics, ARowReadsItsFigureFromTheHarnessEntryInItsUnit) {
  const api::ResultMetric mhz{"sm_mhz_floor",
                              api::MetricGroup::timing,
                              true,
                              0,
                              api::MetricSource::bench,
                              {"timing", "sm_mhz_after_samples", "min"},
                              1.0,
                              "lowest clock"};
  const api::ResultMetric warm{
      "warm_us", api::MetricGroup::timing, false, 0, api::MetricSource::bench, {"warmup_ms", "", ""}, 1000.0,
      "warm-up"};
  auto entry = json::parse(R"({"timing":{"sm_mhz_after_samples":{"min":1754.6}},"warmup_ms":0.25})").as_object();
  EXPECT_EQ(api::harness_metric(entry, mhz), json::value(1755));
  EXPECT_EQ(api::harness_metric(entry, warm), json::value(250.0));
  EXPECT_FALSE(api::harness_metric(json::parse(R"({"timing":{}})").as_object(), mhz));
  EXPECT_FALSE(api::harness_metric(json::parse(R"({"timing":{"sm_mhz_after_samples":"fast"}})").as_object(), mhz));
  EXPECT_FALSE(api::harness_metric(json::parse(R"({"warmup_ms":-1})").as_object(), warm)) << "below the row's minimum";
}

// sm_clock_mhz_min: the bench entry's lowest clock read after a kept sample, from the
// harness's report to the upload's wire and back.
TEST(ResultMetrics, TheLowestClockAfterAKeptSampleTravelsFromTheHarnessToTheCoordinator) {
  auto bench =
      api::parse_harness_entry(json::parse(R"({"instance":"i","dtype":"bf16","shape_text":"m=1","verdict":"measured",
      "timing":{"median_ms":0.25,"samples":40,"sm_mhz_after_samples":{"min":1755,"median":1965,"max":1980}}})")
                                   .as_object());
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  api::ResultUpload r;
  api::fill_from_bench(r, *bench);
  EXPECT_EQ(r.metrics.at("sm_clock_mhz_min"), json::value(1755));
  const json::object wire = api::to_json(r);
  EXPECT_EQ(wire.at("sm_clock_mhz_min"), json::value(1755)) << "a top-level upload field";
  auto back = api::parse_result_upload(wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->metrics.at("sm_clock_mhz_min"), json::value(1755));

  api::ResultUpload untimed;
  api::fill_from_bench(
      untimed,
      *api::parse_harness_entry(
          json::parse(R"({"instance":"i","dtype":"bf16","shape_text":"m=1","verdict":"unsupported"})").as_object()));
  EXPECT_FALSE(api::to_json(untimed).contains("sm_clock_mhz_min"));
  json::object negative = wire;
  negative["sm_clock_mhz_min"] = -5;
  auto refused = api::parse_result_upload(negative, "results[0]");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("'results[0].sm_clock_mhz_min'"), std::string::npos)
      << refused.error().message;
}
