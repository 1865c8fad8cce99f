#include "kport/common/error.h"

namespace kport {

std::string_view errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::bad_json: return "bad_json";
    case Errc::unauthorized: return "unauthorized";
    case Errc::forbidden: return "forbidden";
    case Errc::not_found: return "not_found";
    case Errc::method_not_allowed: return "method_not_allowed";
    case Errc::request_timeout: return "request_timeout";
    case Errc::conflict: return "conflict";
    case Errc::gone: return "gone";
    case Errc::payload_too_large: return "payload_too_large";
    case Errc::unprocessable: return "unprocessable";
    case Errc::too_many_requests: return "too_many_requests";
    case Errc::unavailable: return "unavailable";
    case Errc::internal: return "internal";
  }
  return "internal";
}

int errc_http_status(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument:
    case Errc::bad_json: return 400;
    case Errc::unauthorized: return 401;
    case Errc::forbidden: return 403;
    case Errc::not_found: return 404;
    case Errc::method_not_allowed: return 405;
    case Errc::request_timeout: return 408;
    case Errc::conflict: return 409;
    case Errc::gone: return 410;
    case Errc::payload_too_large: return 413;
    case Errc::unprocessable: return 422;
    case Errc::too_many_requests: return 429;
    case Errc::unavailable: return 503;
    case Errc::internal: return 500;
  }
  return 500;
}

}  // namespace kport
