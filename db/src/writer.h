// The single writer: one connection, one thread, group commit.
//
// Callers hand a function to execute(); the writer thread takes every request queued
// at that moment (up to max_batch), runs them in one transaction, each inside its own
// savepoint so a failing request is rolled back alone, commits, and only then wakes
// the callers. One fsync thus covers many writes, and no caller hears "ok" before its
// write is durable. execute() blocks; it is thread-safe. After stop(), or when the
// commit itself fails, callers get `unavailable`.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "kport/common/result.h"
#include "sqlite.h"

namespace kport::db::detail {

// Told about every commit on the writer thread: before_commit() inside the batch's
// transaction once its requests ran (an error rolls the whole batch back and answers
// every request `unavailable`), after_commit() once the COMMIT or ROLLBACK returned,
// before any caller of the batch hears back. A standalone task (outside a transaction)
// is followed by both.
class CommitObserver {
 public:
  virtual ~CommitObserver() = default;
  virtual Status before_commit(Connection& conn) = 0;
  virtual void after_commit() = 0;
};

class Writer {
 public:
  // `observer` (may be null) must outlive the Writer.
  Writer(std::unique_ptr<Connection> conn, int max_batch, CommitObserver* observer = nullptr);
  ~Writer();  // stop(): drains what is queued, then joins
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // standalone: run alone, outside any transaction (WAL checkpoints need that).
  template <typename T>
  Result<T> execute(std::function<Result<T>(Connection&)> fn, bool standalone = false) {
    auto slot = std::make_shared<std::optional<Result<T>>>();
    auto promise = std::make_shared<std::promise<Result<T>>>();
    auto future = promise->get_future();
    Task task;
    task.standalone = standalone;
    task.run = [fn = std::move(fn), slot](Connection& conn) -> Status {
      Result<T> r = fn(conn);
      Status status = r.ok() ? Status{} : Status{r.error()};
      slot->emplace(std::move(r));
      return status;
    };
    task.done = [slot, promise](const Error* batch_error) {
      if (batch_error)
        promise->set_value(*batch_error);
      else
        promise->set_value(std::move(**slot));
    };
    if (auto queued = enqueue(std::move(task)); !queued) return std::move(queued).error();
    return future.get();
  }

  void stop();
  // The connection, for the owner to use once stop() returned.
  Connection& connection() { return *m_conn; }
  // Batches committed so far (for tests and metrics).
  std::uint64_t batches() const;

 private:
  struct Task {
    std::function<Status(Connection&)> run;
    std::function<void(const Error*)> done;  // batch_error: commit failed, result void
    bool standalone = false;
  };
  Status enqueue(Task task);
  void loop();
  void run_batch(std::deque<Task>& batch);

  std::unique_ptr<Connection> m_conn;
  const std::size_t m_max_batch;
  CommitObserver* const m_observer;
  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<Task> m_queue;
  bool m_stopping = false;
  std::uint64_t m_batches = 0;
  std::thread m_thread;
};

}  // namespace kport::db::detail
