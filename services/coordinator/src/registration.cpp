#include "registration.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "kport/common/crypto.h"

namespace kport::coordinator {
namespace fs = std::filesystem;

RegistrationGate::RegistrationGate(Token token, fs::path file, int burst, int per_minute)
    : m_token(std::move(token)),
      m_file(std::move(file)),
      m_capacity(std::max(1, burst)),
      m_per_ms(std::max(1, per_minute) / 60'000.0),
      m_tokens(m_capacity) {}

std::optional<RegistrationGate::Token> RegistrationGate::read_file(const fs::path& file) {
  std::ifstream in(file);
  Token t;
  if (!std::getline(in, t.value) || t.value.empty()) return std::nullopt;
  std::string expiry;
  if (std::getline(in, expiry) && !expiry.empty()) {
    // The second line marks a rotation: the expiry in unix ms, 0 for none.
    t.rotated = true;
    try {
      if (auto ms = std::stoll(expiry); ms > 0) t.expires_ms = ms;
    } catch (const std::exception&) {
      return std::nullopt;  // a damaged file is not a token that never expires
    }
  }
  return t;
}

Status RegistrationGate::admit(std::string_view presented, std::int64_t now_ms, int& retry_after_s) {
  std::lock_guard lock(m_mu);
  retry_after_s = 0;
  if (!crypto::constant_time_equal(presented, m_token.value))
    return make_error(Errc::forbidden, "registration token is not valid (an admin may have rotated it)");
  if (m_token.expires_ms && now_ms >= *m_token.expires_ms)
    return make_error(Errc::forbidden,
                      "registration token expired; an admin makes a new one with "
                      "POST /api/v1/admin/registration-token");
  // The bucket is checked after the token, so a caller without the token cannot use up
  // the registrations of the runners that have it.
  if (m_refilled_ms == 0) m_refilled_ms = now_ms;
  m_tokens = std::min(m_capacity, m_tokens + static_cast<double>(now_ms - m_refilled_ms) * m_per_ms);
  m_refilled_ms = now_ms;
  if (m_tokens < 1.0) {
    retry_after_s = std::max(1, static_cast<int>(std::ceil((1.0 - m_tokens) / m_per_ms / 1000.0)));
    return make_error(Errc::too_many_requests,
                      "too many registrations; retry in " + std::to_string(retry_after_s) + " s");
  }
  m_tokens -= 1.0;
  return {};
}

bool RegistrationGate::is_current(std::string_view presented, std::int64_t now_ms) {
  std::lock_guard lock(m_mu);
  return crypto::constant_time_equal(presented, m_token.value) && (!m_token.expires_ms || now_ms < *m_token.expires_ms);
}

Result<RegistrationGate::Token> RegistrationGate::rotate(std::optional<std::int64_t> expires_in_s,
                                                         std::int64_t now_ms) {
  Token t{crypto::random_token("kpreg_"), std::nullopt, true};
  if (expires_in_s && *expires_in_s > 0) t.expires_ms = now_ms + *expires_in_s * 1000;
  // Written to a new file and renamed, so a crash leaves the old token or the new one.
  const fs::path tmp = m_file.string() + ".new";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << t.value << "\n";
    out << t.expires_ms.value_or(0) << "\n";
    if (!out) return make_error(Errc::unavailable, "cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write, ec);
  fs::rename(tmp, m_file, ec);
  if (ec) return make_error(Errc::unavailable, "cannot replace " + m_file.string() + ": " + ec.message());
  std::lock_guard lock(m_mu);
  m_token = t;
  return t;
}

}  // namespace kport::coordinator
