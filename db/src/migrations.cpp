#include "migrations.h"

#include <algorithm>
#include <string>

#include "kport/common/log.h"

namespace kport::db::detail {

namespace {

// Numbers only ever grow, but two branches may each add one: a migration numbered below
// the newest applied one (its sibling merged first) is still pending, so what runs is
// every version not recorded, in order. A duplicate or out-of-order number is a broken
// build, refused before anything runs.
Status check_sequence(const std::vector<Migration>& migrations) {
  int previous = 0;
  for (const Migration& m : migrations) {
    if (m.version <= previous)
      return make_error(Errc::internal, "migrations must be numbered upwards from 1 without repeats; found " +
                                            std::to_string(m.version) + " after " + std::to_string(previous));
    previous = m.version;
  }
  return {};
}

Status apply_one(Connection& conn, const Migration& m, std::int64_t now_ms) {
  KPORT_TRY(conn.exec("BEGIN IMMEDIATE"));
  auto body = [&]() -> Status {
    auto applied = conn.exec(m.sql);
    if (!applied)
      return make_error(Errc::internal, "migration " + std::to_string(m.version) + " (" + std::string(m.name) +
                                            ") failed: " + applied.error().message);
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
  KPORT_TRY(
      conn.exec("CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"));
  auto recorded = recorded_versions(conn);
  if (!recorded) return std::move(recorded).error();
  const int known = migrations.empty() ? 0 : migrations.back().version;
  for (int v : *recorded) {
    const bool embedded =
        std::any_of(migrations.begin(), migrations.end(), [v](const Migration& m) { return m.version == v; });
    if (v > known)
      return make_error(Errc::conflict, "database schema version " + std::to_string(v) + " is newer than this kport (" +
                                            std::to_string(known) + "); upgrade kport");
    if (!embedded)
      return make_error(Errc::conflict, "database records migration " + std::to_string(v) +
                                            ", which this kport does not have; run a kport that has it");
  }
  std::vector<int> applied;
  for (const Migration& m : migrations) {
    if (std::binary_search(recorded->begin(), recorded->end(), m.version)) continue;
    KPORT_TRY(apply_one(conn, m, now_ms));
    log::info("applied database migration", {{"version", m.version}, {"name", m.name}});
    applied.push_back(m.version);
  }
  return applied;
}

}  // namespace kport::db::detail
