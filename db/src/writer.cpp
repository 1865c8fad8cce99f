#include "writer.h"

#include <utility>

#include "kport/common/log.h"

namespace kport::db::detail {

Writer::Writer(std::unique_ptr<Connection> conn, int max_batch, CommitObserver* observer)
    : m_conn(std::move(conn)),
      m_max_batch(static_cast<std::size_t>(max_batch > 0 ? max_batch : 1)),
      m_observer(observer),
      m_thread([this] { loop(); }) {}

Writer::~Writer() { stop(); }

void Writer::stop() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

std::uint64_t Writer::batches() const {
  std::lock_guard lock(m_mutex);
  return m_batches;
}

Status Writer::enqueue(Task task) {
  {
    std::lock_guard lock(m_mutex);
    if (m_stopping) return make_error(Errc::unavailable, "the database is closing; retry later");
    m_queue.push_back(std::move(task));
  }
  m_cv.notify_one();
  return {};
}

void Writer::loop() {
  std::deque<Task> batch;
  for (;;) {
    {
      std::unique_lock lock(m_mutex);
      m_cv.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
      // Stopping still drains: a request accepted by enqueue() is always answered.
      if (m_queue.empty()) return;
      // A standalone task runs alone; otherwise take requests up to the next standalone.
      const bool alone = m_queue.front().standalone;
      do {
        batch.push_back(std::move(m_queue.front()));
        m_queue.pop_front();
      } while (!alone && !m_queue.empty() && batch.size() < m_max_batch && !m_queue.front().standalone);
    }
    if (batch.front().standalone) {
      Task& t = batch.front();
      (void)t.run(*m_conn);
      if (m_observer) {
        (void)m_observer->before_commit(*m_conn);
        m_observer->after_commit();
      }
      t.done(nullptr);
    } else {
      run_batch(batch);
    }
    batch.clear();
  }
}

void Writer::run_batch(std::deque<Task>& batch) {
  // IMMEDIATE takes the write lock up front, so no statement inside can hit SQLITE_BUSY
  // halfway through a batch.
  if (auto begun = m_conn->exec("BEGIN IMMEDIATE"); !begun) {
    for (Task& t : batch) t.done(&begun.error());
    return;
  }
  // A request alone in its batch needs no savepoint: on failure the whole transaction
  // rolls back. That matters for big requests, because SQLite's in-memory sub-journal
  // makes every statement inside a long savepoint cost time proportional to it.
  if (batch.size() == 1) {
    Task& t = batch.front();
    if (auto r = t.run(*m_conn); !r) {
      (void)m_conn->exec("ROLLBACK");
      t.done(nullptr);  // the request's own error is its answer
      return;
    }
  }
  for (Task& t : batch) {
    if (batch.size() == 1) break;
    if (auto sp = m_conn->exec("SAVEPOINT request"); !sp) {
      // Cannot isolate this request: answer it now without running it.
      t.done(&sp.error());
      t.done = nullptr;
      continue;
    }
    if (auto r = t.run(*m_conn); !r) (void)m_conn->exec("ROLLBACK TO request");
    (void)m_conn->exec("RELEASE request");
  }
  // The observer's mark goes in before COMMIT, so no reader can see the commit while
  // the observer still calls its state settled.
  Status observed = m_observer ? m_observer->before_commit(*m_conn) : Status{};
  auto committed = observed ? m_conn->exec("COMMIT") : observed;
  if (!committed) {
    (void)m_conn->exec("ROLLBACK");
    if (m_observer) m_observer->after_commit();
    Error e = make_error(Errc::unavailable, "write not committed: " + committed.error().message);
    log::error("database commit failed", {{"error", e.message}, {"requests", batch.size()}});
    for (Task& t : batch)
      if (t.done) t.done(&e);
    return;
  }
  if (m_observer) m_observer->after_commit();
  {
    std::lock_guard lock(m_mutex);
    ++m_batches;
  }
  for (Task& t : batch)
    if (t.done) t.done(nullptr);
}

}  // namespace kport::db::detail
