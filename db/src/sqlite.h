// RAII wrappers over the SQLite C API: a Connection that caches prepared statements
// and a Stmt handle that binds parameters and reads columns.
//
// Ownership: a Connection owns its sqlite3 handle and every cached statement; a Stmt
// borrows one cached statement and resets it on destruction, so the next user finds it
// clean. Threads: a Connection (and its Stmts) is used by one thread at a time; the
// Store guarantees that (one writer thread, readers leased from a pool).
// Errors: SQLite result codes become kport::Error (busy/locked -> unavailable,
// constraint -> conflict or invalid_argument, anything else -> internal).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kport/common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kport::db::detail {

class Connection;

class Stmt {
 public:
  // in_use: the cache slot's flag to clear on destruction; nullptr for a private copy.
  Stmt(Connection* conn, sqlite3_stmt* stmt, bool* in_use) : m_conn(conn), m_stmt(stmt), m_in_use(in_use) {}
  Stmt(Stmt&& other) noexcept;
  Stmt& operator=(Stmt&&) = delete;
  Stmt(const Stmt&) = delete;
  ~Stmt();

  // Parameters are numbered from 1, as in SQLite.
  Stmt& bind(int index, std::int64_t value);
  Stmt& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Stmt& bind(int index, bool value) { return bind(index, static_cast<std::int64_t>(value)); }
  Stmt& bind(int index, double value);
  Stmt& bind(int index, std::string_view value);
  Stmt& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Stmt& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Stmt& bind(int index, std::nullopt_t);
  template <typename T>
  Stmt& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind(index, std::nullopt);
  }
  // Binds args to parameters 1..N in order.
  template <typename... Args>
  Stmt& bind_all(const Args&... args) {
    int i = 0;
    (bind(++i, args), ...);
    return *this;
  }

  // Advances: true when a row is available, false when done.
  Result<bool> step();
  // Steps to completion, ignoring rows (INSERT/UPDATE/DELETE).
  Status run();

  bool is_null(int col) const;
  std::int64_t int64(int col) const;
  int int32(int col) const { return static_cast<int>(int64(col)); }
  double real(int col) const;
  std::string text(int col) const;
  std::optional<std::int64_t> opt_int64(int col) const;
  std::optional<double> opt_real(int col) const;
  std::optional<std::string> opt_text(int col) const;

 private:
  Connection* m_conn;
  sqlite3_stmt* m_stmt;
  bool* m_in_use;
};

class Connection {
 public:
  // flags: SQLITE_OPEN_* bits. Sets busy_timeout and foreign_keys on every connection.
  static Result<std::unique_ptr<Connection>> open(const std::string& path, int flags, int busy_timeout_ms);
  // Read-write, created when missing (the writer's mode; tests use it too).
  static Result<std::unique_ptr<Connection>> open_writable(const std::string& path, int busy_timeout_ms);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // A prepared statement for sql, from the cache when it is free.
  Result<Stmt> prepare(std::string_view sql);
  // Runs one or more statements without parameters (schema, pragmas, transactions).
  Status exec(std::string_view sql);

  std::int64_t last_insert_rowid() const;
  int changes() const;
  sqlite3* handle() const { return m_db; }
  // Turns the connection's last error into a kport::Error, prefixed by what failed.
  Error last_error(std::string_view what) const;

 private:
  explicit Connection(sqlite3* db) : m_db(db) {}

  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  sqlite3* m_db;
  std::map<std::string, Cached, std::less<>> m_cache;
};

}  // namespace kport::db::detail
