// The harness SDK as an outside library uses it: `cmake --install --component harness-sdk`
// from this build into a fresh prefix, the fixture library (fixture/: its own layout, one
// softmax instance) configured with find_package(kport-harness) and built for sm_90a by nvcc,
// then its harness run as kport's runner runs one (docs/harness-protocol.md). The suite
// shares that one build, so CTest runs it as one process (CMakeLists.txt).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

constexpr const char* k_target = "sm_90a";
constexpr const char* k_instance = "softmax.warp_row.w4";

struct Ran {
  int exit_code = -1;
  std::string out;  // stdout: the harness's one JSON document
  std::string err;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs argv[0] (a path) with argv, stdout and stderr captured through files in `dir`.
Ran run(const std::vector<std::string>& argv, const fs::path& dir) {
  const fs::path out = dir / "run.stdout", err = dir / "run.stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Ran r;
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    r.err = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return r;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::string describe(const std::vector<std::string>& argv, const Ran& r) {
  std::string text;
  for (const std::string& a : argv) text += a + " ";
  return text + "exited " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

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
    const fs::path build = s_work / "build";
    std::vector<std::vector<std::string>> steps = {
        {KPORT_CMAKE, "--install", KPORT_BUILD_DIR, "--component", "harness-sdk", "--prefix", s_prefix.string()},
        {KPORT_CMAKE, "-S", KPORT_SDK_FIXTURE, "-B", build.string(), "-G", "Ninja",
         std::string("-DCMAKE_MAKE_PROGRAM=") + KPORT_MAKE_PROGRAM, "-DCMAKE_BUILD_TYPE=Release",
         std::string("-DCMAKE_CUDA_COMPILER=") + KPORT_NVCC, std::string("-DCMAKE_CXX_COMPILER=") + KPORT_CXX,
         "-DCMAKE_PREFIX_PATH=" + s_prefix.string(), std::string("-DWARP_SOFTMAX_TARGET=") + k_target},
        {KPORT_CMAKE, "--build", build.string()}};
    if (!std::string(KPORT_CCACHE).empty()) {
      steps[1].push_back(std::string("-DCMAKE_CXX_COMPILER_LAUNCHER=") + KPORT_CCACHE);
      steps[1].push_back(std::string("-DCMAKE_CUDA_COMPILER_LAUNCHER=") + KPORT_CCACHE);
    }
    for (const auto& step : steps) {
      const Ran r = run(step, s_work);
      if (r.exit_code != 0) {
        s_failure = describe(step, r);
        return;
      }
    }
    s_harness = build / "warp_softmax_harness";
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
  EXPECT_EQ(doc.at("instance_count"), json::value(1));

  const json::array& variants = doc.at("variants").as_array();
  ASSERT_EQ(variants.size(), 2u) << doc;
  const json::object& built = variants[0].as_object();
  EXPECT_EQ(built.at("variant"), json::value("softmax.warp_row"));
  EXPECT_EQ(built.at("features"), json::value("simt"));
  EXPECT_EQ(built.at("status"), json::value("built"));
  const json::array& instances = built.at("instances").as_array();
  ASSERT_EQ(instances.size(), 1u) << doc;
  EXPECT_EQ(instances[0], json::parse(R"({"name": "softmax.warp_row.w4", "family": "softmax",
      "variant": "warp_row", "features": ["simt"], "dtypes": ["fp32", "fp16", "bf16"],
      "config": {"threads_per_row": 32, "rows_per_block": 4}})"));

  // Declared with features sm_90a lacks: listed, with the reason, and never compiled.
  EXPECT_EQ(variants[1], json::parse(R"({"variant": "softmax.tcgen05", "features": "tcgen05,tmem",
      "status": "not_applicable", "reason": "missing features: tcgen05,tmem"})"));
}

TEST_F(HarnessSdk, PlanResolvesTheFixtureCasesWithoutAGpu) {
  const json::value one = harness({"check", "--case", std::string(k_instance) + ":bf16:cols=300,rows=4", "--plan"}, 0);
  EXPECT_EQ(one, json::parse(R"({"command": "check", "target": "sm_90a", "plan": [{"instance": "softmax.warp_row.w4",
      "family": "softmax", "variant": "warp_row", "dtype": "bf16", "shape_text": "rows=4,cols=300"}]})"));

  // The whole check grid: every dtype of the instance, softmax shapes only.
  const json::value grid = harness({"check", "--all", "--plan"}, 0);
  const json::array& plan = grid.at("plan").as_array();
  ASSERT_FALSE(plan.empty());
  std::set<std::string> dtypes;
  for (const json::value& c : plan) {
    EXPECT_EQ(c.at("instance"), json::value(k_instance));
    dtypes.insert(std::string(c.at("dtype").as_string()));
    EXPECT_EQ(std::string(c.at("shape_text").as_string()).rfind("rows=", 0), 0u) << c;
  }
  EXPECT_EQ(dtypes, (std::set<std::string>{"bf16", "fp16", "fp32"}));

  const json::value bad = harness({"check", "--instance", k_instance, "--dtype", "bf16", "--shape", "m=1,n=1,k=1"}, 2);
  EXPECT_EQ(bad.at("error").at("code"), json::value("bad_shape")) << bad;
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
                                       std::string(k_instance) + ":fp16:rows=3,cols=100000"};
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
  ASSERT_EQ(results.size(), 3u) << report;
  for (const json::value& r : results) EXPECT_EQ(r.at("verdict"), json::value("passed")) << r;
}

}  // namespace
