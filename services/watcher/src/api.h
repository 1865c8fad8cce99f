// The coordinator's REST API as the watcher uses it: JSON in, JSON out, admin token;
// every answer it acts on is read as a kport::api message.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "kport/api/fields.h"
#include "kport/common/result.h"
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

// An answer read as a kport::api message with `read` (a `T read(api::Fields&)`); `what`
// names the request in the Error ("GET /api/v1/gpus: field 'items[0].drivers' ...").
template <typename Read>
auto read_answer(const boost::json::value& v, std::string_view what, Read read)
    -> Result<decltype(read(std::declval<api::Fields&>()))> {
  if (!v.is_object())
    return make_error(Errc::bad_json, std::string(what) + " answered something that is not an object");
  auto out = api::parse_with(v.as_object(), "", read);
  if (!out.ok()) return make_error(Errc::bad_json, std::string(what) + ": " + out.error().message);
  return out;
}

}  // namespace kport::watcher
