// The A/A history of series and the runs of failed cases, as the verdict reads them.
#include <algorithm>

#include "test_support.h"

namespace kport::db::test {
namespace {

ResultRecord figure(const std::string& commit, double median_us, const std::string& env,
                    ResultStatus status = ResultStatus::passed, const std::string& driver = "580.1") {
  ResultRecord r;
  r.commit_sha = commit;
  r.target = "sm_90a";
  r.family = "gemm";
  r.variant = "mma";
  r.instance = "gemm.mma.default";
  r.dtype = "bf16";
  r.shape = "m=64,n=64,k=64";
  r.toolkit = "13.0";
  r.gpu_model = "NVIDIA H200";
  r.arch = "9.0";
  r.driver = driver;
  r.status = status;
  if (status == ResultStatus::passed) r.median_us = median_us;
  r.env_json = env;
  return r;
}

const std::string k_a(40, 'a'), k_b(40, 'b');
const std::string k_harness = R"({"reproduce":{"harness_sha256":")" + std::string(64, 'f') + R"("}})";

using SeriesTest = StoreTest;

TEST_F(SeriesTest, FiguresAreGroupedByTheBinaryAndHowTheyWereMeasured) {
  const std::string screen =
      R"({"reproduce":{"harness_sha256":")" + std::string(64, 'f') + R"("},"timing":{"precision":"screen"}})";
  ResultRecord unstable = figure(k_a, 99, k_harness);
  unstable.unstable = true;
  ok(m_store->put_results({figure(k_a, 10, k_harness), figure(k_b, 11, k_harness), figure(k_a, 12, "{}"),
                           figure(k_a, 13, screen), unstable, figure(k_a, 0, k_harness, ResultStatus::failed),
                           figure(k_a, 14, k_harness, ResultStatus::passed, "590.2")}));
  auto history = ok(m_store->commit_series_history(k_b));
  ASSERT_EQ(history.size(), 4u) << "unstable, failed and another driver's figures are left out";
  const std::string binary = std::string(64, 'f') + "/precise";
  EXPECT_EQ(history[0].code, binary);
  EXPECT_EQ(history[1].code, binary) << "another commit with the same binary is the same code";
  EXPECT_EQ(history[2].code, k_a + ":sm_90a/precise") << "a result that names no binary: its commit and target";
  EXPECT_EQ(history[3].code, std::string(64, 'f') + "/screen");
  EXPECT_DOUBLE_EQ(history[1].median_us, 11);
  SeriesFilter f;
  f.gpu_model = "NVIDIA H200";
  f.driver = "590.2";
  EXPECT_EQ(ok(m_store->series_history(f)).size(), 1u);
  f.driver.clear();
  f.shape = "m=1,n=1,k=1";
  EXPECT_TRUE(ok(m_store->series_history(f)).empty());
}

TEST_F(SeriesTest, OnlyTheNewestResultsOfAShapeAreHistory) {
  ok(m_store->put_results({figure(k_a, 10, k_harness), figure(k_a, 10.1, k_harness)}));
  std::vector<ResultRecord> others;
  for (int i = 0; i < 254; ++i) {
    ResultRecord r = figure(k_a, 20 + i, k_harness);
    r.instance = "gemm.mma.other";
    others.push_back(r);
  }
  ok(m_store->put_results(others));
  ok(m_store->put_results({figure(k_b, 10.2, k_harness)}));
  auto history = ok(m_store->commit_series_history(k_b));
  ASSERT_EQ(history.size(), 2u) << "the newest 256 results of the shape hold the second figure, not the first";
  EXPECT_DOUBLE_EQ(history[0].median_us, 10.1);
}

TEST_F(SeriesTest, CaseRunsAreEveryRunOfACaseThatFailedOnce) {
  ok(m_store->put_results({figure(k_a, 10, k_harness), figure(k_a, 0, k_harness, ResultStatus::failed)}));
  ResultRecord other = figure(k_b, 5, k_harness);
  other.instance = "gemm.mma.other";
  ok(m_store->put_results({other, figure(k_b, 10.5, k_harness)}));
  auto runs = ok(m_store->case_runs(CaseRunFilter{}));
  ASSERT_EQ(runs.size(), 3u) << "a case that never failed has no runs to read";
  EXPECT_TRUE(
      std::all_of(runs.begin(), runs.end(), [](const CaseRunRecord& r) { return r.instance == "gemm.mma.default"; }));
  EXPECT_EQ(runs[1].status, ResultStatus::failed);
  EXPECT_EQ(runs[0].code, std::string(64, 'f'));
  EXPECT_TRUE(ok(m_store->case_runs(CaseRunFilter{k_b, ""})).empty()) << "commit b failed nothing";
  EXPECT_EQ(ok(m_store->case_runs(CaseRunFilter{k_a, "NVIDIA H200"})).size(), 3u);
}

}  // namespace
}  // namespace kport::db::test
