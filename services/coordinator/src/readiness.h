// Readiness: is the database answering? /readyz asks it on the worker pool, never on an
// HTTP I/O thread, and answers by a deadline whatever the pool or the database does.
//
// Concurrent probes share one database check: a second probe while a check is pending
// waits for that check's answer (or its own deadline) instead of queueing another, so a
// stuck pool never accumulates probes.
//
// Thread-safety: check() from any thread, never blocks. The destructor stops the deadline
// thread; pending replies whose deadline had not passed are answered 503.
#pragma once

// GCC 12 reports -Wnull-dereference inside inlined Asio executor comparisons (see
// services/http/src/asio.h); silenced for these headers only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#pragma GCC diagnostic pop

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "kport/db/store.h"
#include "kport/http/router.h"

namespace kport::coordinator {

class Readiness {
 public:
  Readiness(db::Store& store, boost::asio::thread_pool& workers, std::chrono::milliseconds deadline);
  ~Readiness();
  Readiness(const Readiness&) = delete;
  Readiness& operator=(const Readiness&) = delete;

  // Replies 200 {"status":"ready",...} once the store answered a read within the
  // deadline; 503 unavailable with the reason otherwise (the store's error, or that no
  // answer came within the deadline).
  void check(http::Reply reply);

  struct Waiter;

 private:
  void run_check();

  db::Store& m_store;
  boost::asio::thread_pool& m_workers;
  const std::chrono::milliseconds m_deadline;
  boost::asio::io_context m_timers{1};  // deadlines fire here, not on the pool they guard
  std::unique_ptr<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> m_guard;
  std::thread m_thread;
  std::mutex m_mu;  // guards m_pending and m_waiters
  bool m_pending = false;
  std::vector<std::shared_ptr<Waiter>> m_waiters;
};

}  // namespace kport::coordinator
