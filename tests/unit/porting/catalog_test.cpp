// The catalog joined with an injected toolkit listing: no nvcc needed.
#include <gtest/gtest.h>

#include "kport/porting/catalog.h"

namespace kport::porting {
namespace {

const char* k_table = R"({"targets":{
  "sm_80":{"arch":"8.0","features":["simt","mma_sync","cp_async"],"max_dynamic_smem_per_block":166912,"gpus":["A100"]},
  "sm_90a":{"arch":"9.0","features":["simt","wgmma","tma"],"max_dynamic_smem_per_block":232448,"gpus":["H100","H200"]},
  "sm_100a":{"arch":"10.0","features":["simt","tcgen05"],"max_dynamic_smem_per_block":232448}}})";

class FakeProbe final : public ToolkitProbe {
 public:
  Result<ToolkitListing> probe() override {
    return ToolkitListing{"13.7", {"sm_80", "sm_90", "sm_130"}, {"compute_80", "compute_90", "compute_130"}};
  }
};

Catalog joined() {
  auto c = Catalog::from_json(k_table);
  EXPECT_TRUE(c.ok());
  FakeProbe probe;
  auto listing = probe.probe();
  c->join(*listing);
  return std::move(c).value();
}

TEST(Catalog, JoinMarksWhatTheToolkitBuilds) {
  auto c = joined();
  EXPECT_EQ(c.toolkit_version(), "13.7");
  EXPECT_TRUE(c.find("sm_80")->supported_by_toolkit);
  EXPECT_TRUE(c.find("sm_90a")->supported_by_toolkit) << "an 'a' target is buildable when its base SM is listed";
  EXPECT_FALSE(c.find("sm_100a")->supported_by_toolkit) << "sm_100 is not in the fake listing";
  auto s = c.supported_targets();
  EXPECT_NE(std::find(s.begin(), s.end(), "sm_130"), s.end());
}

TEST(Catalog, TargetUnknownToTheTableIsFlaggedNewWithConservativeFeatures) {
  auto c = joined();
  auto e = c.find("sm_130");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->is_new);
  EXPECT_EQ(e->arch, "13.0");
  EXPECT_TRUE(e->has("simt"));
  EXPECT_TRUE(e->has("mma_sync"));
  EXPECT_TRUE(e->has("tma"));
  EXPECT_FALSE(e->has("wgmma")) << "architecture-specific features are never guessed";
  EXPECT_FALSE(e->has("tcgen05"));
  EXPECT_FALSE(c.find("sm_90a")->is_new);
}

TEST(Catalog, FindDerivesForUnlistedTargetsAndRejectsNonTargets) {
  auto c = joined();
  auto e = c.find("sm_75");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->is_new);
  EXPECT_FALSE(e->supported_by_toolkit);
  EXPECT_FALSE(e->has("cp_async"));
  auto bad = c.find("hopper");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_NE(bad.error().message.find("sm_<number>"), std::string::npos);
}

TEST(Catalog, ParsesTargetNames) {
  EXPECT_EQ(parse_target_name("sm_100f")->number, 100);
  EXPECT_EQ(parse_target_name("sm_100f")->suffix, 'f');
  EXPECT_EQ(parse_target_name("sm_90")->suffix, 0);
  EXPECT_FALSE(parse_target_name("compute_90"));
  EXPECT_FALSE(parse_target_name("sm_9x"));
  EXPECT_FALSE(parse_target_name("sm_"));
}

TEST(Catalog, RejectsMalformedTables) {
  EXPECT_EQ(Catalog::from_json("[]").error().code, Errc::bad_json);
  EXPECT_EQ(Catalog::from_json(R"({"targets":{"sm_80":{}}})").error().code, Errc::bad_json);
  EXPECT_EQ(Catalog::from_json(R"({"targets":{"volta":{"arch":"7.0"}}})").error().code, Errc::invalid_argument);
}

TEST(Catalog, CheckedInTableLoadsAndRoundTrips) {
  auto c = Catalog::from_file(KPORT_CATALOG_DEFAULT);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->find("sm_90a")->has("wgmma"));
  EXPECT_FALSE(c->find("sm_90")->has("wgmma"));
  EXPECT_TRUE(c->find("sm_100a")->has("tcgen05"));
  EXPECT_FALSE(c->find("sm_120")->has("tcgen05"));
  auto again = Catalog::from_json(c->to_json());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->entries().size(), c->entries().size());
}

TEST(Catalog, ParsesNvccVersion) {
  EXPECT_EQ(
      parse_nvcc_version("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n"),
      "13.0");
  EXPECT_EQ(parse_nvcc_version("garbage"), "");
}

// The nvcc probe asks the toolkit through the Env it is given: what the compiler prints
// becomes the listing, and a compiler that cannot run is `unavailable` naming the command.
class FakeToolkit : public Env {
 public:
  bool broken = false;
  std::vector<std::vector<std::string>> calls;
  Result<ProcessOutput> run_process(const std::vector<std::string>& argv, const ProcessOptions&) override {
    calls.push_back(argv);
    ProcessOutput out;
    if (broken) {
      out.exit_code = 1;
      out.output = "nvcc fatal: license file missing\n";
      return out;
    }
    const std::string& flag = argv.at(1);
    out.exit_code = 0;
    out.output = flag == "--version"         ? "Cuda compilation tools, release 13.7, V13.7.1\n"
                 : flag == "--list-gpu-code" ? "sm_90a\r\nsm_130 \n\n"
                                             : "compute_90a\ncompute_130\n";
    return out;
  }
};

TEST(Catalog, TheNvccProbeAsksTheToolkitThroughItsEnv) {
  FakeToolkit toolkit;
  auto listing = make_nvcc_probe("/opt/cuda/bin/nvcc", toolkit)->probe();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  EXPECT_EQ(listing->version, "13.7");
  EXPECT_EQ(listing->gpu_codes, (std::vector<std::string>{"sm_90a", "sm_130"}));
  EXPECT_EQ(listing->gpu_archs, (std::vector<std::string>{"compute_90a", "compute_130"}));
  ASSERT_EQ(toolkit.calls.size(), 3u);
  EXPECT_EQ(toolkit.calls[0], (std::vector<std::string>{"/opt/cuda/bin/nvcc", "--version"}));
  toolkit.broken = true;
  auto failed = make_nvcc_probe("/opt/cuda/bin/nvcc", toolkit)->probe();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, Errc::unavailable);
  EXPECT_NE(failed.error().message.find("/opt/cuda/bin/nvcc --version failed: nvcc fatal: license file missing"),
            std::string::npos)
      << failed.error().message;
}

}  // namespace
}  // namespace kport::porting
