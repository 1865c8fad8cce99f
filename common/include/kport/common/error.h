// Error values shared by every kport library and service.
//
// An Error is an expected failure carried as a value (see result.h). Its code maps to
// exactly one HTTP status, so a library error can travel to a REST client unchanged.
#pragma once

#include <string>
#include <string_view>

namespace kport {

enum class Errc {
  invalid_argument,    // 400: a value the caller sent is wrong
  bad_json,            // 400: the body is not the JSON document expected
  unauthorized,        // 401: no credentials, or unknown ones
  forbidden,           // 403: credentials valid, action not allowed
  not_found,           // 404
  method_not_allowed,  // 405
  request_timeout,     // 408
  conflict,            // 409: state does not allow it (stale lease, duplicate)
  gone,                // 410: it existed but is no longer valid (expired lease)
  payload_too_large,   // 413
  unprocessable,       // 422: well-formed but semantically invalid
  too_many_requests,   // 429: rate limited; retry later
  unavailable,         // 503: shutting down, database busy
  internal,            // 500: a broken invariant
};

// The stable machine-readable name of a code ("not_found"), used in JSON error bodies.
std::string_view errc_name(Errc code) noexcept;
// The HTTP status that a code maps to.
int errc_http_status(Errc code) noexcept;

struct Error {
  Errc code = Errc::internal;
  std::string message;
};

inline Error make_error(Errc code, std::string message) { return Error{code, std::move(message)}; }

}  // namespace kport
