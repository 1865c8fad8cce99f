// harness_variants: what a build runner tells the coordinator about the variants its
// harness knows, including those it left out on the target it built.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "publish.h"

#include <unistd.h>

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
  json::array v = kport::api::write_list(
      harness_variants(doc), [](const kport::api::KernelVariantUpload& x) { return kport::api::to_json(x); });
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

// locate_sources: each build record names its variant's kernel, relative to the
// repository, at the line of its first __global__ (what a check run annotates).
#include <filesystem>
#include <fstream>

namespace {

TEST(PublishSources, EachRecordNamesItsKernelsFirstGlobalLine) {
  namespace fs = std::filesystem;
  const fs::path repo = fs::temp_directory_path() / ("kport-sources-" + std::to_string(::getpid()));
  fs::remove_all(repo);
  fs::create_directories(repo / "kernels" / "gemm" / "simt");
  fs::create_directories(repo / "kernels" / "cmake");
  std::ofstream(repo / "kernels" / "cmake" / "kport_kernels.cmake") << "# marks a kernels tree\n";
  std::ofstream(repo / "kernels" / "gemm" / "simt" / "CMakeLists.txt")
      << "kport_kernel_variant(FAMILY gemm VARIANT simt FEATURES simt SOURCES gemm_simt.cu)\n";
  std::ofstream(repo / "kernels" / "gemm" / "simt" / "gemm_simt.cu")
      << "// gemm, one thread per output\n#include <cuda.h>\n\n__global__ void gemm_simt() {}\n";
  std::vector<kport::api::BuildRecordUpload> records(2);
  records[0].family = "gemm";
  records[0].variant = "simt";
  records[1].family = "gemm";
  records[1].variant = "elsewhere";  // not declared by the tree: no source
  kport::runner::locate_sources(records, {repo, repo / "kernels"});
  EXPECT_EQ(records[0].source_path, "kernels/gemm/simt/gemm_simt.cu");
  EXPECT_EQ(records[0].source_line, 4);
  EXPECT_FALSE(records[1].source_path);
  kport::runner::locate_sources(records, {});  // no tree: nothing changes, nothing fails
  EXPECT_EQ(records[0].source_line, 4);
  fs::remove_all(repo);
}

}  // namespace
