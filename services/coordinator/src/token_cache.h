// The bearer tokens the coordinator would accept, answerable from memory on an HTTP I/O
// thread: what lets the HTTP server's connection reserve (kept for runners and health
// checks) admit only requests whose token is valid, so a bogus Authorization header
// cannot hold a reserve slot.
//
// Runner tokens are kept as their SHA-256 (as the store keeps them): filled from the
// store at start, added at registration, dropped at deregistration and revocation. The
// admin token and the current registration token are asked of their owners. Thread-safe.
#pragma once

#include <cstdint>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kport::coordinator {

class TokenCache {
 public:
  // Replaces the runner tokens known: (runner id, token SHA-256) of every live runner.
  void reset(const std::vector<std::pair<std::int64_t, std::string>>& live);
  void add(std::int64_t runner_id, const std::string& token_sha256);
  void remove(std::int64_t runner_id);
  // Whether `token` (the plain bearer token) is a live runner's.
  bool knows(std::string_view token) const;
  std::size_t size() const;

 private:
  mutable std::shared_mutex m_mu;
  std::unordered_map<std::string, std::int64_t> m_by_hash;
};

}  // namespace kport::coordinator
