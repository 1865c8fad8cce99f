// Migrations: applied once, in order, atomically; a newer database is refused.
#include "migrations.h"
#include "sqlite.h"
#include "test_support.h"

namespace kport::db::test {

using detail::Connection;
using detail::Migration;

class MigrationsTest : public StoreTest {
 protected:
  std::unique_ptr<Connection> raw() {
    auto c = Connection::open_writable((m_dir / "kport.db").string(), 1000);
    EXPECT_TRUE(c.ok());
    return std::move(c).value();
  }
  // Applies the embedded migrations below `version`: a database as an older kport left it.
  void migrate_below(Connection& conn, int version) {
    std::vector<Migration> before;
    for (const auto& m : detail::embedded_migrations())
      if (m.version < version) before.push_back(m);
    ok(detail::apply_migrations(conn, before, 1));
  }
  std::int64_t scalar(Connection& c, const char* sql) {
    auto s = ok(c.prepare(sql));
    EXPECT_TRUE(ok(s.step()));
    return s.int64(0);
  }
};

TEST_F(MigrationsTest, EmbeddedMigrationsAreNumberedUpwards) {
  const auto& all = detail::embedded_migrations();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().version, 1);
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_GT(all[i].version, all[i - 1].version);
  EXPECT_EQ(schema_version(), all.back().version);
}

TEST_F(MigrationsTest, FreshDatabaseRecordsEveryVersion) {
  std::vector<int> embedded;
  for (const auto& m : detail::embedded_migrations()) embedded.push_back(m.version);
  EXPECT_EQ(ok(m_store->applied_migrations()), embedded);
}

TEST_F(MigrationsTest, ReopenDoesNotReapply) {
  m_store.reset();
  auto c = raw();
  const auto before = scalar(*c, "SELECT sum(applied_at) FROM schema_migrations");
  c.reset();
  *m_now += 5000;  // a re-applied migration would record the new time
  m_store = open_store();
  ASSERT_NE(m_store, nullptr);
  m_store.reset();
  c = raw();
  EXPECT_EQ(scalar(*c, "SELECT sum(applied_at) FROM schema_migrations"), before);
  EXPECT_EQ(scalar(*c, "SELECT count(*) FROM schema_migrations"),
            static_cast<std::int64_t>(detail::embedded_migrations().size()));
  // Data written before the re-open is still there.
  EXPECT_EQ(scalar(*c, "SELECT count(*) FROM targets"), 2);
}

TEST_F(MigrationsTest, NewerSchemaIsRefusedWithAClearMessage) {
  m_store.reset();
  auto c = raw();
  {
    auto ins = ok(c->prepare("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?1, 'future', 0)"));
    ok(ins.bind(1, schema_version() + 2).run());
  }  // a statement must not outlive its connection
  c.reset();
  auto s = Store::open(options());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::conflict);
  EXPECT_EQ(s.error().message, "database schema version " + std::to_string(schema_version() + 2) +
                                   " is newer than this kport (" + std::to_string(schema_version()) +
                                   "); upgrade kport");
}

TEST_F(MigrationsTest, OnlyPendingMigrationsRunAndEachIsAtomic) {
  auto c = Connection::open_writable((m_dir / "other.db").string(), 1000);
  ASSERT_TRUE(c.ok());
  Connection& conn = **c;
  std::vector<Migration> v1{{1, "one", "CREATE TABLE a(x INTEGER);"}};
  EXPECT_EQ(ok(detail::apply_migrations(conn, v1, 1)), std::vector<int>{1});
  std::vector<Migration> v2 = v1;
  v2.push_back({2, "two", "CREATE TABLE b(x INTEGER);"});
  EXPECT_EQ(ok(detail::apply_migrations(conn, v2, 2)), std::vector<int>{2});
  EXPECT_TRUE(ok(detail::apply_migrations(conn, v2, 3)).empty());

  // A migration failing halfway leaves neither its tables nor its record behind.
  std::vector<Migration> v3 = v2;
  v3.push_back({3, "broken", "CREATE TABLE c(x INTEGER); INSERT INTO nowhere VALUES (1);"});
  auto r = detail::apply_migrations(conn, v3, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("migration 3 (broken) failed"), std::string::npos) << r.error().message;
  EXPECT_EQ(ok(detail::recorded_versions(conn)), (std::vector<int>{1, 2}));
  EXPECT_EQ(scalar(conn, "SELECT count(*) FROM sqlite_master WHERE name = 'c'"), 0);

  std::vector<Migration> repeated{{1, "one", ""}, {1, "again", ""}};
  EXPECT_FALSE(detail::apply_migrations(conn, repeated, 5).ok());
  std::vector<Migration> backwards{{2, "two", ""}, {1, "one", ""}};
  EXPECT_FALSE(detail::apply_migrations(conn, backwards, 5).ok());
}

// Two branches each add a migration: the one numbered 5 arrives with its sibling 4
// still on the other branch. When 4 comes, it runs on a database already at 5, once.
TEST_F(MigrationsTest, AMigrationBelowTheNewestAppliedStillRuns) {
  auto c = Connection::open_writable((m_dir / "branches.db").string(), 1000);
  ASSERT_TRUE(c.ok());
  Connection& conn = **c;
  std::vector<Migration> without_4{{1, "one", "CREATE TABLE a(x INTEGER);"}, {5, "five", "CREATE TABLE e(x INTEGER);"}};
  EXPECT_EQ(ok(detail::apply_migrations(conn, without_4, 1)), (std::vector<int>{1, 5}));
  std::vector<Migration> merged{without_4[0], {4, "four", "CREATE TABLE d(x INTEGER);"}, without_4[1]};
  EXPECT_EQ(ok(detail::apply_migrations(conn, merged, 2)), std::vector<int>{4});
  EXPECT_EQ(scalar(conn, "SELECT count(*) FROM sqlite_master WHERE name IN ('a', 'd', 'e')"), 3);
  EXPECT_TRUE(ok(detail::apply_migrations(conn, merged, 3)).empty());
  // The branch without 4 refuses the merged database instead of running beside it.
  auto r = detail::apply_migrations(conn, without_4, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::conflict);
  EXPECT_EQ(r.error().message, "database records migration 4, which this kport does not have; run a kport that has it");
}

// Migration 0013 reads the purpose of the jobs a 0012 database holds from their payload,
// by its top-level key as the typed payload reads it; a key nested deeper is no purpose.
TEST_F(MigrationsTest, TheJobPurposeMigrationReadsOldRowsFromTheirPayload) {
  auto c = Connection::open_writable((m_dir / "old.db").string(), 1000);
  ASSERT_TRUE(c.ok());
  Connection& conn = **c;
  std::vector<Migration> before, all;
  for (const auto& m : detail::embedded_migrations()) (m.version < 13 ? before : all).push_back(m);
  ASSERT_FALSE(all.empty());
  ok(detail::apply_migrations(conn, before, 1));
  ok(conn.exec(
      "INSERT INTO repositories(id, name, url, created_ms) VALUES (1, 'kernels', '/k', 0);"
      "INSERT INTO pipelines(id, reason, repo, ref, commit_sha, note, created_ms) VALUES (1, 'manual', '', '', 'c1', "
      "'', 0);"
      "INSERT INTO jobs(id, pipeline_id, kind, commit_sha, target, arch, payload_json, created_ms) VALUES"
      " (1, 1, 'build', 'c1', 'sm_90a', NULL, '{}', 0),"
      " (2, 1, 'check', 'c1', 'sm_90a', '9.0', '{\"revalidate\":{\"gpu_model\":\"H200\",\"driver\":\"580\"},"
      "\"instances\":[\"a\"]}', 0),"
      " (3, 1, 'check', 'c1', 'sm_90a', '9.0', '{\"remeasure\":true,\"instances\":[\"a\"]}', 0),"
      " (4, 1, 'check', 'c1', 'sm_90a', '9.0', '{\"cases\":[],\"best_request\":{\"gpu_model\":\"H200\"}}', 0),"
      " (5, 1, 'check', 'c1', 'sm_90a', '9.0', '{\"remeasure\":false,\"note\":{\"revalidate\":{}}}', 0);"));
  ok(detail::apply_migrations(conn, detail::embedded_migrations(), 2));
  auto s = ok(conn.prepare("SELECT group_concat(purpose, ' ') FROM (SELECT purpose FROM jobs ORDER BY id)"));
  ASSERT_TRUE(ok(s.step()));
  EXPECT_EQ(s.text(0), "check revalidate remeasure measure_request check");
  // A purpose outside the four is refused by the column itself.
  EXPECT_FALSE(conn.exec("UPDATE jobs SET purpose = 'bisect' WHERE id = 1").ok());
}

// Migration 0023 keeps the measure requests a 0022 database holds, of no library (''):
// they still list and answer, an open one still coalesces a request of no library, and a
// library's request of the same key is a request of its own.
TEST_F(MigrationsTest, MeasureRequestsMadeBeforeLibrariesAreOfNoLibrary) {
  Options o = options();
  o.path = (m_dir / "old.db").string();
  {
    auto c = Connection::open_writable(o.path, 1000);
    ASSERT_TRUE(c.ok());
    Connection& conn = **c;
    migrate_below(conn, 23);
    ok(conn.exec(
        "INSERT INTO pipelines(id, reason, repo, ref, commit_sha, note, created_ms) VALUES"
        " (1, 'manual', '', '', 'c1', 'measure', 0);"
        "INSERT INTO jobs(id, pipeline_id, kind, commit_sha, target, arch, gpu_model, payload_json, created_ms)"
        " VALUES (1, 1, 'check', 'c1', 'sm_90a', '9.0', 'NVIDIA H200', '{}', 0);"
        "INSERT INTO best_requests(id, gpu_model, family, dtype, shape, job_id, requests, created_ms, updated_ms)"
        " VALUES (1, 'NVIDIA H200', 'gemm', 'bf16', 'k=3,m=3,n=3', 1, 2, 0, 0);"));
  }
  auto store = Store::open(o);
  ASSERT_TRUE(store.ok()) << store.error().message;
  Store& st = **store;
  auto page = ok(st.list_best_requests(BestRequestFilter{}));
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.items[0].repo, "");
  EXPECT_EQ(page.items[0].requests, 2);
  EXPECT_EQ(page.items[0].key.shape, "k=3,m=3,n=3");
  BestRequestFilter of_none;
  of_none.repo = "";
  EXPECT_EQ(ok(st.list_best_requests(of_none)).items.size(), 1u);

  NewPipeline measure;
  measure.reason = PipelineReason::manual;
  measure.commit_sha = "c1";
  JobSpec check;
  check.kind = JobKind::check;
  check.commit_sha = "c1";
  check.target = "sm_90a";
  check.arch = "9.0";
  check.gpu_model = "NVIDIA H200";
  measure.jobs.push_back(check);
  const BestKey key{"NVIDIA H200", "gemm", "bf16", "k=3,m=3,n=3"};
  auto same = ok(st.open_best_request(key, "", measure));
  EXPECT_FALSE(same.created) << "the old open request is the one of no library";
  EXPECT_EQ(same.request.id, 1);
  EXPECT_EQ(same.request.requests, 3);
  auto library = ok(st.open_best_request(key, "lib-a", measure));
  EXPECT_TRUE(library.created);
  EXPECT_EQ(library.request.repo, "lib-a");
}

// Migration 0025 keeps the asks a 0024 database counted, as asks of no library; a
// library's asks of the same key are counted beside them.
TEST_F(MigrationsTest, UnmeasuredAsksCountedBeforeLibrariesAreOfNoLibrary) {
  Options o = options();
  o.path = (m_dir / "old.db").string();
  {
    auto c = Connection::open_writable(o.path, 1000);
    ASSERT_TRUE(c.ok());
    Connection& conn = **c;
    migrate_below(conn, 25);
    ok(
        conn.exec("INSERT INTO best_asks(gpu_model, family, dtype, shape, asks, first_ms, last_ms)"
                  " VALUES ('NVIDIA H200', 'gemm', 'bf16', 'k=3,m=3,n=3', 4, 10, 20)"));
  }
  auto store = Store::open(o);
  ASSERT_TRUE(store.ok()) << store.error().message;
  Store& st = **store;
  const BestKey key{"NVIDIA H200", "gemm", "bf16", "k=3,m=3,n=3"};
  ok(st.record_best_asks({BestAsk{key, 1, 30, 30, "lib-a"}, BestAsk{key, 2, 40, 40}}));
  auto asks = ok(st.list_best_asks("NVIDIA H200"));
  ASSERT_EQ(asks.size(), 2u);
  EXPECT_EQ(asks[0].repo, "");
  EXPECT_EQ(asks[0].asks, 6) << "the old count, and the new asks of no library added to it";
  EXPECT_EQ(asks[0].first_ms, 10);
  EXPECT_EQ(asks[1].repo, "lib-a");
  EXPECT_EQ(asks[1].asks, 1);
}

}  // namespace kport::db::test
