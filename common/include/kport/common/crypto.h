// Hashing and token helpers: SHA-256 (artifacts are addressed by it, tokens are
// stored as it), HMAC-SHA-256 (webhook signatures), random tokens, and a
// constant-time comparison for secrets. All functions are thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kport::crypto {

using Digest = std::array<std::uint8_t, 32>;

// Incremental SHA-256 (FIPS 180-4), for streaming large artifacts.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  Digest finish();

 private:
  void block(const std::uint8_t* p);
  std::uint32_t m_h[8];
  std::uint8_t m_buf[64];
  std::size_t m_buf_len = 0;
  std::uint64_t m_total = 0;
};

Digest sha256(std::string_view data);
std::string sha256_hex(std::string_view data);
Digest hmac_sha256(std::string_view key, std::string_view message);
std::string to_hex(const std::uint8_t* data, std::size_t size);
inline std::string to_hex(const Digest& d) { return to_hex(d.data(), d.size()); }

// True when s is 64 lowercase hex digits.
bool is_sha256_hex(std::string_view s) noexcept;

// Compares two strings in time that depends only on their lengths.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

// A random token of `bytes` bytes from the OS, hex encoded, with an optional prefix.
std::string random_token(std::string_view prefix = {}, std::size_t bytes = 24);

}  // namespace kport::crypto
