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
  std::int64_t scalar(Connection& c, const char* sql) {
    auto s = ok(c.prepare(sql));
    EXPECT_TRUE(ok(s.step()));
    return s.int64(0);
  }
};

TEST_F(MigrationsTest, EmbeddedMigrationsAreNumberedWithoutGaps) {
  const auto& all = detail::embedded_migrations();
  ASSERT_FALSE(all.empty());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].version, static_cast<int>(i) + 1);
  EXPECT_EQ(schema_version(), static_cast<int>(all.size()));
}

TEST_F(MigrationsTest, FreshDatabaseRecordsEveryVersion) {
  auto versions = ok(m_store->applied_migrations());
  ASSERT_EQ(static_cast<int>(versions.size()), schema_version());
  EXPECT_EQ(versions.front(), 1);
  EXPECT_EQ(versions.back(), schema_version());
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
  EXPECT_EQ(scalar(*c, "SELECT count(*) FROM schema_migrations"), schema_version());
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

  std::vector<Migration> gap{{1, "one", ""}, {3, "three", ""}};
  EXPECT_FALSE(detail::apply_migrations(conn, gap, 5).ok());
}

}  // namespace kport::db::test
