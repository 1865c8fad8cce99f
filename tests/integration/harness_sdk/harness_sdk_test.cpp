// The harness SDK as an outside library uses it: `cmake --install --component harness-sdk`
// from this build into a fresh prefix, the fixture library (fixture/: its own layout, a
// softmax instance with its own softmax grids, and layernorm, a family kport does not ship,
// declared as data with one instance) configured with find_package(kport-harness) and built
// for sm_90a by nvcc, then its harness run as kport's runner runs one
// (docs/harness-protocol.md). The suite shares that one build, so CTest runs it as one
// process (CMakeLists.txt). tests/gpu/harness_sdk_family_gpu_test.cpp checks and times the
// layernorm family on a GPU.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "sdk_fixture.h"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using kport::test_sdk::describe;
using kport::test_sdk::Ran;
using kport::test_sdk::read_file;
using kport::test_sdk::run;

constexpr const char* k_target = "sm_90a";
constexpr const char* k_instance = "softmax.warp_row.w4";
constexpr const char* k_layernorm = "layernorm.warp_row.w4";

class HarnessSdk : public ::testing::Test {
 protected:
  // Installs the SDK and builds the fixture against it, once for the suite. A missing tool is
  // a skip with its reason; a failing step is every test's failure, with the step's output.
  static void SetUpTestSuite() {
    if (!KPORT_SDK_BUILT) {
      s_skip = "this build has no kernels/ (configured without a CUDA compiler): no harness SDK to install";
      return;
    }
    if (!fs::exists(KPORT_NVCC)) {
      s_skip = std::string("nvcc is not installed (looked for ") + KPORT_NVCC + ", the build's CUDA compiler)";
      return;
    }
    std::string tmpl = (fs::path(KPORT_WORK_ROOT) / "harness_sdk.XXXXXX").string();
    fs::create_directories(KPORT_WORK_ROOT);
    if (mkdtemp(tmpl.data()) == nullptr) {
      s_failure = "cannot create a work directory under " + std::string(KPORT_WORK_ROOT);
      return;
    }
    s_work = tmpl;
    s_prefix = s_work / "prefix";
    s_failure = kport::test_sdk::install_and_build_fixture(s_work, k_target);
    s_harness = s_work / "build" / "warp_softmax_harness";
  }

  static void TearDownTestSuite() {
    if (s_work.empty()) return;
    if (::testing::UnitTest::GetInstance()->failed_test_count() == 0)
      fs::remove_all(s_work);
    else
      std::cerr << "harness SDK work directory kept for inspection: " << s_work << "\n";
  }

  void SetUp() override {
    if (!s_skip.empty()) GTEST_SKIP() << s_skip;
    ASSERT_TRUE(s_failure.empty()) << s_failure;
  }

  // Runs the fixture's harness; the document it prints must be one JSON value.
  static json::value harness(const std::vector<std::string>& args, int expected_exit) {
    std::vector<std::string> argv{s_harness.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const Ran r = run(argv, s_work);
    EXPECT_EQ(r.exit_code, expected_exit) << describe(argv, r);
    boost::system::error_code ec;
    json::value doc = json::parse(r.out, ec);
    EXPECT_FALSE(ec) << "stdout is not one JSON document: " << describe(argv, r);
    return doc;
  }

  static inline std::string s_skip, s_failure;
  static inline fs::path s_work, s_prefix, s_harness;
};

json::object catalog_entry() { return json::parse(read_file(KPORT_CATALOG)).at("targets").at(k_target).as_object(); }

TEST_F(HarnessSdk, InstallsThePackageAndTheFixtureFindsIt) {
  const fs::path lib = s_prefix / KPORT_INSTALL_LIBDIR;
  for (const fs::path& f :
       {s_prefix / "include/kport-harness/kport/kernels/registry.h",
        s_prefix / "include/kport-harness/kport/kernels/fp8_scales.h",
        s_prefix / "include/kport-harness/kport/kernels/family_def.h",
        s_prefix / "include/kport-harness/reference/reference.h",
        s_prefix / "include/kport-harness/harness/device/harness_kernels.h", lib / "libkport_harness_core.a",
        lib / "libkport_reference.a", lib / "cmake/kport-harness/kport-harness-config.cmake",
        lib / "cmake/kport-harness/kport-harness-config-version.cmake",
        lib / "cmake/kport-harness/kport-harness-targets.cmake", lib / "cmake/kport-harness/kport_kernels.cmake",
        lib / "cmake/kport-harness/kport_add_harness.cmake", s_prefix / "share/kport-harness/src/main.cpp",
        s_prefix / "share/kport-harness/src/device/fill_compare.cu", s_prefix / "share/kport-harness/targets.json"})
    EXPECT_TRUE(fs::exists(f)) << "the harness-sdk component did not install " << f;
  // One component: no service, no dashboard, no kport-harness of kport's own kernels.
  EXPECT_FALSE(fs::exists(s_prefix / "bin")) << "the harness-sdk component installed programs";
  EXPECT_FALSE(fs::exists(s_prefix / "share/kport")) << "the harness-sdk component installed the services' data";
  // The fixture found the package in the prefix, not somewhere else on the machine.
  const std::string cache = read_file(s_work / "build/CMakeCache.txt");
  EXPECT_NE(cache.find("kport-harness_DIR:PATH=" + (lib / "cmake/kport-harness").string()), std::string::npos)
      << "kport-harness_DIR is not the installed package's";
  EXPECT_TRUE(fs::is_regular_file(s_harness));
}

TEST_F(HarnessSdk, ListNamesTheFixtureInstanceAndItsVariants) {
  const json::value doc = harness({"list"}, 0);
  const json::object entry = catalog_entry();
  EXPECT_EQ(doc.at("target"), json::value(k_target));
  EXPECT_EQ(doc.at("arch"), entry.at("arch"));
  EXPECT_EQ(doc.at("target_features"), entry.at("features"));
  EXPECT_EQ(doc.at("max_dynamic_smem_per_block"), entry.at("max_dynamic_smem_per_block"));
  EXPECT_EQ(doc.at("instance_count"), json::value(2));

  const json::array& variants = doc.at("variants").as_array();
  ASSERT_EQ(variants.size(), 3u) << doc;
  const json::object& built = variants[0].as_object();
  EXPECT_EQ(built.at("variant"), json::value("softmax.warp_row"));
  EXPECT_EQ(built.at("features"), json::value("simt"));
  EXPECT_EQ(built.at("status"), json::value("built"));
  const json::array& instances = built.at("instances").as_array();
  ASSERT_EQ(instances.size(), 1u) << doc;
  EXPECT_EQ(instances[0], json::parse(R"({"name": "softmax.warp_row.w4", "family": "softmax",
      "variant": "warp_row", "features": ["simt"], "dtypes": ["fp32", "fp16", "bf16"],
      "config": {"threads_per_row": 32, "rows_per_block": 4}})"));

  // The family the library declares: its variant and instance listed as kport's are.
  EXPECT_EQ(variants[1], json::parse(R"({"variant": "layernorm.warp_row", "features": "simt", "status": "built",
      "instances": [{"name": "layernorm.warp_row.w4", "family": "layernorm", "variant": "warp_row",
                     "features": ["simt"], "dtypes": ["bf16", "fp32"],
                     "config": {"threads_per_row": 32, "rows_per_block": 4}}]})"));

  // Declared with features sm_90a lacks: listed, with the reason, and never compiled.
  EXPECT_EQ(variants[2], json::parse(R"({"variant": "softmax.tcgen05", "features": "tcgen05,tmem",
      "status": "not_applicable", "reason": "missing features: tcgen05,tmem"})"));

  // The family's definition as the harness runs it: dims, dtypes, tensors, its tolerances and
  // grids (src/layernorm_family.cpp).
  const json::array& families = doc.at("families").as_array();
  ASSERT_EQ(families.size(), 1u) << doc;
  EXPECT_EQ(families[0], json::parse(R"j({"name": "layernorm",
      "description": "y = (x - mean) * rstd * w + b per row, rstd = 1/sqrt(var + 1e-5) (fp32)",
      "dims": [{"name": "rows", "min": 1, "max": 1073741824}, {"name": "cols", "min": 1, "max": 1073741824}],
      "dtypes": ["bf16", "fp32"],
      "tensors": [
        {"name": "x", "role": "input", "extent": ["rows", "cols"], "dtype": "case", "range": [-3.0, 3.0]},
        {"name": "w", "role": "input", "extent": ["cols"], "dtype": "case", "range": [0.5, 1.5]},
        {"name": "b", "role": "input", "extent": ["cols"], "dtype": "case", "range": [-0.5, 0.5]},
        {"name": "y", "role": "output", "extent": ["rows", "cols"], "dtype": "case"},
        {"name": "rstd", "role": "output", "extent": ["rows"], "dtype": "fp32"}],
      "counts_flops": true,
      "tolerances": {"bf16": {"normwise": 0.015, "max_abs_rel": 0.04}, "fp32": {"normwise": 2e-5, "max_abs_rel": 1e-4}},
      "check_grid": ["rows=1,cols=1", "rows=5,cols=8", "rows=4,cols=300", "rows=129,cols=4104",
                     "rows=1000,cols=4096", "rows=3,cols=65536"],
      "bench_grid": ["rows=4096,cols=4096", "rows=32768,cols=1024", "rows=16,cols=8192"]})j"));
}

std::vector<std::string> plan_field(const json::value& doc, const char* field) {
  std::vector<std::string> out;
  for (const json::value& c : doc.at("plan").as_array()) out.emplace_back(c.at(field).as_string());
  return out;
}

TEST_F(HarnessSdk, PlanResolvesTheFixtureCasesWithoutAGpu) {
  const json::value one = harness({"check", "--case", std::string(k_instance) + ":bf16:cols=300,rows=4", "--plan"}, 0);
  EXPECT_EQ(one, json::parse(R"({"command": "check", "target": "sm_90a", "plan": [{"instance": "softmax.warp_row.w4",
      "family": "softmax", "variant": "warp_row", "dtype": "bf16", "shape_text": "rows=4,cols=300"}]})"));

  // The whole check grid of the softmax instance: every dtype of the instance, softmax shapes
  // only, the library's bench grid first (its override), then kport's edge shapes.
  const json::value grid = harness({"check", "--all", "--filter", "softmax", "--plan"}, 0);
  const json::array& plan = grid.at("plan").as_array();
  ASSERT_FALSE(plan.empty());
  std::set<std::string> dtypes;
  for (const json::value& c : plan) {
    EXPECT_EQ(c.at("instance"), json::value(k_instance));
    dtypes.insert(std::string(c.at("dtype").as_string()));
    EXPECT_EQ(std::string(c.at("shape_text").as_string()).rfind("rows=", 0), 0u) << c;
  }
  EXPECT_EQ(dtypes, (std::set<std::string>{"bf16", "fp16", "fp32"}));
  const std::vector<std::string> shapes = plan_field(grid, "shape_text");
  ASSERT_EQ(shapes.size() % 3, 0u);
  EXPECT_EQ(std::vector<std::string>(shapes.begin(), shapes.begin() + 2),
            (std::vector<std::string>{"rows=4096,cols=4096", "rows=16,cols=32000"}));
  EXPECT_EQ(shapes.size() / 3, 2u + 9u) << "the override's two shapes and kport's nine softmax edge shapes";

  // bench times the library's softmax grid (KPORT_OVERRIDE_FAMILY), not kport's.
  EXPECT_EQ(plan_field(harness({"bench", "--all", "--filter", "softmax", "--plan"}, 0), "shape_text"),
            (std::vector<std::string>{"rows=4096,cols=4096", "rows=16,cols=32000"}));

  const json::value bad = harness({"check", "--instance", k_instance, "--dtype", "bf16", "--shape", "m=1,n=1,k=1"}, 2);
  EXPECT_EQ(bad.at("error").at("code"), json::value("bad_shape")) << bad;
}

// layernorm, which kport does not ship, is selected, ordered and named like kport's families.
TEST_F(HarnessSdk, PlanRunsTheDeclaredFamilysGrids) {
  const json::value one = harness({"bench", "--case", std::string(k_layernorm) + ":fp32:cols=300,rows=4", "--plan"}, 0);
  EXPECT_EQ(one, json::parse(R"({"command": "bench", "target": "sm_90a", "plan": [{"instance": "layernorm.warp_row.w4",
      "family": "layernorm", "variant": "warp_row", "dtype": "fp32", "shape_text": "rows=4,cols=300"}]})"));

  const json::value check = harness({"check", "--all", "--filter", "layernorm", "--plan"}, 0);
  const std::vector<std::string> grid = {"rows=1,cols=1",      "rows=5,cols=8",       "rows=4,cols=300",
                                         "rows=129,cols=4104", "rows=1000,cols=4096", "rows=3,cols=65536"};
  std::vector<std::string> expected = grid;
  expected.insert(expected.end(), grid.begin(), grid.end());
  EXPECT_EQ(plan_field(check, "shape_text"), expected);
  std::vector<std::string> dtypes(6, "bf16");
  dtypes.insert(dtypes.end(), 6, "fp32");
  EXPECT_EQ(plan_field(check, "dtype"), dtypes) << "every dtype of the instance, in its order";
  for (const std::string& family : plan_field(check, "family")) EXPECT_EQ(family, "layernorm");

  const json::value bench = harness({"bench", "--all", "--filter", "layernorm", "--plan"}, 0);
  EXPECT_EQ(plan_field(bench, "shape_text"),
            (std::vector<std::string>{"rows=4096,cols=4096", "rows=32768,cols=1024", "rows=16,cols=8192"}));
  EXPECT_EQ(plan_field(bench, "dtype"), (std::vector<std::string>{"bf16", "bf16", "bf16"}));

  // --shape across both families: each instance takes the shape its family parses.
  const json::value both = harness({"check", "--all", "--shape", "rows=7,cols=9", "--dtype", "fp32", "--plan"}, 0);
  EXPECT_EQ(plan_field(both, "instance"), (std::vector<std::string>{k_instance, k_layernorm}));
  EXPECT_EQ(plan_field(both, "shape_text"), (std::vector<std::string>{"rows=7,cols=9", "rows=7,cols=9"}));
}

TEST_F(HarnessSdk, ABadShapeOfTheDeclaredFamilyIsAClearError) {
  const auto error_of = [](std::vector<std::string> args) {
    const json::value doc = harness(args, 2);
    EXPECT_EQ(doc.as_object().size(), 1u) << doc;
    EXPECT_EQ(doc.at("error").at("code"), json::value("bad_shape")) << doc;
    return std::string(doc.at("error").at("message").as_string());
  };
  const std::vector<std::string> one = {"check", "--instance", k_layernorm, "--dtype", "bf16", "--shape"};
  const auto with = [&](const std::string& shape) {
    std::vector<std::string> a = one;
    a.push_back(shape);
    return a;
  };
  EXPECT_EQ(error_of(with("rows=4,cols=8,eps=3")),
            "shape 'rows=4,cols=8,eps=3' for layernorm: unknown key 'eps' (the family's dims are rows, cols) "
            "(expected e.g. rows=4096,cols=4096)");
  EXPECT_EQ(error_of(with("rows=4")),
            "shape 'rows=4' for layernorm: missing key 'cols' (expected e.g. rows=4096,cols=4096)");
  EXPECT_EQ(error_of(with("rows=0,cols=8")),
            "shape 'rows=0,cols=8' for layernorm: rows must be between 1 and 1073741824 (expected e.g. "
            "rows=4096,cols=4096)");
  EXPECT_EQ(error_of(with("rows=4,rows=5,cols=8")),
            "shape 'rows=4,rows=5,cols=8' for layernorm: key 'rows' given twice (expected e.g. rows=4096,cols=4096)");
  // A grid selection whose shape no selected family parses: the declared family's error.
  EXPECT_NE(error_of({"bench", "--all", "--filter", "layernorm", "--shape", "cols=8,rows=x"})
                .find("for layernorm: 'x' is not an integer"),
            std::string::npos);
  // A --case of the family, too.
  EXPECT_NE(error_of({"check", "--case", std::string(k_layernorm) + ":bf16:rows=1,d=2"}).find("unknown key 'd'"),
            std::string::npos);
  // A dtype the family's instance does not run selects nothing: an error, never an empty pass.
  const json::value none = harness({"check", "--all", "--filter", "layernorm", "--dtype", "fp16", "--plan"}, 2);
  EXPECT_EQ(none.at("error").at("code"), json::value("no_cases")) << none;
}

// kport_harness_variant takes a family that is not kport's only once kport_harness_family
// declared it, and says how.
TEST_F(HarnessSdk, AnUndeclaredFamilyIsRefusedWhenTheLibraryIsConfigured) {
  const fs::path src = s_work / "undeclared";
  fs::create_directories(src / "src");
  std::ofstream(src / "src/k.cu") << "// never compiled\n";
  std::ofstream(src / "CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.25)\nproject(undeclared LANGUAGES CXX CUDA)\n"
         "find_package(kport-harness CONFIG REQUIRED)\nkport_add_harness(h TARGET sm_90a)\n"
         "kport_harness_variant(h FAMILY layernorm VARIANT simt SOURCES src/k.cu)\n";
  const auto argv = kport::test_sdk::configure_command(src, s_work / "undeclared-build", s_prefix, {});
  const Ran r = run(argv, s_work);
  EXPECT_NE(r.exit_code, 0) << describe(argv, r);
  // CMake wraps its messages: compare with every run of whitespace as one space.
  std::string text;
  for (char c : r.out + r.err)
    if (!std::isspace(static_cast<unsigned char>(c)))
      text += c;
    else if (!text.empty() && text.back() != ' ')
      text += ' ';
  EXPECT_NE(text.find("'layernorm' is not one of kport's families"), std::string::npos) << describe(argv, r);
  EXPECT_NE(text.find("kport_harness_family(h FAMILY layernorm SOURCES"), std::string::npos) << describe(argv, r);
}

TEST_F(HarnessSdk, VersionNamesTheTargetAndTheSdkVersion) {
  const json::value doc = harness({"--version"}, 0);
  EXPECT_EQ(doc.at("program"), json::value(std::string("kport-harness-") + k_target));
  EXPECT_EQ(doc.at("target"), json::value(k_target));
  EXPECT_EQ(doc.at("version"), json::value(KPORT_VERSION));
}

// Without a GPU: `device` and `check` answer the error document, no_device, exit 3. With one
// that runs sm_90a: the device document, and the fixture's kernel passes its numerics; with
// another GPU, check refuses the target.
TEST_F(HarnessSdk, DeviceAndCheckAnswerAsTheProtocolSays) {
  std::vector<std::string> argv{s_harness.string(), "device"};
  const Ran device = run(argv, s_work);
  boost::system::error_code ec;
  const json::value doc = json::parse(device.out, ec);
  ASSERT_FALSE(ec) << "stdout is not one JSON document: " << describe(argv, device);
  const std::vector<std::string> check{"check",
                                       "--seed",
                                       "1",
                                       "--case",
                                       std::string(k_instance) + ":fp32:rows=4,cols=300",
                                       "--case",
                                       std::string(k_instance) + ":bf16:rows=1000,cols=4096",
                                       "--case",
                                       std::string(k_instance) + ":fp16:rows=3,cols=100000",
                                       "--case",
                                       std::string(k_layernorm) + ":bf16:rows=129,cols=4104"};
  if (device.exit_code == 3) {
    // The error document: exactly {"error": {"code", "message"}}, the message saying what to do.
    ASSERT_EQ(doc.as_object().size(), 1u) << doc;
    EXPECT_EQ(doc.at("error").at("code"), json::value("no_device")) << doc;
    EXPECT_NE(std::string(doc.at("error").at("message").as_string()).find("run on a machine with an NVIDIA GPU"),
              std::string::npos)
        << doc;
    const json::value refused = harness(check, 3);
    EXPECT_EQ(refused, doc) << "check without a GPU must answer as device does";
    return;
  }
  ASSERT_EQ(device.exit_code, 0) << describe(argv, device);
  EXPECT_EQ(doc.at("harness_target"), json::value(k_target));
  if (!doc.at("harness_target_runs_here").as_bool()) {
    EXPECT_EQ(harness(check, 3).at("error").at("code"), json::value("target_mismatch"));
    return;
  }
  const json::value report = harness(check, 0);
  EXPECT_EQ(report.at("schema_version"), json::value(1));
  const json::array& results = report.at("results").as_array();
  ASSERT_EQ(results.size(), 4u) << report;
  for (const json::value& r : results) EXPECT_EQ(r.at("verdict"), json::value("passed")) << r;
}

}  // namespace
