// The best_candidates summary (migration 0008): each instance's current figure per GPU
// model, dtype and shape is the latest result of the newest commit measured there.
#include <map>

#include "migrations.h"
#include "sqlite.h"
#include "test_support.h"

namespace kport::db::test {

namespace {

const std::string k_cube = "m=4096,n=4096,k=4096";

std::string sha(char c) { return std::string(40, c); }

ResultRecord figure(const std::string& commit, const std::string& instance, std::optional<double> median_us,
                    ResultStatus status = ResultStatus::passed, const std::string& driver = "580.1",
                    const std::string& gpu = "NVIDIA H200") {
  ResultRecord r;
  r.commit_sha = commit;
  r.target = "sm_90a";
  r.family = "gemm";
  r.variant = instance.substr(0, instance.find('.'));
  r.instance = instance;
  r.dtype = "bf16";
  r.shape = k_cube;
  r.gpu_model = gpu;
  r.arch = "9.0";
  r.driver = driver;
  r.status = status;
  r.median_us = median_us;
  if (median_us) {
    r.stddev_us = *median_us / 100;
    r.samples = 50;
    r.baseline_median_us = 200;
    r.ratio = 200 / *median_us;
  }
  return r;
}

}  // namespace

class BestCandidatesTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ok(m_store->upsert_repository("kernels", "/srv/git/kernels.git"));
  }
  void commit(char c, std::int64_t time_ms) {
    ok(m_store->put_commit(Commit{sha(c), "kernels", {}, "msg", "dev", time_ms}));
  }
  // Stores one result at store time `at_ms`; answers its id.
  std::int64_t put(const ResultRecord& r, std::int64_t at_ms) {
    *m_now = at_ms;
    return ok(m_store->put_results({r})).front().id;
  }
  BestCandidate only(const std::string& instance, const std::string& gpu = "NVIDIA H200") {
    std::optional<BestCandidate> found;
    for (auto& b : ok(m_store->best_candidates(gpu, "gemm", "bf16")))
      if (b.instance == instance) {
        EXPECT_FALSE(found) << "one row per instance and shape";
        found = b;
      }
    if (!found) throw std::runtime_error("no best_candidates row for " + instance);
    return *found;
  }
};

TEST_F(BestCandidatesTest, ANewerCommitsSlowerFigureReplacesTheOldFastOne) {
  commit('1', 10'000);
  commit('2', 20'000);
  put(figure(sha('1'), "wgmma.a", 100), 1'000'000);
  auto c2 = put(figure(sha('2'), "wgmma.a", 130), 1'000'100);
  auto row = only("wgmma.a");
  EXPECT_EQ(row.commit_sha, sha('2'));
  EXPECT_EQ(row.result_id, c2);
  EXPECT_DOUBLE_EQ(*row.median_us, 130);
  EXPECT_EQ(row.commit_ms, 20'000);
  EXPECT_EQ(row.results_count, 1) << "counts only the current commit's results";

  // A re-measure on the same commit replaces the first figure, even when slower.
  auto again = put(figure(sha('2'), "wgmma.a", 131), 1'000'200);
  row = only("wgmma.a");
  EXPECT_EQ(row.result_id, again);
  EXPECT_DOUBLE_EQ(*row.median_us, 131);
  EXPECT_EQ(row.results_count, 2);
  EXPECT_EQ(row.passed_count, 2);
}

TEST_F(BestCandidatesTest, ALateResultOfAnOlderCommitDoesNotReplaceTheNewest) {
  commit('1', 10'000);
  commit('2', 20'000);
  auto c2 = put(figure(sha('2'), "wgmma.a", 130), 1'000'000);
  put(figure(sha('1'), "wgmma.a", 90), 1'000'500);
  auto row = only("wgmma.a");
  EXPECT_EQ(row.result_id, c2);
  EXPECT_DOUBLE_EQ(*row.median_us, 130);
}

TEST_F(BestCandidatesTest, AFailureOnTheNewestCommitLeavesNoFigure) {
  commit('1', 10'000);
  commit('2', 20'000);
  put(figure(sha('1'), "wgmma.a", 100), 1'000'000);
  put(figure(sha('1'), "mma.b", 150), 1'000'000);
  auto failed = put(figure(sha('2'), "wgmma.a", std::nullopt, ResultStatus::failed), 1'000'100);
  auto row = only("wgmma.a");
  EXPECT_EQ(row.status, ResultStatus::failed);
  EXPECT_EQ(row.result_id, failed);
  EXPECT_FALSE(row.median_us) << "the old passing figure must not stand in";
  EXPECT_EQ(row.passed_count, 0);
  // The readers of the summary that pick the fastest now pick among current figures.
  EXPECT_EQ(ok(m_store->best_instances("NVIDIA H200")), std::vector<std::string>{"mma.b"});
  // Rows without a figure come after the timed ones of their shape.
  auto rows = ok(m_store->best_candidates("NVIDIA H200", "gemm", "bf16"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].instance, "mma.b");
}

TEST_F(BestCandidatesTest, WithoutACommitTimeArrivalOrdersAndALaterCommitRecordReorders) {
  // Commits '3' and '5' are unknown when their results arrive (at 5000 and 4000): they
  // belong to no library yet (no job, no commit), and among them arrival orders. Commit
  // '4' is the library's, known at time 3000.
  commit('4', 3'000);
  put(figure(sha('5'), "wgmma.a", 90), 4'000);
  auto unknown = put(figure(sha('3'), "wgmma.a", 100), 5'000);
  auto known = put(figure(sha('4'), "wgmma.a", 120), 6'000);
  auto row_of = [&](const std::string& repo) {
    std::optional<BestCandidate> found;
    for (auto& b : ok(m_store->best_candidates("NVIDIA H200", "gemm", "bf16")))
      if (b.instance == "wgmma.a" && b.repo == repo) found = b;
    if (!found) throw std::runtime_error("no best_candidates row of library '" + repo + "'");
    return *found;
  };
  EXPECT_EQ(row_of("").result_id, unknown) << "the latest arrival of no library";
  EXPECT_EQ(row_of("kernels").result_id, known);
  // Once commit '3' is recorded (the library's, time 1000), its result is the library's,
  // where commit '4' is the newest; the row of no library falls back to commit '5'.
  commit('3', 1'000);
  auto row = row_of("kernels");
  EXPECT_EQ(row.commit_sha, sha('4'));
  EXPECT_DOUBLE_EQ(*row.median_us, 120);
  EXPECT_EQ(row.commit_ms, 3'000);
  EXPECT_EQ(row.results_count, 1);
  EXPECT_EQ(row_of("").commit_sha, sha('5'));
  EXPECT_EQ(ok(m_store->best_candidates("NVIDIA H200", "gemm", "bf16")).size(), 2u);
}

TEST_F(BestCandidatesTest, RowsCarryDriverUnstableRatioAndTheDriversPresent) {
  commit('1', 10'000);
  auto r = figure(sha('1'), "wgmma.a", 100, ResultStatus::passed, "570.9");
  r.unstable = true;
  put(r, 1'000'000);
  put(figure(sha('1'), "mma.b", 150, ResultStatus::passed, "580.1"), 1'000'100);
  put(figure(sha('1'), "mma.b", 10, ResultStatus::passed, "580.1", "NVIDIA H100"), 1'000'200);
  auto a = only("wgmma.a");
  EXPECT_TRUE(a.unstable);
  EXPECT_EQ(a.driver, "570.9");
  EXPECT_DOUBLE_EQ(*a.ratio, 2.0);
  EXPECT_DOUBLE_EQ(*a.baseline_median_us, 200);
  auto drivers = ok(m_store->result_drivers("NVIDIA H200", "gemm", "bf16"));
  ASSERT_EQ(drivers.size(), 2u);
  EXPECT_EQ(drivers[0].driver, "570.9");
  EXPECT_EQ(drivers[1].driver, "580.1");
  EXPECT_EQ(drivers[1].results, 1);
  EXPECT_EQ(drivers[1].last_ms, 1'000'100);
  EXPECT_EQ(ok(m_store->best_candidates("", "gemm", "bf16")).size(), 3u) << "every GPU model, for provisional answers";
}

TEST_F(BestCandidatesTest, KernelInstancesKeepTheirDtypesUnlessAPublisherSaysNothing) {
  KernelInstance k{"wgmma.a", "gemm", "wgmma", R"(["wgmma"])", "{}", std::vector<std::string>{"bf16", "fp16"}};
  ok(m_store->upsert_kernel_instances({k, KernelInstance{"mma.b", "gemm", "mma", "[]", "{}"}}));
  k.dtypes.reset();  // an older publisher that does not list dtypes
  ok(m_store->upsert_kernel_instances({k}));
  auto list = ok(m_store->list_kernel_instances("gemm"));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, "mma.b");
  EXPECT_FALSE(list[0].dtypes) << "not reported is not 'runs nothing'";
  EXPECT_EQ(list[1].dtypes, (std::vector<std::string>{"bf16", "fp16"}));
  KernelInstance bad{"x.y", "gemm", "x", "[]", "{}", std::vector<std::string>{""}};
  auto refused = m_store->upsert_kernel_instances({bad});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::invalid_argument);
}

// Two libraries (repositories) may name an instance alike: a result's library is its
// commit's repository here (no job), and each library keeps its own row and figure.
TEST_F(BestCandidatesTest, TwoLibrariesNamingAnInstanceAlikeKeepTheirOwnFigures) {
  ok(m_store->upsert_repository("other-lib", "/srv/git/other.git"));
  commit('1', 10'000);
  ok(m_store->put_commit(Commit{sha('2'), "other-lib", {}, "msg", "dev", 20'000}));
  put(figure(sha('1'), "wgmma.a", 100.0), 1'000);
  put(figure(sha('2'), "wgmma.a", 50.0), 2'000);
  std::map<std::string, double> medians;
  for (const auto& b : ok(m_store->best_candidates("NVIDIA H200", "gemm", "bf16"))) medians[b.repo] = *b.median_us;
  EXPECT_EQ(medians, (std::map<std::string, double>{{"kernels", 100.0}, {"other-lib", 50.0}}))
      << "the newer commit of another library does not replace this one's figure";

  KernelInstance mine{"wgmma.a", "gemm", "wgmma", "[]", R"({"tile_m":128})"};
  mine.repo = "kernels";
  KernelInstance theirs{"wgmma.a", "gemm", "wgmma", "[]", R"({"tile_m":64})"};
  theirs.repo = "other-lib";
  ok(m_store->upsert_kernel_instances({mine, theirs}));
  mine.config_json = R"({"tile_m":256})";
  ok(m_store->upsert_kernel_instances({mine}));
  std::map<std::string, std::string> configs;
  for (const auto& k : ok(m_store->list_kernel_instances("gemm"))) configs[k.repo] = k.config_json;
  EXPECT_EQ(configs,
            (std::map<std::string, std::string>{{"kernels", R"({"tile_m":256})"}, {"other-lib", R"({"tile_m":64})"}}));
}

// A commit queued by hand and never posted or pushed has no known time (0): its kernel page
// point sits where its first result arrived, not at 1970; a known time is the author's.
TEST_F(BestCandidatesTest, AKernelPointOfACommitWithNoKnownTimeSitsWhereItsResultArrived) {
  commit('1', 0);
  commit('2', 20'000);
  put(figure(sha('1'), "wgmma.a", 100.0), 1'000'000);
  put(figure(sha('1'), "wgmma.a", 101.0), 1'000'500);
  put(figure(sha('2'), "wgmma.a", 90.0), 2'000'000);
  auto points = ok(m_store->kernel_history("wgmma.a", "bf16", k_cube, std::nullopt));
  ASSERT_EQ(points.size(), 2u);
  std::map<std::string, std::int64_t> time;
  for (const auto& p : points) time[p.commit_sha] = p.commit_time_ms;
  EXPECT_EQ(time[sha('1')], 1'000'000);
  EXPECT_EQ(time[sha('2')], 20'000);
}

// A kernel page and a revalidation read one library's side of a shared instance name:
// its history, its configurations, its best on the GPU model.
TEST_F(BestCandidatesTest, OneLibrarysHistoryConfigsAndBestLeaveTheOtherLibrarysOut) {
  ok(m_store->upsert_repository("other-lib", "/srv/git/other.git"));
  commit('1', 10'000);
  ok(m_store->put_commit(Commit{sha('2'), "other-lib", {}, "msg", "dev", 20'000}));
  put(figure(sha('1'), "wgmma.a", 100.0), 1'000);
  put(figure(sha('1'), "mma.b", 90.0), 1'000);
  put(figure(sha('2'), "wgmma.a", 50.0), 2'000);
  auto commits_of = [&](const std::optional<std::string>& repo) {
    std::vector<std::string> out;
    for (const auto& p : ok(m_store->kernel_history("wgmma.a", "bf16", k_cube, repo))) out.push_back(p.commit_sha);
    return out;
  };
  EXPECT_EQ(commits_of(std::nullopt), (std::vector<std::string>{sha('1'), sha('2')})) << "every library's";
  EXPECT_EQ(commits_of(std::string("kernels")), std::vector<std::string>{sha('1')});
  EXPECT_EQ(commits_of(std::string("other-lib")), std::vector<std::string>{sha('2')});
  EXPECT_EQ(ok(m_store->measured_configs("wgmma.a", std::string("other-lib"))).size(), 1u);
  EXPECT_TRUE(ok(m_store->measured_configs("mma.b", std::string("other-lib"))).empty());
  SeriesFilter f;
  f.instance = "wgmma.a";
  EXPECT_EQ(ok(m_store->series_history(f)).size(), 2u);
  f.repo = "kernels";
  EXPECT_EQ(ok(m_store->series_history(f)).size(), 1u);
  // Best among each library's own rows: other-lib's 50 us does not unseat mma.b in kernels.
  EXPECT_EQ(ok(m_store->best_instances("NVIDIA H200", std::string("kernels"))), std::vector<std::string>{"mma.b"});
  EXPECT_EQ(ok(m_store->best_instances("NVIDIA H200", std::string("other-lib"))), std::vector<std::string>{"wgmma.a"});
  EXPECT_EQ(ok(m_store->best_instances("NVIDIA H200")), std::vector<std::string>{"wgmma.a"}) << "every library's rows";
}

// A revalidation compares a driver's figures with the previous driver's: the latest
// result per configuration is per library, and each says whose it is.
TEST_F(BestCandidatesTest, DriverResultsKeepEachLibrarysLatestFigure) {
  ok(m_store->upsert_repository("other-lib", "/srv/git/other.git"));
  commit('1', 10'000);
  ok(m_store->put_commit(Commit{sha('2'), "other-lib", {}, "msg", "dev", 20'000}));
  put(figure(sha('1'), "wgmma.a", 10.0, ResultStatus::passed, "600.1"), 1'000);
  put(figure(sha('2'), "wgmma.a", 100.0, ResultStatus::passed, "600.1"), 2'000);
  put(figure(sha('1'), "wgmma.a", 12.0, ResultStatus::passed, "600.1"), 3'000);
  put(figure(sha('2'), "wgmma.a", 90.0, ResultStatus::passed, "600.2"), 4'000);
  std::map<std::string, double> medians;
  for (const auto& r : ok(m_store->driver_results("NVIDIA H200", "600.1"))) {
    EXPECT_FALSE(medians.count(r.repo)) << "one row per library and configuration";
    medians[r.repo] = *r.median_us;
  }
  EXPECT_EQ(medians, (std::map<std::string, double>{{"kernels", 12.0}, {"other-lib", 100.0}}));
  auto newer = ok(m_store->driver_results("NVIDIA H200", "600.2"));
  ASSERT_EQ(newer.size(), 1u);
  EXPECT_EQ(newer[0].repo, "other-lib");
  EXPECT_EQ(ok(m_store->get_result(newer[0].id))->repo, "other-lib") << "every result read carries its library";
}

TEST_F(BestCandidatesTest, KernelVariantsAreListedWithTheirFeaturesEvenWithoutInstances) {
  ok(m_store->upsert_kernel_variants({KernelVariant{"gemm", "tcgen05", R"(["tcgen05","tma"])"},
                                      KernelVariant{"gemm", "simt", R"(["simt"])"},
                                      KernelVariant{"softmax", "vec16", "[]"}}));
  auto gemm = ok(m_store->list_kernel_variants("gemm"));
  ASSERT_EQ(gemm.size(), 2u);
  EXPECT_EQ(gemm[0].variant, "simt");
  EXPECT_EQ(gemm[1].variant, "tcgen05");
  EXPECT_EQ(gemm[1].features_json, R"(["tcgen05","tma"])");
  EXPECT_EQ(ok(m_store->list_kernel_variants()).size(), 3u);
}

// Migration 0008 rebuilds the summary from the results a 0007 database already holds.
TEST_F(BestCandidatesTest, TheMigrationRebuildsTheSummaryFromExistingResults) {
  using detail::Connection;
  auto conn = ok(Connection::open_writable((m_dir / "old.db").string(), 1000));
  const auto& all = detail::embedded_migrations();
  ASSERT_GE(all.size(), 8u);
  std::vector<detail::Migration> up_to_7(all.begin(), all.begin() + 7);
  ok(detail::apply_migrations(*conn, up_to_7, 1));
  ok(conn->exec(
      "INSERT INTO repositories(id, name, url, created_ms) VALUES (1, 'kernels', '/k', 0);"
      "INSERT INTO commits(sha, repo_id, message, author, time_ms, created_ms) VALUES"
      " ('c1', 1, '', '', 1000, 0), ('c2', 1, '', '', 2000, 0);"
      "INSERT INTO shapes(shape, dims_json, numel) VALUES ('k=1,m=1,n=1', '[]', 1);"
      "INSERT INTO results(id, commit_sha, target, family, variant, instance, dtype, shape, gpu_model, arch, driver,"
      " status, median_us, stddev_us, samples, ratio, created_ms, unstable) VALUES"
      // a: fast on c1, slower on c2, re-measured on c2 -> the re-measure (id 3)
      " (1, 'c1', 'sm_90a', 'gemm', 'w', 'a', 'bf16', 'k=1,m=1,n=1', 'H200', '9.0', '580', 'passed', 100, 1, 9, 2, 10, "
      "0),"
      " (2, 'c2', 'sm_90a', 'gemm', 'w', 'a', 'bf16', 'k=1,m=1,n=1', 'H200', '9.0', '580', 'passed', 130, 1, 9, 1.5, "
      "20, 0),"
      " (3, 'c2', 'sm_90a', 'gemm', 'w', 'a', 'bf16', 'k=1,m=1,n=1', 'H200', '9.0', '580', 'passed', 128, 1, 9, 1.6, "
      "30, 1),"
      // b: passed on c1, crashed on c2 -> out
      " (4, 'c1', 'sm_90a', 'gemm', 'w', 'b', 'bf16', 'k=1,m=1,n=1', 'H200', '9.0', '570', 'passed', 90, 1, 9, 2.2, "
      "10, 0),"
      " (5, 'c2', 'sm_90a', 'gemm', 'w', 'b', 'bf16', 'k=1,m=1,n=1', 'H200', '9.0', '580', 'crashed', NULL, NULL, NULL,"
      "  NULL, 20, 0),"
      // c: only on an unknown commit; it ranks by its arrival
      " (6, 'cx', 'sm_90a', 'gemm', 'w', 'c', 'bf16', 'k=1,m=1,n=1', 'H200', '9.0', '580', 'passed', 95, 1, 9, 2.1, "
      "40, 0);"));
  ok(detail::apply_migrations(*conn, all, 2));
  auto s = ok(conn->prepare(
      "SELECT instance, result_id, commit_sha, status, median_us IS NULL, results_count, passed_count, unstable"
      " FROM best_candidates ORDER BY instance"));
  std::vector<std::string> got;
  while (ok(s.step()))
    got.push_back(s.text(0) + " " + std::to_string(s.int64(1)) + " " + s.text(2) + " " + s.text(3) + " " +
                  std::to_string(s.int64(4)) + " " + std::to_string(s.int64(5)) + " " + std::to_string(s.int64(6)) +
                  " " + std::to_string(s.int64(7)));
  EXPECT_EQ(got,
            (std::vector<std::string>{"a 3 c2 passed 0 2 2 1", "b 5 c2 crashed 1 1 0 0", "c 6 cx passed 0 1 1 0"}));
  auto d = ok(conn->prepare("SELECT driver, results FROM result_drivers ORDER BY driver"));
  std::vector<std::string> drivers;
  while (ok(d.step())) drivers.push_back(d.text(0) + "=" + std::to_string(d.int64(1)));
  EXPECT_EQ(drivers, (std::vector<std::string>{"570=1", "580=5"}));
}

}  // namespace kport::db::test
