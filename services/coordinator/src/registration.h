// The registration token and the rate at which runners may register with it.
//
// One token is valid at a time; rotating it (POST /api/v1/admin/registration-token)
// makes a new one, optionally with an expiry, and the old one stops working at once. The
// current token and its expiry are kept in a 0600 file beside the database, so a restart
// keeps a rotation. Registrations share a token bucket: a burst of `burst`, refilled at
// `per_minute`; beyond it a registration is told when to retry. Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "kport/common/result.h"

namespace kport::coordinator {

class RegistrationGate {
 public:
  struct Token {
    std::string value;
    std::optional<std::int64_t> expires_ms;  // absent: never expires
    bool rotated = false;                    // made by rotate(), not given at start
  };

  // file: where a rotated token is kept (the token's line, then its expiry in unix ms).
  RegistrationGate(Token token, std::filesystem::path file, int burst = 20, int per_minute = 60);

  // Reads a token file written by rotate() (or a plain one-line token file).
  static std::optional<Token> read_file(const std::filesystem::path& file);

  // ok when `presented` is the current, unexpired token and the bucket has room;
  // forbidden (wrong or expired token) or too_many_requests otherwise, with retry_after_s set.
  Status admit(std::string_view presented, std::int64_t now_ms, int& retry_after_s);

  // Whether `presented` is the current, unexpired token; uses up no registration.
  bool is_current(std::string_view presented, std::int64_t now_ms);

  // A new random token replacing the current one; expires_in_s > 0 gives it an expiry.
  Result<Token> rotate(std::optional<std::int64_t> expires_in_s, std::int64_t now_ms);

 private:
  std::mutex m_mu;
  Token m_token;
  std::filesystem::path m_file;
  double m_capacity, m_per_ms, m_tokens;
  std::int64_t m_refilled_ms = 0;
};

}  // namespace kport::coordinator
