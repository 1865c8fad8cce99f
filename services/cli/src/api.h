// The coordinator's REST API as the CLI sees it: one call, one Reply, and the small
// JSON readers every command needs.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "kport/api/fields.h"
#include "kport/common/json_fields.h"
#include "kport/http/client.h"

namespace kport::cli {

struct Reply {
  int status = 0;  // 0: the coordinator could not be reached
  boost::json::value body;
  std::string error;  // transport failure or the server's error message; empty on success
};

class Api {
 public:
  // `ca_file`: for an https:// server, the CA certificates (PEM) to trust; empty: the system store.
  Api(std::string server, std::string token, std::string ca_file = {});
  Reply call(std::string_view method, const std::string& path, const boost::json::value* body = nullptr);
  const std::string& server() const { return m_server; }

 private:
  std::string m_server, m_token;
  http::Client m_client;
};

// The exit code for a failed call: unreachable or refused (401/403/5xx) is 3, a request
// the server found wrong (other 4xx) is 2.
int exit_code_for(const Reply& r);

// Prints "kport CMD: WHAT: <error>" and returns exit_code_for(r).
int report(std::ostream& err, std::string_view cmd, std::string_view what, const Reply& r);

// A 2xx answer read as a kport::api message with `read` (a `T read(api::Fields&)`): an
// answer that is not an object, or a field that does not read, is an Error naming it.
template <typename Read>
auto read_answer(const Reply& r, Read read) -> Result<decltype(read(std::declval<api::Fields&>()))> {
  if (!r.body.is_object()) return make_error(Errc::unavailable, "the answer is not a JSON object");
  return api::parse_with(r.body.as_object(), "", read);
}

// Prints "kport CMD: the coordinator's answer to WHAT does not read: <error>" and
// returns the exit code of an unusable coordinator (3).
int unreadable(std::ostream& err, std::string_view cmd, std::string_view what, const Error& e);

// The string/number under `key`, or empty / `fallback` when missing or of another type.
using kport::json_fields::str;
std::int64_t num(const boost::json::value& v, std::string_view key, std::int64_t fallback = 0);
// A cell: strings as they are, numbers printed, null or missing as "-".
std::string cell(const boost::json::value& v, std::string_view key);

// sm_<2-3 digits>[a|f], e.g. sm_90a.
bool is_target(const std::string& t);

// URL-encodes a query or path component.
std::string encode(std::string_view s);

}  // namespace kport::cli

namespace kport::cli {

// The repository to work on: `repo` when given, else the only one registered. Prints
// why not and answers a non-zero exit code when there is no single answer.
int pick_repo(Api& api, std::string& repo, std::string_view cmd, std::ostream& err);

}  // namespace kport::cli
