// A GitHub connection that authenticates as a GitHub App: the app's JWT (RS256, signed by
// kport::http with the key read from its file at send time), its exchange for an
// installation access token (POST {api}/app/installations/{id}/access_tokens), what the
// exchange's answer means, and the installation tokens the sender keeps in memory until
// shortly before they expire. Nothing here logs: the JWT, the key and the installation
// token appear in no message, and an answer's text is quoted only when it failed (a
// failed exchange's answer holds no token).
//
// The functions are pure and thread-safe, except read_private_key (it reads a file);
// InstallationTokens belongs to the sender thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "forge_report.h"
#include "kport/common/result.h"
#include "kport/db/forge.h"

namespace kport::coordinator {

// The largest private key file read (a 4096-bit RSA key in PEM is about 3.3 KiB).
inline constexpr std::size_t k_private_key_limit = 64u << 10;

// The PEM text of a GitHub App's private key file, checked: it exists, the coordinator
// can read it, neither group nor others can (chmod 600), and it holds an unencrypted RSA
// private key. unprocessable naming the file and what to do, never what it holds.
Result<std::string> read_private_key(const std::string& file);

// The claims of an app's JWT made at `now_s` (Unix seconds): iat 60 s back (GitHub's
// allowance for clock drift), exp 9 minutes ahead (GitHub takes 10 at most), iss the app
// id as a string. JSON text, as signed.
std::string app_jwt_claims(std::int64_t app_id, std::int64_t now_s);

// The app's JWT for `c` at `now_s`, signed with `key_pem`.
Result<std::string> app_jwt(const db::ForgeConnection& c, std::string_view key_pem, std::int64_t now_s);

// The exchange of `jwt` for an installation access token, with GitHub's documented
// headers.
OutgoingRequest access_token_request(const db::ForgeConnection& c, const std::string& jwt);

// An installation access token and when the sender asks for the next one.
struct InstallationToken {
  std::string token;
  std::int64_t expires_ms = 0;  // the answer's expires_at
  std::int64_t renew_ms = 0;    // renew_at_ms(when it came, expires_ms)
};

// When a token that came at `now_ms` is renewed: 5 minutes before it expires (GitHub's
// live an hour; a longer life is taken as an hour), or halfway through a shorter life.
std::int64_t renew_at_ms(std::int64_t now_ms, std::int64_t expires_ms);

// "2016-07-11T22:14:10Z" (fractions and a +00:00 zone accepted) as Unix milliseconds.
std::optional<std::int64_t> parse_utc_time(std::string_view s);

// What the exchange's answer (or transport error) means for delivery `d`: the token (a
// 2xx with "token" and a future "expires_at"), or the attempt to record: retry (a
// transport error, 408, 429, a rate limit, 5xx, or a 2xx without a usable token: the
// delivery's backoff, `retry_at_ms`) or refused (401, 403, 404, 422: the app, its key or
// the installation is wrong; the connection is broken with the reason and what to do).
std::variant<InstallationToken, db::DeliveryAttempt> read_access_token_answer(const db::Delivery& d,
                                                                              const OutgoingRequest& request,
                                                                              const Result<ClientAnswer>& answer,
                                                                              std::int64_t now_ms,
                                                                              std::int64_t retry_at_ms);

// The installation tokens the sender holds, one per app connection's credentials (its
// repository, API root, app, installation and key file: a connection put with other
// credentials never gets the old one's token). Not thread-safe: the sender thread's.
class InstallationTokens {
 public:
  // The token held for `c`, when it is not yet due for renewal at `now_ms`.
  std::optional<std::string> find(const db::ForgeConnection& c, std::int64_t now_ms) const;
  void put(const db::ForgeConnection& c, InstallationToken t);
  // Forgets `c`'s token (the forge refused it).
  void drop(const db::ForgeConnection& c);
  std::size_t size() const { return m_tokens.size(); }

 private:
  static std::string key(const db::ForgeConnection& c);
  std::map<std::string, InstallationToken> m_tokens;
};

}  // namespace kport::coordinator
