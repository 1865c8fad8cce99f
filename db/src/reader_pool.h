// A fixed pool of read-only connections. acquire() blocks until one is free and
// returns a lease that gives it back on destruction. Thread-safe.
//
// In WAL mode readers never block the writer nor each other; each read transaction
// sees the database as of its start, which includes every acknowledged write.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "sqlite.h"

namespace kport::db::detail {

class ReaderPool {
 public:
  class Lease {
   public:
    Lease(ReaderPool* pool, std::unique_ptr<Connection> conn) : m_pool(pool), m_conn(std::move(conn)) {}
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease() {
      if (m_conn) m_pool->give_back(std::move(m_conn));
    }
    Connection& operator*() { return *m_conn; }
    Connection* operator->() { return m_conn.get(); }

   private:
    ReaderPool* m_pool;
    std::unique_ptr<Connection> m_conn;
  };

  explicit ReaderPool(std::vector<std::unique_ptr<Connection>> conns) : m_free(std::move(conns)) {}
  Lease acquire();

 private:
  void give_back(std::unique_ptr<Connection> conn);
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::vector<std::unique_ptr<Connection>> m_free;
};

}  // namespace kport::db::detail
