// Request and Response: the plain values a kport HTTP handler receives and returns.
//
// Neither type exposes Boost.Beast, so services compile against this header only.
// Both are ordinary values: not thread-safe, movable, owned by whoever holds them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "kport/common/error.h"

namespace kport::http {

class StopSignal;
class Subscription;

using HeaderList = std::vector<std::pair<std::string, std::string>>;
// Query and path parameters by name; looked up by string_view without a copy of the name.
using ParamMap = std::map<std::string, std::string, std::less<>>;

struct Request {
  std::string method;  // "GET", as sent (upper case by convention)
  std::string target;  // raw request target "/api/v1/results?limit=5"
  std::string path;    // percent-decoded path "/api/v1/results"
  ParamMap query;      // decoded query parameters (last one wins)
  ParamMap params;     // path parameters from the route pattern
  HeaderList headers;  // as received, names in their original case
  std::string body;
  std::string remote;      // peer "127.0.0.1:5555"
  std::string_view route;  // name of the matched route; points into the Router (Server lifetime)
  bool keep_alive = true;
  // Observed by long-poll handlers to reply early when the server stops; never null
  // for requests built by the Server.
  std::shared_ptr<const StopSignal> stop;

  // Case-insensitive header lookup; "" when absent (the first occurrence wins).
  std::string_view header(std::string_view name) const noexcept;
  // A query parameter or `fallback` when absent.
  std::string_view query_or(std::string_view key, std::string_view fallback = {}) const;
  // A path parameter, "" when absent.
  std::string_view param(std::string_view key) const;
  // The media type of Content-Type without parameters, lower case:
  // "application/json; charset=UTF-8" -> "application/json".
  std::string media_type() const;
  // True when the server has begun to stop (see StopSignal).
  bool stopping() const noexcept;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Extra headers (CSP, Cache-Control, Allow, ...). Server and Content-Length are set by
  // the server; a header with CR or LF in its name or value is dropped and logged.
  HeaderList headers;
  // When set, the response is a server-sent event stream: the server writes the
  // headers, then every event the subscription receives, until either side closes.
  // status must be 200 and body is sent as the first chunk (may be empty).
  std::shared_ptr<Subscription> events;
  // When false the server closes the connection after this response.
  bool keep_alive = true;

  Response& set_header(std::string name, std::string value);
};

// {"...json..."} with Content-Type application/json.
Response json_response(int status, const boost::json::value& body);
// 200 with the given value.
inline Response json_ok(const boost::json::value& body) { return json_response(200, body); }
// {"error":{"code":"not_found","message":"..."}} with the status of the error code.
Response error_response(const kport::Error& error);
Response error_response(int status, std::string_view code, std::string_view message);
// A plain body with the given content type (text/plain; charset=utf-8 by default).
Response text_response(int status, std::string body, std::string content_type = "text/plain; charset=utf-8");

}  // namespace kport::http
