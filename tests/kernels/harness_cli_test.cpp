// kport-harness host code: command-line and shape parsing, problem sizes, target
// compatibility, JSON errors.
#include <gtest/gtest.h>

#include <regex>

#include "cli.h"
#include "json_out.h"
#include "shapes.h"
#include "target_compat.h"
#include "version.h"

using namespace kport::harness;

namespace {
std::optional<HarnessError> parse(std::vector<std::string> args, Options& o) { return parse_args(args, o); }
}  // namespace

TEST(HarnessShape, ParsesEachFamily) {
  Shape s;
  ASSERT_FALSE(parse_shape(Family::gemm, "m=4096,n=2048,k=512", s));
  EXPECT_EQ(s.m, 4096);
  EXPECT_EQ(s.n, 2048);
  EXPECT_EQ(s.k, 512);
  ASSERT_FALSE(parse_shape(Family::attention, "b=4,h=16,l=4096,d=128,causal=1", s));
  EXPECT_TRUE(s.causal);
  EXPECT_EQ(s.head_dim, 128);
  ASSERT_FALSE(parse_shape(Family::attention, "l=7,d=64,b=1,h=2", s));  // order free, causal 0
  EXPECT_FALSE(s.causal);
  ASSERT_FALSE(parse_shape(Family::softmax, "rows=1000,cols=1", s));
  EXPECT_EQ(s.cols, 1);
  EXPECT_EQ(shape_string(s), "rows=1000,cols=1");
}

TEST(HarnessShape, RejectsBadShapesWithTheReason) {
  Shape s;
  const auto expect_bad = [&](Family f, const std::string& text, const std::string& why) {
    const auto err = parse_shape(f, text, s);
    ASSERT_TRUE(err) << text;
    EXPECT_EQ(err->code, "bad_shape");
    EXPECT_EQ(err->exit_code, k_exit_usage);
    EXPECT_NE(err->message.find(why), std::string::npos) << err->message;
  };
  expect_bad(Family::gemm, "m=1,n=2", "missing key 'k'");
  expect_bad(Family::gemm, "m=1,n=2,k=3,x=4", "unknown key 'x'");
  expect_bad(Family::gemm, "m=0,n=2,k=3", "between 1");
  expect_bad(Family::gemm, "m=-5,n=2,k=3", "between 1");
  expect_bad(Family::gemm, "m=1.5,n=2,k=3", "not an integer");
  expect_bad(Family::gemm, "m=1,m=1,n=2,k=3", "twice");
  expect_bad(Family::gemm, "m=1,n,k=3", "key=value");
  expect_bad(Family::attention, "b=1,h=1,l=1,d=64,causal=2", "causal");
  expect_bad(Family::rmsnorm, "", "missing key");
}

TEST(HarnessShape, WorkAndBytes) {
  Shape g;
  ASSERT_FALSE(parse_shape(Family::gemm, "m=2,n=3,k=4", g));
  EXPECT_DOUBLE_EQ(flop_count(g), 48.0);
  EXPECT_DOUBLE_EQ(byte_count(g, DType::bf16), 2.0 * (8 + 12 + 6));
  Shape a;
  ASSERT_FALSE(parse_shape(Family::attention, "b=4,h=16,l=4096,d=128,causal=0", a));
  const double full = 4.0 * 4 * 16 * 4096.0 * 4096 * 128;
  EXPECT_DOUBLE_EQ(flop_count(a), full);
  a.causal = true;
  EXPECT_DOUBLE_EQ(flop_count(a), full / 2);
  Shape r;
  ASSERT_FALSE(parse_shape(Family::softmax, "rows=32768,cols=4096", r));
  EXPECT_DOUBLE_EQ(byte_count(r, DType::bf16), 2.0 * 2 * 32768 * 4096);
}

TEST(HarnessShape, GridsHoldEveryBaselineShape) {
  const auto contains = [](Family f, const std::string& text) {
    for (const Shape& s : check_grid(f))
      if (shape_string(s) == text) return true;
    return false;
  };
  for (const char* g : {"m=2048,n=2048,k=2048", "m=4096,n=4096,k=4096", "m=8192,n=8192,k=8192", "m=4096,n=4096,k=512",
                        "m=128,n=8192,k=8192", "m=1000,n=1000,k=1000", "m=127,n=255,k=63"})
    EXPECT_TRUE(contains(Family::gemm, g)) << g;
  for (const char* a :
       {"b=4,h=16,l=4096,d=128,causal=0", "b=4,h=16,l=4096,d=128,causal=1", "b=4,h=32,l=4096,d=64,causal=0"})
    EXPECT_TRUE(contains(Family::attention, a)) << a;
  for (Family f : {Family::rmsnorm, Family::softmax})
    for (const char* r : {"rows=32768,cols=4096", "rows=4096,cols=1000", "rows=1024,cols=4097", "rows=1000,cols=1",
                          "rows=1,cols=32768", "rows=1,cols=131072"})  // single rows: decode
      EXPECT_TRUE(contains(f, r)) << r;
  // Bench grids are subsets of the check grids: everything timed is also checked.
  for (Family f : {Family::gemm, Family::attention, Family::rmsnorm, Family::softmax})
    for (const Shape& s : bench_grid(f)) EXPECT_TRUE(contains(f, shape_string(s)));
}

TEST(HarnessCli, ParsesCheckAndBench) {
  Options o;
  ASSERT_FALSE(parse(
      {"check", "--instance", "gemm.simt.64x64x16_t4x4", "--dtype", "bf16", "--shape", "m=1,n=2,k=3", "--seed", "42"},
      o));
  EXPECT_EQ(o.command, "check");
  EXPECT_TRUE(o.seed_given);
  EXPECT_EQ(o.seed, 42u);
  ASSERT_FALSE(
      parse({"bench", "--all", "--filter", "vec16", "--time-cap-ms", "200", "--max-rse", "0.01", "--no-baseline"}, o));
  EXPECT_TRUE(o.all);
  EXPECT_FALSE(o.baseline);
  EXPECT_DOUBLE_EQ(o.time_cap_ms, 200);
  ASSERT_FALSE(parse({"check", "--all", "--instance", "x"}, o));  // one instance's grid
}

TEST(HarnessCli, CheckPicksItsReferenceBySizeUnlessToldToUseTheGpuOne) {
  Options o;
  ASSERT_FALSE(parse({"check", "--all"}, o));
  EXPECT_EQ(o.reference, "auto");
  ASSERT_FALSE(parse({"check", "--all", "--reference", "gpu"}, o));
  EXPECT_EQ(o.reference, "gpu");
  auto err = parse({"check", "--all", "--reference", "cpu"}, o);
  ASSERT_TRUE(err);
  EXPECT_NE(err->message.find("auto, gpu"), std::string::npos) << err->message;
}

TEST(HarnessCli, SamplingPolicyDefaultsAndOptions) {
  Options o;
  ASSERT_FALSE(parse({"bench", "--all"}, o));
  EXPECT_DOUBLE_EQ(o.max_duty, 0.5);  // timed below the power cap unless asked otherwise
  EXPECT_DOUBLE_EQ(o.throttle_threshold, 0.97);
  EXPECT_TRUE(o.blocker);
  EXPECT_EQ(o.l2_flush, "write");
  EXPECT_FALSE(o.trace);
  ASSERT_FALSE(parse({"bench", "--all", "--max-duty", "1", "--throttle-threshold", "0", "--no-blocker", "--l2-flush",
                      "read", "--trace", "--sample-gap-ms", "4", "--throttle-recovery-ms", "20"},
                     o));
  EXPECT_DOUBLE_EQ(o.max_duty, 1.0);
  EXPECT_DOUBLE_EQ(o.throttle_threshold, 0.0);
  EXPECT_FALSE(o.blocker);
  EXPECT_EQ(o.l2_flush, "read");
  EXPECT_TRUE(o.trace);
  EXPECT_DOUBLE_EQ(o.sample_gap_ms, 4.0);
  EXPECT_DOUBLE_EQ(o.throttle_recovery_ms, 20.0);
  EXPECT_TRUE(parse({"bench", "--all", "--max-duty", "0"}, o));  // would never sample
  EXPECT_TRUE(parse({"bench", "--all", "--throttle-threshold", "1.5"}, o));
  EXPECT_TRUE(parse({"bench", "--all", "--l2-flush", "sometimes"}, o));
  ASSERT_FALSE(parse({"bench", "--all"}, o));
  EXPECT_EQ(o.warmup_calls, 3);
  EXPECT_LT(o.later_warmup_ms, 0);  // later cases warm like the first unless asked
  ASSERT_FALSE(parse({"bench", "--all", "--warmup-calls", "1", "--later-warmup-ms", "20"}, o));
  EXPECT_EQ(o.warmup_calls, 1);
  EXPECT_DOUBLE_EQ(o.later_warmup_ms, 20.0);
  EXPECT_TRUE(parse({"bench", "--all", "--warmup-calls", "0"}, o));
}

// One placement of a small problem's buffers is not what every process gets: 4-6 us kernels
// moved up to 11 % between processes on one set of inputs, so rotation is the default.
TEST(HarnessCli, InputSetsRotateByDefaultAndTakeAWholeCount) {
  Options o;
  ASSERT_FALSE(parse({"bench", "--all"}, o));
  EXPECT_EQ(o.input_sets, 0);  // auto
  ASSERT_FALSE(parse({"bench", "--all", "--input-sets", "1"}, o));
  EXPECT_EQ(o.input_sets, 1);
  ASSERT_FALSE(parse({"bench", "--all", "--input-sets", "auto"}, o));
  EXPECT_EQ(o.input_sets, 0);
  for (const char* bad : {"0", "2.5", "257", "many", "-3"}) {
    const auto err = parse({"bench", "--all", "--input-sets", bad}, o);
    ASSERT_TRUE(err) << bad;
    EXPECT_NE(err->message.find("--input-sets"), std::string::npos) << err->message;
  }
}

TEST(HarnessCli, CaseListsReplaceTheSelection) {
  Options o;
  ASSERT_FALSE(parse({"bench", "--case", "gemm.x:bf16:m=1,n=2,k=3", "--case", "softmax.y:fp32:rows=2,cols=9"}, o));
  EXPECT_TRUE(o.all);  // several cases: each derives its own seed, as a grid run does
  ASSERT_EQ(o.cases.size(), 2u);
  EXPECT_EQ(o.cases[1], "softmax.y:fp32:rows=2,cols=9");
  EXPECT_TRUE(parse({"check", "--case", "gemm.x:bf16"}, o));                                 // no shape
  EXPECT_TRUE(parse({"check", "--case", ":bf16:m=1,n=1,k=1"}, o));                           // no instance
  EXPECT_TRUE(parse({"check", "--case", "gemm.x:bf16:m=1,n=1,k=1", "--dtype", "fp16"}, o));  // both
  EXPECT_TRUE(parse({"check", "--case", "gemm.x:bf16:m=1,n=1,k=1", "--instance", "gemm.x"}, o));
}

TEST(HarnessCli, RejectsBadArguments) {
  Options o;
  const auto code = [&](std::vector<std::string> args) {
    const auto err = parse(std::move(args), o);
    return err ? err->code : std::string("ok");
  };
  EXPECT_EQ(code({}), "usage");
  EXPECT_EQ(code({"frobnicate"}), "usage");
  EXPECT_EQ(code({"check"}), "usage");
  EXPECT_EQ(code({"check", "--instance", "x", "--shape", "m=1,n=1,k=1"}), "usage");  // no dtype
  EXPECT_EQ(code({"check", "--instance", "x", "--dtype", "int8", "--shape", "m=1,n=1,k=1"}), "unknown_dtype");
  EXPECT_EQ(code({"bench", "--all", "--time-cap-ms", "soon"}), "usage");
  EXPECT_EQ(code({"bench", "--all", "--seed", "-1"}), "usage");
  EXPECT_EQ(code({"check", "--all", "--bogus"}), "usage");
  EXPECT_EQ(code({"list"}), "ok");
}

// Results show seeds as unsigned 64-bit decimals and repro commands pass them back as
// --seed: every such value must read back as itself, one past the range must not.
TEST(HarnessCli, SeedTakesTheFull64BitRangeAsResultsShowIt) {
  for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{0x8000000000000000}, std::uint64_t{0xFEDCBA9876543210},
                             std::uint64_t{0xffffffffffffffff}}) {
    Options o;
    ASSERT_FALSE(parse({"bench", "--all", "--seed", std::to_string(seed)}, o)) << seed;
    EXPECT_EQ(o.seed, seed);
  }
  Options o;
  EXPECT_TRUE(parse({"bench", "--all", "--seed", "18446744073709551616"}, o));
}

TEST(HarnessJson, ErrorDocumentShape) {
  const Json doc = error_json({"bad_shape", "shape 'x' ...", k_exit_usage});
  EXPECT_EQ(doc["error"]["code"], "bad_shape");
  EXPECT_EQ(doc["error"]["message"], "shape 'x' ...");
  EXPECT_EQ(doc.size(), 1u);
}

TEST(TargetCompat, SuffixRules) {
  EXPECT_TRUE(target_runs_on("sm_90a", 9, 0));
  EXPECT_FALSE(target_runs_on("sm_90a", 10, 0));
  EXPECT_TRUE(target_runs_on("sm_80", 8, 6));
  EXPECT_FALSE(target_runs_on("sm_80", 9, 0));
  EXPECT_TRUE(target_runs_on("sm_100f", 10, 3));
  EXPECT_FALSE(target_runs_on("sm_100a", 10, 3));
  EXPECT_FALSE(target_runs_on("sm_120", 10, 0));
  EXPECT_TRUE(target_runs_on("sm_120", 12, 1));
  EXPECT_FALSE(target_runs_on("compute_90", 9, 0));
  EXPECT_FALSE(target_runs_on("sm_x0", 9, 0));
}

TEST(HarnessCli, PlanIsAFlagOfCheckAndBench) {
  Options o;
  ASSERT_FALSE(parse({"check", "--all", "--instance", "gemm.simt.x", "--plan"}, o));
  EXPECT_TRUE(o.plan);
  EXPECT_TRUE(o.all);
  Options b;
  ASSERT_FALSE(parse({"bench", "--all"}, b));
  EXPECT_FALSE(b.plan);
}

TEST(HarnessVersion, VersionIsACommandAndListedInTheUsage) {
  Options o;
  ASSERT_FALSE(parse({"--version"}, o));
  EXPECT_EQ(o.command, "--version");
  EXPECT_NE(usage_text().find("--version"), std::string::npos);
  EXPECT_NE(usage_text().find("--help"), std::string::npos);
}

TEST(HarnessVersion, NamesProgramVersionCommitUtcBuildDateAndTarget) {
  const Json v = version_json("sm_90a");
  EXPECT_EQ(v.at("program"), "kport-harness-sm_90a");
  EXPECT_EQ(v.at("target"), "sm_90a");
  const auto matches = [&](const char* key, const char* pattern) {
    const std::string text = v.at(key).get<std::string>();
    EXPECT_TRUE(std::regex_match(text, std::regex(pattern))) << key << ": " << text;
  };
  matches("version", R"(\d+\.\d+\.\d+)");
  matches("commit", "[0-9a-f]{7,40}|unknown");
  matches("built", R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");
}
