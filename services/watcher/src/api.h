// The coordinator's REST API as the watcher uses it: JSON in, JSON out, admin token.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "kport/common/result.h"
#include "kport/common/json_fields.h"
#include "kport/http/client.h"

namespace kport::watcher {

class Api {
 public:
  // `ca_file`: for an https:// server, the CA certificates (PEM) to trust; empty: the system store.
  Api(std::string server, std::string token, std::string ca_file = {});
  // The parsed body of a 2xx answer; otherwise an error carrying the server's message
  // (its status mapped back to the nearest Errc) or the transport failure.
  Result<boost::json::value> call(std::string_view method, const std::string& path,
                                  const boost::json::value* body = nullptr);
  Result<boost::json::value> get(const std::string& path) { return call("GET", path); }
  Result<boost::json::value> post(const std::string& path, const boost::json::value& body) {
    return call("POST", path, &body);
  }
  Result<boost::json::value> put(const std::string& path, const boost::json::value& body) {
    return call("PUT", path, &body);
  }

 private:
  std::string m_server, m_token;
  http::Client m_client;
};

// The string under `key` of an object, or "".
using kport::json_fields::str;
// The integer under `key`, or `fallback` when missing or not a number.
std::int64_t num(const boost::json::value& v, std::string_view key, std::int64_t fallback = 0);
// The "items" array of a listing, or an empty one.
const boost::json::array& items(const boost::json::value& v);

}  // namespace kport::watcher
