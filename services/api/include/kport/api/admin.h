// The registration token an operator rotates (POST /api/v1/admin/registration-token):
// the request (`RegistrationTokenRotate`: how long the new token lives, none for ever)
// and its answer (`RegistrationToken`: the new token, shown once, and when it expires).
// `kport admin registration-token rotate` writes the request and reads the answer; the
// coordinator reads the request and writes the answer. The wire forms are the contracts
// the OpenAPI document describes (`RegistrationTokenInput`, `RegistrationToken`).
//
// A runner's token revoked (DELETE /api/v1/runners/{id}/token, `TokenRevoked`): the
// coordinator writes it, `kport runners revoke` prints it as it came.
//
// Reading is strict: a field of the wrong type, an expiry outside 1 s .. 10 years or a
// missing or empty token is an invalid_argument Error naming the field ("field
// 'expires_in_s' must be an integer in 1..315360000, got 0"); unknown fields are
// ignored. Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "kport/api/fields.h"
#include "kport/api/job.h"

namespace kport::api {

// The longest life a registration token may be given: ten years, in seconds.
inline constexpr std::int64_t k_registration_token_max_s = 10LL * 365 * 24 * 3600;

struct RegistrationTokenRotate {
  std::optional<std::int64_t> expires_in_s;  // 1 .. k_registration_token_max_s; none: never expires
};

// {} without an expiry, {"expires_in_s": N} with one.
inline boost::json::object to_json(const RegistrationTokenRotate& r) {
  boost::json::object o;
  if (r.expires_in_s) o["expires_in_s"] = *r.expires_in_s;
  return o;
}

inline RegistrationTokenRotate read_registration_token_rotate(Fields& f) {
  return RegistrationTokenRotate{f.opt_int("expires_in_s", 1, k_registration_token_max_s)};
}

inline Result<RegistrationTokenRotate> parse_registration_token_rotate(const boost::json::object& o,
                                                                       std::string where = "") {
  return parse_with(o, std::move(where), read_registration_token_rotate);
}

// The new token (the old one is refused from the answer on) and its expiry.
struct RegistrationToken {
  std::string token;
  std::optional<std::int64_t> expires_ms;  // unix ms; null: never expires
};

inline boost::json::object to_json(const RegistrationToken& t) {
  return boost::json::object{{"token", t.token}, {"expires_ms", detail::or_null(t.expires_ms)}};
}

inline RegistrationToken read_registration_token(Fields& f) {
  RegistrationToken t;
  t.token = f.str("token", 4096);
  if (f.ok() && t.token.empty()) f.fail("token", "must not be empty");
  t.expires_ms = f.opt_int("expires_ms", 0, INT64_MAX);
  return t;
}

inline Result<RegistrationToken> parse_registration_token(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_registration_token);
}

// The runner whose token was revoked (it is deregistered, its held job back in the queue).
struct TokenRevoked {
  std::int64_t runner = 0;
  bool revoked = true;
};

inline boost::json::object to_json(const TokenRevoked& t) {
  return boost::json::object{{"runner", t.runner}, {"revoked", t.revoked}};
}

inline TokenRevoked read_token_revoked(Fields& f) {
  TokenRevoked t;
  t.runner = f.integer("runner");
  t.revoked = f.boolean("revoked", false);
  return t;
}

}  // namespace kport::api
