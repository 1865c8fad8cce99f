// A family kport does not ship, brought by an outside library through the harness SDK, checked
// and timed on the GPU: the SDK installed from this build, the fixture library
// (tests/integration/harness_sdk/fixture: layernorm declared as data, one warp-per-row
// instance) built against it for sm_90a, and its harness's `check` and `bench` of layernorm
// read as kport's runner reads them. Skips, with the reason, without a device that runs
// sm_90a (asked of kport's own kport-harness-sm_90a, so nothing is built for a machine that
// cannot run it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sdk_fixture.h"

namespace {

namespace fs = std::filesystem;
using kport::test_sdk::describe;
using kport::test_sdk::Ran;
using kport::test_sdk::run;
using nlohmann::json;

constexpr const char* k_layernorm = "layernorm.warp_row.w4";

class SdkFamilyOnGpu : public testing::Test {
 protected:
  // Decides whether this machine can run the fixture, and builds it once for the suite.
  static void SetUpTestSuite() {
    fs::create_directories(KPORT_WORK_ROOT);
    const Ran dev = run({KPORT_OWN_HARNESS, "device"}, KPORT_WORK_ROOT);
    const json info = json::parse(dev.out, nullptr, false);
    if (info.is_discarded() || (info.contains("error") && info["error"].value("code", "") != "no_device")) {
      s_failure = "device printed no answer: " + describe({KPORT_OWN_HARNESS, "device"}, dev);
      return;
    }
    if (info.contains("error")) {
      s_skip = "no CUDA device: " + info["error"]["message"].get<std::string>();
      return;
    }
    if (!info.value("harness_target_runs_here", false)) {
      s_skip = "sm_90a code does not run on " + info["name"].get<std::string>() + " (compute capability " +
               info["compute_capability"].get<std::string>() + ")";
      return;
    }
    std::string tmpl = (fs::path(KPORT_WORK_ROOT) / "sdk_family.XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      s_failure = "cannot create a work directory under " + std::string(KPORT_WORK_ROOT);
      return;
    }
    s_work = tmpl;
    s_failure = kport::test_sdk::install_and_build_fixture(s_work, "sm_90a");
    s_harness = (s_work / "build" / "warp_softmax_harness").string();
  }

  static void TearDownTestSuite() {
    if (!s_work.empty() && testing::UnitTest::GetInstance()->failed_test_count() == 0) fs::remove_all(s_work);
  }

  void SetUp() override {
    if (!s_skip.empty()) GTEST_SKIP() << s_skip;
    ASSERT_TRUE(s_failure.empty()) << s_failure;
  }

  static json harness(const std::vector<std::string>& args, int expected_exit) {
    std::vector<std::string> argv{s_harness};
    argv.insert(argv.end(), args.begin(), args.end());
    const Ran r = run(argv, s_work);
    EXPECT_EQ(r.exit_code, expected_exit) << describe(argv, r);
    json doc = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << describe(argv, r);
    return doc;
  }

  static inline std::string s_skip, s_failure, s_harness;
  static inline fs::path s_work;
};

// rows and cols of a layernorm shape_text ("rows=129,cols=4104").
std::pair<double, double> rows_cols(const json& r) { return {r["shape"]["rows"], r["shape"]["cols"]}; }

TEST_F(SdkFamilyOnGpu, CheckPassesEveryShapeAgainstTheFamilysReference) {
  const json doc = harness({"check", "--all", "--filter", "layernorm", "--seed", "11"}, 0);
  ASSERT_TRUE(doc.contains("results")) << doc.dump();
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["seed"], 11);
  const std::map<std::string, std::pair<double, double>> tolerance = {{"bf16", {1.5e-2, 4e-2}}, {"fp32", {2e-5, 1e-4}}};
  ASSERT_EQ(doc["results"].size(), 12u) << "the def's six check shapes in bf16 and fp32";
  for (const json& r : doc["results"]) {
    const std::string what = r["dtype"].get<std::string>() + " " + r["shape_text"].get<std::string>();
    EXPECT_EQ(r["instance"], k_layernorm);
    EXPECT_EQ(r["family"], "layernorm") << what;
    EXPECT_EQ(r["verdict"], "passed") << what << ": " << r.value("reason", std::string());
    EXPECT_EQ(r["reference"], "cpu_double") << what;
    const auto [tn, ta] = tolerance.at(r["dtype"]);
    EXPECT_EQ(r["tolerance"], json({{"normwise", tn}, {"max_abs_rel", ta}})) << what;
    const auto [rows, cols] = rows_cols(r);
    // Every element of both outputs compared, each judged on its own.
    EXPECT_EQ(r["compared_elements"], rows * cols + rows) << what;
    EXPECT_EQ(r["outputs"]["y"]["compared_elements"], rows * cols) << what;
    EXPECT_EQ(r["outputs"]["rstd"]["compared_elements"], rows) << what;
    EXPECT_EQ(r["nonfinite"], 0) << what;
  }
  EXPECT_EQ(doc["summary"], json({{"passed", 12}}));

  // An entry's seed replays its inputs: the same errors in a run of that case alone.
  const json& entry = doc["results"][3];
  const json one = harness({"check", "--instance", k_layernorm, "--dtype", entry["dtype"], "--shape",
                            entry["shape_text"], "--seed", std::to_string(entry["seed"].get<std::uint64_t>())},
                           0);
  ASSERT_EQ(one["results"].size(), 1u) << one.dump();
  EXPECT_EQ(one["results"][0]["seed"], entry["seed"]);
  EXPECT_EQ(one["results"][0]["normwise_rel_error"], entry["normwise_rel_error"]);
  EXPECT_EQ(one["results"][0]["max_abs_error"], entry["max_abs_error"]);
}

TEST_F(SdkFamilyOnGpu, BenchTimesTheBenchGridWithTheFamilysCounts) {
  const json doc =
      harness({"bench", "--all", "--filter", "layernorm", "--dtype", "all", "--seed", "3", "--time-cap-ms", "100"}, 0);
  ASSERT_TRUE(doc.contains("results")) << doc.dump();
  ASSERT_EQ(doc["results"].size(), 6u) << "the def's three bench shapes in bf16 and fp32";
  for (const json& r : doc["results"]) {
    const std::string what = r["dtype"].get<std::string>() + " " + r["shape_text"].get<std::string>();
    ASSERT_EQ(r["verdict"], "measured") << what << ": " << r.value("reason", std::string());
    EXPECT_EQ(r["seed"], 3) << what;
    const double median_s = r["timing"]["median_ms"].get<double>() * 1e-3;
    EXPECT_GT(median_s, 0) << what;
    EXPECT_GE(r["timing"]["samples"].get<int>(), 3) << what;
    const auto [rows, cols] = rows_cols(r);
    const double e = r["dtype"] == "bf16" ? 2 : 4;
    // FLOPs from the def (8 per element); bytes: x, w, b read, y and the fp32 rstd written.
    EXPECT_NEAR(r["tflops"].get<double>(), 8 * rows * cols / median_s / 1e12, 1e-9 * r["tflops"].get<double>());
    const double bytes = e * (2 * rows * cols + 2 * cols) + 4 * rows;
    EXPECT_NEAR(r["gbps"].get<double>(), bytes / median_s / 1e9, 1e-9 * r["gbps"].get<double>()) << what;
    EXPECT_TRUE(r["baseline"].is_null()) << what;
    EXPECT_TRUE(r.contains("baseline_note")) << what;
  }
  EXPECT_EQ(doc["summary"], json({{"measured", 6}}));
}

}  // namespace
