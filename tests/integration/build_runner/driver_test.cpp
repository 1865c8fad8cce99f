// The porting build driver on the fixture tree plus two variants made to fail in the
// ways a real port fails: a compiler that hangs (its source includes a FIFO nobody
// writes) and a variant that declares mma_sync but whose code has no mma.sync.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "kport/porting/build_driver.h"
#include "runner_fixture.h"

namespace kport::porting {
namespace {
namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(BuildDriver, HungCompilerTimesOutAndAuditCatchesMissingInstructions) {
  if (!testing::nvcc_available()) GTEST_SKIP() << "nvcc is not installed (looked for /usr/local/cuda/bin/nvcc and PATH)";
  testing::TempDir dir;
  fs::path kernels = dir.path() / "kernels";
  fs::copy(KPORT_FIXTURE_KERNELS, kernels, fs::copy_options::recursive);
  fs::create_directories(kernels / "cmake");
  fs::copy_file(KPORT_KERNELS_CMAKE, kernels / "cmake" / "kport_kernels.cmake");
  fs::remove_all(kernels / "gemm" / "broken");
  fs::path fifo = dir.path() / "never-written";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  write(kernels / "rmsnorm" / "hang" / "CMakeLists.txt",
        "kport_kernel_variant(FAMILY rmsnorm VARIANT hang FEATURES simt SOURCES rmsnorm_hang.cu)\n");
  write(kernels / "rmsnorm" / "hang" / "rmsnorm_hang.cu", "#include \"" + fifo.string() + "\"\n");
  write(kernels / "gemm" / "fake_mma" / "CMakeLists.txt",
        "kport_kernel_variant(FAMILY gemm VARIANT fake_mma FEATURES mma_sync SOURCES gemm_fake_mma.cu)\n");
  write(kernels / "gemm" / "fake_mma" / "gemm_fake_mma.cu",
        "// Claims tensor cores, uses plain FMAs.\n__global__ void fake(float* c) { c[threadIdx.x] *= 2.f; }\n");

  auto catalog = Catalog::from_file(KPORT_CATALOG_DEFAULT);
  ASSERT_TRUE(catalog.ok());
  auto listing = make_nvcc_probe(fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "nvcc")->probe();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  catalog->join(*listing);
  BuildRequest req;
  req.kernels_dir = kernels;
  req.target = "sm_80";
  req.build_dir = dir.path() / "build";
  req.catalog = &*catalog;
  req.jobs = 3;  // the hung compile holds one slot until the limit
  // Generous: a tiny compile can take tens of seconds on a loaded 2-core CI machine.
  req.compile_timeout = std::chrono::seconds(60);
  if (fs::exists("/usr/local/cuda/bin/nvcc")) req.nvcc = "/usr/local/cuda/bin/nvcc";
  auto report = build_target(req);
  ASSERT_TRUE(report.ok()) << report.error().message;

  std::map<std::string, VariantRecord> by_id;
  for (const auto& r : report->records) by_id[r.id()] = r;
  ASSERT_EQ(by_id.size(), 5u);
  EXPECT_EQ(by_id["rmsnorm.hang"].status, VariantStatus::timeout) << by_id["rmsnorm.hang"].message;
  EXPECT_NE(by_id["rmsnorm.hang"].message.find("was killed"), std::string::npos);
  EXPECT_EQ(by_id["gemm.fake_mma"].status, VariantStatus::compile_error);
  EXPECT_NE(by_id["gemm.fake_mma"].message.find("declares mma_sync but its generated PTX has no mma.sync"), std::string::npos)
      << by_id["gemm.fake_mma"].message;
  EXPECT_FALSE(by_id["gemm.fake_mma"].audit_passed);
  EXPECT_EQ(by_id["gemm.tiny_mma"].status, VariantStatus::ok);
  EXPECT_EQ(by_id["softmax.tiny"].status, VariantStatus::ok);
  EXPECT_EQ(by_id["attention.hopper"].status, VariantStatus::not_applicable);
  // The failures are left out of the harness; the rest still links.
  ASSERT_FALSE(report->harness.empty()) << report->harness_error;
  EXPECT_EQ(report->harness_sha256.size(), 64u);
  EXPECT_FALSE(report->all_ok());
  std::string list;
  testing::run_to_exit(report->harness.string(), {"list"}, list);
  EXPECT_NE(list.find("softmax.tiny"), std::string::npos) << list;
  EXPECT_EQ(list.find("rmsnorm.hang"), std::string::npos) << list;
}

TEST(BuildDriver, TargetTheToolkitCannotBuildIsRefusedBeforeAnyCompile) {
  auto catalog = Catalog::from_file(KPORT_CATALOG_DEFAULT);
  ASSERT_TRUE(catalog.ok());
  catalog->join(ToolkitListing{"13.0", {"sm_80"}, {"compute_80"}});
  BuildRequest req;
  req.kernels_dir = KPORT_FIXTURE_KERNELS;
  req.target = "sm_100a";
  req.build_dir = "/nonexistent/never-created";
  req.catalog = &*catalog;
  auto report = build_target(req);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, Errc::unprocessable);
  EXPECT_NE(report.error().message.find("cannot build sm_100a"), std::string::npos);
  req.target = "volta";
  EXPECT_EQ(build_target(req).error().code, Errc::invalid_argument);
}

}  // namespace
}  // namespace kport::porting
