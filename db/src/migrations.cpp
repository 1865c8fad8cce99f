#include "migrations.h"

#include <string>

#include "kport/common/log.h"

namespace kport::db::detail {

namespace {

Status check_sequence(const std::vector<Migration>& migrations) {
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1)
      return make_error(Errc::internal, "migrations must be numbered 1..N without gaps; found " +
                                            std::to_string(migrations[i].version) + " at position " +
                                            std::to_string(i + 1));
  }
  return {};
}

Status apply_one(Connection& conn, const Migration& m, std::int64_t now_ms) {
  KPORT_TRY(conn.exec("BEGIN IMMEDIATE"));
  auto body = [&]() -> Status {
    auto applied = conn.exec(m.sql);
    if (!applied)
      return make_error(Errc::internal, "migration " + std::to_string(m.version) + " (" +
                                            std::string(m.name) + ") failed: " + applied.error().message);
    auto ins = conn.prepare("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)");
    if (!ins) return std::move(ins).error();
    return ins->bind_all(m.version, m.name, now_ms).run();
  }();
  if (!body) {
    (void)conn.exec("ROLLBACK");
    return body;
  }
  return conn.exec("COMMIT");
}

}  // namespace

Result<std::vector<int>> recorded_versions(Connection& conn) {
  auto stmt = conn.prepare("SELECT version FROM schema_migrations ORDER BY version");
  if (!stmt) return std::move(stmt).error();
  std::vector<int> out;
  for (;;) {
    auto row = stmt->step();
    if (!row) return std::move(row).error();
    if (!*row) break;
    out.push_back(stmt->int32(0));
  }
  return out;
}

Result<std::vector<int>> apply_migrations(Connection& conn, const std::vector<Migration>& migrations,
                                          std::int64_t now_ms) {
  KPORT_TRY(check_sequence(migrations));
  KPORT_TRY(conn.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations ("
      " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"));
  auto recorded = recorded_versions(conn);
  if (!recorded) return std::move(recorded).error();
  const int known = static_cast<int>(migrations.size());
  const int current = recorded->empty() ? 0 : recorded->back();
  if (current > known)
    return make_error(Errc::conflict, "database schema version " + std::to_string(current) +
                                          " is newer than this kport (" + std::to_string(known) +
                                          "); upgrade kport");
  std::vector<int> applied;
  for (const Migration& m : migrations) {
    if (m.version <= current) continue;
    KPORT_TRY(apply_one(conn, m, now_ms));
    log::info("applied database migration", {{"version", m.version}, {"name", m.name}});
    applied.push_back(m.version);
  }
  return applied;
}

}  // namespace kport::db::detail
