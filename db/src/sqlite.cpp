#include "sqlite.h"

#include <sqlite3.h>

#include <string>

namespace kport::db::detail {

namespace {

Error error_from(sqlite3* db, int rc, std::string_view what) {
  const int primary = rc & 0xff;
  std::string message(what);
  message += ": ";
  message += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return make_error(Errc::unavailable, message + " (database busy; retry)");
    case SQLITE_CONSTRAINT:
      // A unique key means "already there"; any other constraint is bad input.
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
        return make_error(Errc::conflict, message);
      return make_error(Errc::invalid_argument, message);
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN: return make_error(Errc::unavailable, message);
    // The file, its WAL or its directory stopped being writable (or the disk failed):
    // the service cannot take writes until an operator fixes it, which is a 503 with
    // the reason, not an "internal" 500.
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return make_error(Errc::unavailable, message + " (the database cannot be written; an operator must fix it)");
    default: return make_error(Errc::internal, message);
  }
}

}  // namespace

Stmt::Stmt(Stmt&& other) noexcept : m_conn(other.m_conn), m_stmt(other.m_stmt), m_in_use(other.m_in_use) {
  other.m_stmt = nullptr;
}

Stmt::~Stmt() {
  if (!m_stmt) return;
  if (!m_in_use) {
    sqlite3_finalize(m_stmt);
    return;
  }
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
  *m_in_use = false;
}

Stmt& Stmt::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(m_stmt, index, value);
  return *this;
}

Stmt& Stmt::bind(int index, double value) {
  sqlite3_bind_double(m_stmt, index, value);
  return *this;
}

Stmt& Stmt::bind(int index, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies the bytes, the caller's buffer may go away.
  sqlite3_bind_text64(m_stmt, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Stmt& Stmt::bind(int index, std::nullopt_t) {
  sqlite3_bind_null(m_stmt, index);
  return *this;
}

Result<bool> Stmt::step() {
  const int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return error_from(m_conn->handle(), rc, "sqlite step");
}

Status Stmt::run() {
  for (;;) {
    auto r = step();
    if (!r) return std::move(r).error();
    if (!*r) return {};
  }
}

bool Stmt::is_null(int col) const { return sqlite3_column_type(m_stmt, col) == SQLITE_NULL; }
std::int64_t Stmt::int64(int col) const { return sqlite3_column_int64(m_stmt, col); }
double Stmt::real(int col) const { return sqlite3_column_double(m_stmt, col); }

std::string Stmt::text(int col) const {
  const auto* p = sqlite3_column_text(m_stmt, col);
  const int n = sqlite3_column_bytes(m_stmt, col);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
}

std::optional<std::int64_t> Stmt::opt_int64(int col) const {
  if (is_null(col)) return std::nullopt;
  return int64(col);
}

std::optional<double> Stmt::opt_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}

std::optional<std::string> Stmt::opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}

Result<std::unique_ptr<Connection>> Connection::open(const std::string& path, int flags, int busy_timeout_ms) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Error e = error_from(db, rc, "cannot open database " + path);
    sqlite3_close_v2(db);
    e.code = Errc::unavailable;
    return e;
  }
  sqlite3_extended_result_codes(db, 1);
  std::unique_ptr<Connection> conn(new Connection(db));
  sqlite3_busy_timeout(db, busy_timeout_ms);
  KPORT_TRY(conn->exec("PRAGMA foreign_keys = ON"));
  return conn;
}

Result<std::unique_ptr<Connection>> Connection::open_writable(const std::string& path, int busy_timeout_ms) {
  return open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, busy_timeout_ms);
}

Connection::~Connection() {
  for (auto& [sql, cached] : m_cache) sqlite3_finalize(cached.stmt);
  sqlite3_close_v2(m_db);
}

Result<Stmt> Connection::prepare(std::string_view sql) {
  auto it = m_cache.find(sql);
  if (it != m_cache.end() && !it->second.in_use) {
    it->second.in_use = true;
    return Stmt(this, it->second.stmt, &it->second.in_use);
  }
  sqlite3_stmt* stmt = nullptr;
  const int rc =
      sqlite3_prepare_v3(m_db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return error_from(m_db, rc, "sqlite prepare");
  // A statement already in use (a nested query with the same text) gets a private copy.
  if (it != m_cache.end()) return Stmt(this, stmt, nullptr);
  auto slot = m_cache.emplace(std::string(sql), Cached{stmt, true}).first;
  return Stmt(this, stmt, &slot->second.in_use);
}

Status Connection::exec(std::string_view sql) {
  char* err = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return {};
  std::string detail = err ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  Error e = error_from(nullptr, rc, "sqlite exec");
  e.message = "sqlite exec: " + detail;
  return e;
}

std::int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(m_db); }
int Connection::changes() const { return sqlite3_changes(m_db); }

Error Connection::last_error(std::string_view what) const {
  return error_from(m_db, sqlite3_extended_errcode(m_db), what);
}

}  // namespace kport::db::detail
