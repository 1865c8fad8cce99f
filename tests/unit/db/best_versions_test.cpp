// Store::best_evidence_version: the writer bumps a (GPU model, family, dtype)'s version
// around every commit that changes its best_candidates or result_drivers rows, so that
// evidence read between two equal even versions is the committed state of that version.
#include <map>
#include <thread>

#include "test_support.h"

namespace kport::db::test {

namespace {

const std::string k_cube = "m=4096,n=4096,k=4096";

std::string sha(char c) { return std::string(40, c); }

ResultRecord figure(const std::string& commit, double median_us, const std::string& gpu = "NVIDIA H200",
                    const std::string& dtype = "bf16") {
  ResultRecord r;
  r.commit_sha = commit;
  r.target = "sm_90a";
  r.family = "gemm";
  r.variant = "wgmma";
  r.instance = "gemm.wgmma.a";
  r.dtype = dtype;
  r.shape = k_cube;
  r.gpu_model = gpu;
  r.arch = "9.0";
  r.driver = "580.1";
  r.status = ResultStatus::passed;
  r.median_us = median_us;
  r.stddev_us = median_us / 100;
  r.samples = 50;
  return r;
}

}  // namespace

class BestVersionsTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ok(m_store->upsert_repository("kernels", "/srv/git/kernels.git"));
  }
  std::uint64_t version(const std::string& gpu = "NVIDIA H200", const std::string& dtype = "bf16") {
    return m_store->best_evidence_version(gpu, "gemm", dtype);
  }
};

TEST_F(BestVersionsTest, AnUploadMovesOnlyItsOwnKeyAndIsSettledWhenAcknowledged) {
  EXPECT_EQ(version(), 0u);
  ok(m_store->put_results({figure(sha('1'), 100)}));
  const auto after_first = version();
  EXPECT_GT(after_first, 0u);
  EXPECT_EQ(after_first % 2, 0u) << "an acknowledged write is settled";
  EXPECT_EQ(version("NVIDIA H100"), 0u);
  EXPECT_EQ(version("NVIDIA H200", "fp16"), 0u);
  ok(m_store->put_results({figure(sha('1'), 90), figure(sha('1'), 95, "NVIDIA H100")}));
  EXPECT_GT(version(), after_first);
  EXPECT_GT(version("NVIDIA H100"), 0u);
  EXPECT_EQ(version("NVIDIA H200", "fp16"), 0u);
  // Writes that touch no evidence leave every version alone.
  const auto settled = version();
  ok(m_store->upsert_target(Target{"sm_100a", "10.0", "{}", "13.0", 0, false}));
  EXPECT_EQ(version(), settled);
}

TEST_F(BestVersionsTest, ACommitRecordedAfterItsResultsMovesTheKeysItReorders) {
  ok(m_store->put_results({figure(sha('3'), 100)}));
  const auto before = version();
  ok(m_store->put_commit(Commit{sha('3'), "kernels", {}, "msg", "dev", 1'000}));
  EXPECT_GT(version(), before);
  // A commit without results changes no row.
  const auto settled = version();
  ok(m_store->put_commit(Commit{sha('4'), "kernels", {}, "msg", "dev", 2'000}));
  EXPECT_EQ(version(), settled);
}

TEST_F(BestVersionsTest, EvidenceReadBetweenTwoEqualVersionsIsThatVersionsState) {
  // One thread uploads ever slower figures; another reads evidence between two version
  // reads. Each settled version must map to one figure, and later versions to later ones.
  std::atomic<bool> done{false};
  std::map<std::uint64_t, double> seen;
  std::thread reader([&] {
    while (!done.load()) {
      const auto v0 = version();
      if (v0 % 2) continue;
      auto ev = m_store->best_evidence("NVIDIA H200", "gemm", "bf16");
      const auto v1 = version();
      if (!ev.ok() || v0 != v1 || ev->rows.empty()) continue;
      const double median = *ev->rows.front().median_us;
      auto [it, fresh] = seen.emplace(v0, median);
      if (!fresh) {
        EXPECT_DOUBLE_EQ(it->second, median) << "version " << v0;
      }
    }
  });
  for (int i = 1; i <= 200; ++i) {
    ok(m_store->put_results({figure(sha('1'), 100 + i)}));
    auto ev = ok(m_store->best_evidence("NVIDIA H200", "gemm", "bf16"));
    ASSERT_DOUBLE_EQ(*ev.rows.front().median_us, 100 + i) << "an acknowledged upload is read at once";
  }
  done = true;
  reader.join();
  double last = 0;
  for (const auto& [v, median] : seen) {
    EXPECT_GT(median, last) << "version " << v;
    last = median;
  }
}

}  // namespace kport::db::test
