// The store as a whole: concurrent durable writes, runners, artifacts, catalog, logs.
#include <fstream>
#include <set>
#include <thread>

#include "kport/common/crypto.h"
#include <sqlite3.h>

#include "sqlite.h"
#include "test_support.h"

namespace kport::db::test {

using StoreBasicsTest = StoreTest;

TEST_F(StoreBasicsTest, ConcurrentWritersAreAllAcknowledgedAndDurable) {
  constexpr int k_threads = 8, k_per_thread = 150;
  const std::uint64_t batches_before = m_store->committed_batches();
  std::vector<std::vector<std::int64_t>> ids(k_threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < k_per_thread; ++i) {
        ResultRecord r;
        r.commit_sha = std::string(40, 'e');
        r.target = "sm_90a";
        r.family = "rmsnorm";
        r.variant = "vec16";
        r.instance = "vec16.t" + std::to_string(t);
        r.dtype = "f16";
        r.shape = "rows=" + std::to_string(i) + ",cols=4096";
        r.gpu_model = "NVIDIA H200";
        r.median_us = 1.0 + i;
        auto out = m_store->put_results({r});
        if (out.ok()) ids[t].push_back(out->at(0).id);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::int64_t> all;
  for (const auto& v : ids) {
    EXPECT_EQ(v.size(), static_cast<std::size_t>(k_per_thread)) << "every write acknowledged";
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(k_threads * k_per_thread));
  const std::uint64_t batches = m_store->committed_batches() - batches_before;
  EXPECT_GE(batches, 1u);
  EXPECT_LE(batches, all.size());

  // Reopen: every acknowledged row is on disk.
  m_store.reset();
  m_store = open_store();
  ASSERT_NE(m_store, nullptr);
  ResultFilter f;
  f.family = "rmsnorm";
  f.limit = 1000;
  std::size_t count = 0;
  for (;;) {
    auto page = ok(m_store->list_results(f));
    for (const auto& r : page.items) EXPECT_TRUE(all.count(r.id));
    count += page.items.size();
    if (!page.next_cursor) break;
    f.before_id = page.next_cursor;
  }
  EXPECT_EQ(count, all.size());
  auto best = ok(m_store->best_candidates("NVIDIA H200", "rmsnorm", "f16"));
  EXPECT_EQ(best.size(), static_cast<std::size_t>(k_threads * k_per_thread));
}

TEST_F(StoreBasicsTest, AFailingRequestDoesNotSpoilItsBatch) {
  std::vector<std::thread> threads;
  std::atomic<int> good{0}, bad{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        Commit c{std::string(40, static_cast<char>('a' + t)) + std::to_string(i),
                 t % 2 ? "kernels" : "missing",
                 {},
                 "msg",
                 "dev",
                 1};
        if (t % 2 == 1 && i == 0) (void)m_store->upsert_repository("kernels", "/srv/git/kernels.git");
        (m_store->put_commit(c).ok() ? good : bad)++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 150) << "commits of an unknown repository are refused";
  EXPECT_EQ(good.load(), 150);
  EXPECT_TRUE(ok(m_store->get_commit(std::string(40, 'b') + "7")).has_value());
}

TEST_F(StoreBasicsTest, RunnerTokensAreStoredHashedAndRevokedOnDeregister) {
  NewRunner n;
  n.name = "h200-0";
  n.role = RunnerRole::gpu;
  n.caps.gpu_model = "NVIDIA H200";
  n.caps.arch = "9.0";
  n.caps.driver = "570.86";
  auto reg = ok(m_store->register_runner(n));
  EXPECT_FALSE(reg.token.empty());
  EXPECT_EQ(ok(m_store->authenticate_runner(reg.token)).id, reg.runner.id);
  EXPECT_EQ(m_store->authenticate_runner(reg.token + "x").error().code, Errc::unauthorized);
  // The database file never contains the token itself.
  ok(m_store->checkpoint());
  const std::string bytes = slurp(m_dir / "kport.db");
  EXPECT_EQ(bytes.find(reg.token), std::string::npos);
  EXPECT_NE(bytes.find(crypto::sha256_hex(reg.token)), std::string::npos);

  auto models = ok(m_store->list_gpu_models());
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].drivers, std::vector<std::string>{"570.86"});
  ok(m_store->deregister_runner(reg.runner.id));
  EXPECT_EQ(m_store->authenticate_runner(reg.token).error().code, Errc::unauthorized);
  EXPECT_TRUE(ok(m_store->list_runners()).empty());
  EXPECT_EQ(ok(m_store->list_runners(true)).size(), 1u);

  NewRunner no_targets;
  no_targets.name = "b";
  EXPECT_EQ(m_store->register_runner(no_targets).error().code, Errc::invalid_argument);
}

TEST_F(StoreBasicsTest, ArtifactsAreVerifiedAndContentAddressed) {
  const std::string data = "cubin bytes \x01\x02";
  const std::string sha = crypto::sha256_hex(data);
  auto wrong = m_store->put_artifact("gemm.cubin", "cubin", crypto::sha256_hex("other"), data);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, Errc::unprocessable);
  auto a = ok(m_store->put_artifact("gemm.cubin", "cubin", sha, data));
  EXPECT_EQ(a.sha256, sha);
  EXPECT_EQ(a.size, static_cast<std::int64_t>(data.size()));
  EXPECT_EQ(slurp(a.path), data);
  EXPECT_EQ(ok(m_store->put_artifact("again.cubin", "cubin", sha, data)).name, "gemm.cubin") << "first upload wins";

  const auto file = m_dir / "upload.tmp";
  std::ofstream(file, std::ios::binary) << "fatbin";
  auto f = ok(m_store->put_artifact_file("x.fatbin", "fatbin", crypto::sha256_hex("fatbin"), file.string()));
  EXPECT_TRUE(std::filesystem::exists(f.path));
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_TRUE(ok(m_store->get_artifact(f.sha256)).has_value());
  EXPECT_FALSE(ok(m_store->get_artifact(std::string(64, '0'))).has_value());
}

TEST_F(StoreBasicsTest, TargetsAreFlaggedNewUntilAcknowledged) {
  EXPECT_TRUE(ok(m_store->upsert_target(Target{"sm_120f", "12.0", "{}", "13.0", 0, false})));
  EXPECT_FALSE(ok(m_store->upsert_target(Target{"sm_120f", "12.0", R"({"tcgen05":false})", "13.0", 0, false})));
  auto t = ok(m_store->get_target("sm_120f"));
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->is_new);
  EXPECT_EQ(t->features_json, R"({"tcgen05":false})");
  ok(m_store->acknowledge_target("sm_120f"));
  EXPECT_FALSE(ok(m_store->get_target("sm_120f"))->is_new);
  EXPECT_EQ(ok(m_store->list_targets()).size(), 3u);
  EXPECT_EQ(m_store->upsert_target(Target{"sm_1", "1.0", "{not json", "", 0, false}).error().code,
            Errc::invalid_argument);
}

TEST_F(StoreBasicsTest, JobLogsAppendInOrder) {
  auto p = pipeline_with_builds({"sm_90a"});
  auto id = ok(m_store->list_jobs(JobFilter{p.id, {}, {}, {}, {}, {}, 10})).items.at(0).id;
  auto b = build_runner("b", {"sm_90a"});
  ASSERT_TRUE(ok(m_store->claim(b.id)));
  ok(m_store->append_job_log(id, b.id, 1, "nvcc ...\n"));
  ok(m_store->append_job_log(id, b.id, 1, "ptxas info: 168 registers\n"));
  auto log = ok(m_store->job_log(id));
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].text, "ptxas info: 168 registers\n");
  EXPECT_EQ(ok(m_store->job_log(id, log[0].seq)).size(), 1u);
  EXPECT_EQ(m_store->append_job_log(424242, b.id, 1, "x").error().code, Errc::not_found);
}

// Issue 14 item 7: a write refused because the database cannot be written was a bare
// "internal" 500; it is "unavailable" (503) with SQLite's reason.
TEST_F(StoreTest, AWriteToADatabaseThatCannotBeWrittenIsUnavailableWithTheReason) {
  auto conn = detail::Connection::open((m_dir / "kport.db").string(), SQLITE_OPEN_READONLY, 1000);
  ASSERT_TRUE(conn.ok()) << conn.error().message;
  auto st = (*conn)->exec("INSERT INTO repositories(name, url, created_ms) VALUES ('r', '/r', 0)");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::unavailable);
  EXPECT_EQ(errc_http_status(st.error().code), 503);
  EXPECT_NE(st.error().message.find("readonly"), std::string::npos) << st.error().message;
}

}  // namespace kport::db::test
