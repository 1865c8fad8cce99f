// Schema migrations: db/migrations/NNNN_name.sql, embedded at build time.
//
// apply_migrations() brings a database up to the newest embedded version: each pending
// migration (every embedded version the database does not record, in order; numbers may
// skip one another branch holds) runs in its own transaction together with its
// schema_migrations row, so a crash leaves the database at a whole version. Applied
// versions are never re-run. A database recording a version this kport does not embed
// is refused (conflict).
#pragma once

#include <string_view>
#include <vector>

#include "kport/common/result.h"
#include "sqlite.h"

namespace kport::db::detail {

struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
};

// Sorted by version (generated into migrations_embedded.cpp).
const std::vector<Migration>& embedded_migrations();

// Applies what is pending from `migrations` (versions strictly increasing from 1).
// Returns the versions applied by this call.
Result<std::vector<int>> apply_migrations(Connection& conn, const std::vector<Migration>& migrations,
                                          std::int64_t now_ms);

Result<std::vector<int>> recorded_versions(Connection& conn);

}  // namespace kport::db::detail
