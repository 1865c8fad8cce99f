// The build driver over libraries that describe themselves with kport.json: another
// team's CUDA library in its own layout (real nvcc, one arch), a command-protocol
// library, kport's own kernels/kport.json on the fixture tree, and the refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "foreign_library.h"
#include "kport/porting/build_driver.h"
#include "kport/porting/manifest.h"
#include "runner_fixture.h"

namespace kport::porting {
namespace {
namespace fs = std::filesystem;

std::string nvcc_path() { return fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "nvcc"; }

// A library committed to a real git repository and cloned, as the build runner's
// workspace would hold it.
class ManifestBuild : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::nvcc_available()) GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc)";
    if (std::system("git --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "the git CLI is needed";
    auto listing = make_nvcc_probe(nvcc_path())->probe();
    ASSERT_TRUE(listing.ok()) << listing.error().message;
    ASSERT_TRUE(catalog.ok()) << catalog.error().message;
    catalog->join(*listing);
  }
  // Commits what `write` puts in src/ and clones it into checkout/.
  fs::path commit_and_clone(const std::function<void(const fs::path&)>& write) {
    const fs::path src = dir.path() / "src", checkout = dir.path() / "checkout";
    write(src);
    const std::string env =
        "GIT_AUTHOR_NAME=Dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=Dev "
        "GIT_COMMITTER_EMAIL=dev@example.com ";
    const std::string cmd = "cd " + src.string() + " && git init -q -b main && git add -A && " + env +
                            "git commit -q -m library && git clone -q " + src.string() + " " + checkout.string() +
                            " > /dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return checkout;
  }
  BuildRequest request(const fs::path& checkout, const std::string& target) {
    BuildRequest req;
    auto library = find_library(checkout);
    req.kernels_dir = library.ok() ? *library : checkout;
    req.checkout = checkout;
    req.target = target;
    req.build_dir = dir.path() / "build" / target;
    req.catalog = &*catalog;
    req.jobs = 2;
    req.compile_timeout = std::chrono::seconds(300);
    req.step_timeout = std::chrono::seconds(600);
    req.nvcc = nvcc_path();
    req.log = [this](const std::string& line) { log += line + "\n"; };
    return req;
  }
  static std::map<std::string, VariantRecord> by_id(const BuildReport& report) {
    std::map<std::string, VariantRecord> out;
    for (const auto& r : report.records) out[r.id()] = r;
    return out;
  }

  testing::TempDir dir;
  Result<Catalog> catalog = Catalog::from_file(KPORT_CATALOG_DEFAULT);
  std::string log;
};

TEST_F(ManifestBuild, ACudaLibraryInItsOwnLayoutBuildsItsHarnessAndListsItsVariants) {
  const fs::path checkout = commit_and_clone(testing::write_cuda_library);
  ASSERT_TRUE(fs::exists(checkout / "src" / "ops" / "scale.cu"));
  ASSERT_FALSE(fs::exists(checkout / "cmake" / "kport_kernels.cmake"));
  auto report = build_target(request(checkout, "sm_90a"));
  ASSERT_TRUE(report.ok()) << report.error().message << "\n" << log;
  ASSERT_FALSE(report->harness.empty()) << report->harness_error << "\n" << log;
  EXPECT_EQ(report->harness.filename(), "scale_harness");
  EXPECT_TRUE(fs::exists(report->harness));
  EXPECT_EQ(report->harness_sha256.size(), 64u);
  EXPECT_NE(log.find("library scale-lib (kport.json, manifest_version 1)"), std::string::npos) << log;
  // The real nvcc compiled the kernel for the one arch the manifest's {arch} named.
  const fs::path build_dir = dir.path() / "build" / "sm_90a";
  std::ifstream commands_file(build_dir / "compile_commands.json");
  std::stringstream commands;
  commands << commands_file.rdbuf();
  EXPECT_NE(commands.str().find("nvcc"), std::string::npos) << commands.str();
  EXPECT_NE(commands.str().find("arch=compute_90a,code=[compute_90a,sm_90a]"), std::string::npos) << commands.str();
  EXPECT_TRUE(fs::exists(build_dir / "CMakeFiles" / "scale_harness.dir" / "src" / "ops" / "scale.cu.o"));

  // Its variants are the harness's list, planned against sm_90a's features.
  auto records = by_id(*report);
  ASSERT_EQ(records.size(), 2u) << report->summary();
  EXPECT_EQ(records["scale.v1"].status, VariantStatus::ok);
  EXPECT_EQ(records["scale.v1"].target, "sm_90a");
  EXPECT_EQ(records["scale.tc"].status, VariantStatus::not_applicable);
  EXPECT_EQ(records["scale.tc"].message, "missing features: tcgen05");
  EXPECT_TRUE(report->validatable());
  EXPECT_TRUE(report->all_ok());
  EXPECT_EQ(report->summary(), "1 variant built, 1 not applicable on sm_90a");
  std::string listed;
  ASSERT_EQ(testing::run_to_exit(report->harness.string(), {"list"}, listed), 0) << listed;
  EXPECT_NE(listed.find("\"target\": \"sm_90a\""), std::string::npos) << listed;
  std::string device;
  EXPECT_EQ(testing::run_to_exit(report->harness.string(), {"device"}, device), 3) << device;

  // A target the manifest does not list is refused, naming the manifest and its targets.
  auto other = build_target(request(checkout, "sm_80"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, Errc::unprocessable);
  EXPECT_EQ(other.error().message, "kport.json of scale-lib does not build sm_80 (its targets: sm_90a)");
}

TEST_F(ManifestBuild, ACommandLibraryBuildsWithItsEnvironmentAndDeclaredVariants) {
  const fs::path checkout = commit_and_clone(testing::write_command_library);
  auto report = build_target(request(checkout, "sm_90a"));
  ASSERT_TRUE(report.ok()) << report.error().message << "\n" << log;
  ASSERT_FALSE(report->harness.empty()) << report->harness_error << "\n" << log;
  EXPECT_EQ(report->harness, dir.path() / "build" / "sm_90a" / "kport-harness");
  // The env's {target} reached the command: the harness it wrote says sm_90a.
  std::string listed;
  ASSERT_EQ(testing::run_to_exit(report->harness.string(), {"list"}, listed), 0) << listed;
  EXPECT_NE(listed.find("\"target\": \"sm_90a\""), std::string::npos) << listed;
  auto records = by_id(*report);
  ASSERT_EQ(records.size(), 3u) << report->summary();
  EXPECT_EQ(records["swiglu.fused"].status, VariantStatus::ok);
  EXPECT_EQ(records["layernorm.rows"].status, VariantStatus::ok);
  EXPECT_EQ(records["swiglu.tc"].status, VariantStatus::not_applicable);
  EXPECT_EQ(records["swiglu.tc"].message, "missing features: tcgen05");
  EXPECT_TRUE(report->validatable());

  // On a target with tcgen05 the declared variant the harness does not hold is a failure
  // of its own; the one that built is still validated.
  auto blackwell = build_target(request(checkout, "sm_100a"));
  ASSERT_TRUE(blackwell.ok()) << blackwell.error().message;
  auto b = by_id(*blackwell);
  EXPECT_EQ(b["swiglu.fused"].status, VariantStatus::ok);
  EXPECT_EQ(b["swiglu.tc"].status, VariantStatus::compile_error);
  EXPECT_EQ(b["swiglu.tc"].message, "kport.json declares it, but the built harness's list does not name it");
  EXPECT_TRUE(blackwell->validatable());
  EXPECT_FALSE(blackwell->all_ok());

  // A failing command is the build's failure, with its output.
  testing::write_file(checkout / "kport.json", R"({"manifest_version": 1, "name": "swiglu-lib",
    "build": {"command": ["sh", "-c", "echo no compiler here >&2; exit 7"], "harness": "h"}, "targets": "all"})");
  auto failed = build_target(request(checkout, "sm_90a"));
  ASSERT_TRUE(failed.ok()) << failed.error().message;
  EXPECT_TRUE(failed->harness.empty());
  EXPECT_FALSE(failed->validatable());
  EXPECT_NE(failed->harness_error.find("the build command exited 7:\nno compiler here"), std::string::npos)
      << failed->harness_error;
}

TEST_F(ManifestBuild, KportsOwnManifestBuildsTheFixtureTreeAsTheLegacyTreeDoes) {
  const fs::path checkout = commit_and_clone([](const fs::path& src) {
    fs::create_directories(src / "kernels" / "cmake");
    fs::copy(KPORT_FIXTURE_KERNELS, src / "kernels", fs::copy_options::recursive);
    fs::copy_file(KPORT_KERNELS_CMAKE, src / "kernels" / "cmake" / "kport_kernels.cmake");
    fs::copy_file(fs::path(KPORT_KERNELS_CMAKE).parent_path().parent_path() / "kport.json",
                  src / "kernels" / "kport.json");
  });
  auto req = request(checkout, "sm_80");
  EXPECT_EQ(req.kernels_dir, checkout / "kernels");
  req.cuobjdump = (dir.path() / "no-such-cuobjdump").string();
  auto report = build_target(req);
  ASSERT_TRUE(report.ok()) << report.error().message << "\n" << log;
  EXPECT_NE(log.find("library kport-kernels (kernels/kport.json, manifest_version 1)"), std::string::npos) << log;
  auto records = by_id(*report);
  ASSERT_EQ(records.size(), 4u) << report->summary();
  EXPECT_EQ(records["softmax.tiny"].status, VariantStatus::ok);
  ASSERT_TRUE(records["softmax.tiny"].resources) << "compiled on its own, ptxas resources read";
  EXPECT_EQ(records["softmax.tiny"].resources->shared_mem_bytes, 256);
  EXPECT_EQ(records["gemm.tiny_mma"].status, VariantStatus::ok);
  EXPECT_FALSE(records["gemm.tiny_mma"].audit_json.empty()) << "the PTX audit ran";
  EXPECT_EQ(records["gemm.broken"].status, VariantStatus::compile_error);
  EXPECT_EQ(records["attention.hopper"].status, VariantStatus::not_applicable);
  ASSERT_FALSE(report->harness.empty()) << report->harness_error;
  EXPECT_EQ(report->harness, req.build_dir / "bin" / "kport-harness-sm_80");
  std::string listed;
  ASSERT_EQ(testing::run_to_exit(report->harness.string(), {"list"}, listed), 0) << listed;
  EXPECT_NE(listed.find("softmax.tiny"), std::string::npos) << listed;
  EXPECT_NE(listed.find("gemm.tiny_mma"), std::string::npos) << listed;
}

TEST_F(ManifestBuild, NoManifestNorKernelsTreeAndABrokenManifestAreRefusedWithTheirReason) {
  const fs::path checkout = commit_and_clone(
      [](const fs::path& src) { testing::write_file(src / "README.md", "a library without a manifest\n"); });
  auto where = find_library(checkout);
  ASSERT_FALSE(where.ok());
  EXPECT_NE(where.error().message.find("no kport.json at its root"), std::string::npos) << where.error().message;
  BuildRequest req = request(checkout, "sm_90a");
  auto none = build_target(req);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Errc::not_found);
  EXPECT_NE(none.error().message.find("has no kport.json (the library manifest, docs/MANIFEST.md)"), std::string::npos)
      << none.error().message;

  testing::write_file(checkout / "kport.json",
                      "{\n  \"manifest_version\": 1,\n  \"name\": \"broken\",\n  \"build\": {\"cmake\": {\"target\": "
                      "[\"h\"]}},\n  \"targets\": \"all\"\n}\n");
  auto broken = build_target(request(checkout, "sm_90a"));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code, Errc::invalid_argument);
  EXPECT_EQ(broken.error().message, "kport.json:4: key 'build.cmake.target' must be a string, not an array");
  EXPECT_FALSE(fs::exists(dir.path() / "build" / "sm_90a" / "CMakeCache.txt")) << "nothing was configured";
}

}  // namespace
}  // namespace kport::porting
