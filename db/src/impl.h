// Store::Impl: the connections and the plumbing every Store method goes through.
// Private to db/; the domain .cpp files add Store methods on top of read() / write().
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "kport/db/retry.h"
#include "best_versions.h"
#include "kport/db/store.h"
#include "reader_pool.h"
#include "sqlite.h"
#include "writer.h"

namespace kport::db {

class Store::Impl {
 public:
  Options options;
  // Before the writer, which reports every commit to it, so it outlives the writer.
  std::unique_ptr<detail::BestVersions> best_versions;
  std::unique_ptr<detail::Writer> writer;
  std::unique_ptr<detail::ReaderPool> readers;

  std::int64_t now() const { return options.env->now_unix_ms(); }
  std::int64_t online_since(std::int64_t now_ms) const { return now_ms - options.runner_online_ms; }
  // How long a job whose attempt `failed_attempt` just ended waits before its next.
  RetryDelay backoff(int failed_attempt) const { return retry_delay(options.retry, failed_attempt, options.jitter()); }

  // Runs fn on the writer thread inside a group-committed transaction; returns after
  // the commit.
  template <typename T, typename F>
  Result<T> write(F&& fn) {
    return writer->execute<T>(std::function<Result<T>(detail::Connection&)>(std::forward<F>(fn)));
  }

  // Runs fn on a pooled reader inside one read transaction (one consistent snapshot).
  template <typename T, typename F>
  Result<T> read(F&& fn) {
    auto conn = readers->acquire();
    if (auto begun = conn->exec("BEGIN"); !begun) return std::move(begun).error();
    Result<T> out = fn(*conn);
    (void)conn->exec("COMMIT");
    return out;
  }
};

}  // namespace kport::db
