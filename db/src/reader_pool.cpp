#include "reader_pool.h"

namespace kport::db::detail {

ReaderPool::Lease ReaderPool::acquire() {
  std::unique_lock lock(m_mutex);
  m_cv.wait(lock, [this] { return !m_free.empty(); });
  auto conn = std::move(m_free.back());
  m_free.pop_back();
  return Lease(this, std::move(conn));
}

void ReaderPool::give_back(std::unique_ptr<Connection> conn) {
  {
    std::lock_guard lock(m_mutex);
    m_free.push_back(std::move(conn));
  }
  m_cv.notify_one();
}

}  // namespace kport::db::detail
