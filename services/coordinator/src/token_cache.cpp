// Why a cache and not the store: the question is asked on an HTTP I/O thread before a
// request is dispatched, where waiting on the database would stall every connection of
// that thread; a hash and a map lookup take microseconds.
#include "token_cache.h"

#include <mutex>

#include "kport/common/crypto.h"

namespace kport::coordinator {

void TokenCache::reset(const std::vector<std::pair<std::int64_t, std::string>>& live) {
  std::unique_lock lock(m_mu);
  m_by_hash.clear();
  for (const auto& [id, hash] : live) m_by_hash[hash] = id;
}

void TokenCache::add(std::int64_t runner_id, const std::string& token_sha256) {
  std::unique_lock lock(m_mu);
  m_by_hash[token_sha256] = runner_id;
}

void TokenCache::remove(std::int64_t runner_id) {
  std::unique_lock lock(m_mu);
  std::erase_if(m_by_hash, [runner_id](const auto& kv) { return kv.second == runner_id; });
}

bool TokenCache::knows(std::string_view token) const {
  if (token.empty()) return false;
  const std::string hash = crypto::sha256_hex(token);
  std::shared_lock lock(m_mu);
  return m_by_hash.count(hash) > 0;
}

std::size_t TokenCache::size() const {
  std::shared_lock lock(m_mu);
  return m_by_hash.size();
}

}  // namespace kport::coordinator
