#include "kport/db/store.h"

#include <sqlite3.h>

#include <memory>
#include <random>

#include "impl.h"
#include "kport/common/clock.h"
#include "kport/common/log.h"
#include "migrations.h"

namespace kport::db {

using detail::Connection;

int schema_version() noexcept {
  const auto& all = detail::embedded_migrations();
  return all.empty() ? 0 : all.back().version;
}

namespace {

Status configure_writer(Connection& conn, const Options& o) {
  // WAL lets readers run beside the single writer. With synchronous=NORMAL a commit
  // reaches the WAL in the OS page cache before we acknowledge it, so a killed process
  // loses nothing committed; only an OS crash or power loss can drop the last commits.
  // Group commit makes FULL (an fsync per batch) affordable where that matters too.
  auto mode = conn.prepare("PRAGMA journal_mode = WAL");
  if (!mode) return std::move(mode).error();
  auto row = mode->step();
  if (!row) return std::move(row).error();
  if (!*row || mode->text(0) != "wal")
    return make_error(Errc::unavailable, "database " + o.path + " cannot use WAL journaling (" +
                                             (*row ? mode->text(0) : std::string("?")) + ")");
  KPORT_TRY(conn.exec(o.fsync_every_commit ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL"));
  KPORT_TRY(conn.exec("PRAGMA temp_store = MEMORY"));
  // Results and their indexes grow by the million: a larger page cache keeps the hot
  // index pages of the writer in memory (64 MiB).
  KPORT_TRY(conn.exec("PRAGMA cache_size = -65536"));
  return {};
}

// SQLite opens a file it cannot write read-only without saying so, and a database whose
// directory is read-only may still be read through WAL files left behind; either way
// every write would fail later. The coordinator is the sole writer, so it refuses to
// start instead: a committed no-op write proves the file, its WAL and the directory.
Status check_writable(Connection& conn, const Options& o) {
  const std::string what = "database " + o.path + " is not writable";
  const std::string fix =
      "; give the coordinator's user write access to the file and its directory (SQLite "
      "writes the -wal and -shm files beside it)";
  if (sqlite3_db_readonly(conn.handle(), "main") == 1)
    return make_error(Errc::unavailable, what + ": SQLite opened it read-only" + fix);
  auto probe = [&]() -> Status {
    KPORT_TRY(conn.exec("BEGIN IMMEDIATE"));
    auto st = conn.exec(
        "UPDATE schema_migrations SET applied_at = applied_at "
        "WHERE version = (SELECT MAX(version) FROM schema_migrations)");
    if (!st) {
      (void)conn.exec("ROLLBACK");
      return st;
    }
    return conn.exec("COMMIT");
  }();
  if (!probe) return make_error(Errc::unavailable, what + ": " + probe.error().message + fix);
  return {};
}

}  // namespace

Store::Store(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

Store::~Store() {
  m_impl->writer->stop();
  // Folding the WAL back into the main file leaves one self-contained file behind.
  (void)m_impl->writer->connection().exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

const Options& Store::options() const noexcept { return m_impl->options; }

Result<std::unique_ptr<Store>> Store::open(Options options) {
  if (options.path.empty()) return make_error(Errc::invalid_argument, "database path is empty");
  if (options.readers < 1) options.readers = 1;
  if (!options.env) options.env = &Env::system();
  if (!options.jitter) {
    // Called on the writer thread only; one generator is enough.
    options.jitter = [gen = std::make_shared<std::mt19937_64>(std::random_device{}())] {
      return std::uniform_real_distribution<double>(0.0, 1.0)(*gen);
    };
  }
  if (options.lease_ms <= 0) return make_error(Errc::invalid_argument, "lease_ms must be positive");

  auto writer_conn =
      Connection::open(options.path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, options.busy_timeout_ms);
  if (!writer_conn) return std::move(writer_conn).error();
  if (sqlite3_db_readonly((*writer_conn)->handle(), "main") == 1) KPORT_TRY(check_writable(**writer_conn, options));
  KPORT_TRY(configure_writer(**writer_conn, options));
  auto applied = detail::apply_migrations(**writer_conn, detail::embedded_migrations(), options.env->now_unix_ms());
  if (!applied) return std::move(applied).error();
  KPORT_TRY(check_writable(**writer_conn, options));
  KPORT_TRY(detail::BestVersions::install(**writer_conn));

  std::vector<std::unique_ptr<Connection>> readers;
  for (int i = 0; i < options.readers; ++i) {
    auto r = Connection::open(options.path, SQLITE_OPEN_READONLY, options.busy_timeout_ms);
    if (!r) return std::move(r).error();
    readers.push_back(std::move(*r));
  }
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->readers = std::make_unique<detail::ReaderPool>(std::move(readers));
  impl->best_versions = std::make_unique<detail::BestVersions>();
  impl->writer =
      std::make_unique<detail::Writer>(std::move(*writer_conn), impl->options.max_batch, impl->best_versions.get());
  log::info("database open", {{"path", impl->options.path}, {"schema", schema_version()}});
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Result<std::vector<int>> Store::applied_migrations() {
  return m_impl->read<std::vector<int>>([](Connection& c) { return detail::recorded_versions(c); });
}

std::uint64_t Store::committed_batches() const { return m_impl->writer->batches(); }

Status Store::checkpoint() {
  auto r = m_impl->writer->execute<bool>(
      [](Connection& c) -> Result<bool> {
        KPORT_TRY(c.exec("PRAGMA wal_checkpoint(TRUNCATE)"));
        return true;
      },
      true);
  if (!r) return std::move(r).error();
  return {};
}

}  // namespace kport::db
