// The runner's side of the coordinator's REST API (docs/ARCHITECTURE.md, "How the parts
// talk"): register, long-poll claim, heartbeat, uploads, completion.
//
// Every call returns a Result: transport failures keep the http client's codes
// (unavailable, request_timeout); an HTTP error status becomes an Error with the code
// the status maps to and the server's message. Not thread-safe: one CoordinatorApi per
// thread (the heartbeat thread has its own).
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "kport/common/result.h"
#include "kport/http/client.h"

namespace kport::runner {

struct Registration {
  std::string token;
  std::int64_t runner_id = 0;
  std::chrono::milliseconds heartbeat_interval{10'000};
};

struct ClaimedJob {
  std::int64_t id = 0;
  std::int64_t pipeline = 0;
  std::string kind;    // "build" or "check"
  std::string commit;
  std::string target;
  int attempt = 0;
  std::optional<std::int64_t> depends_on;  // a check job: the build whose harness it runs
  boost::json::object payload;
};

struct Heartbeat {
  bool cancel_requested = false;
};

class CoordinatorApi {
 public:
  explicit CoordinatorApi(std::string server_url, std::string token = {});

  void set_token(std::string token) { m_token = std::move(token); }
  const std::string& server() const { return m_server; }

  Result<Registration> register_runner(const std::string& registration_token, const boost::json::object& body);
  // Long-polls up to `wait`; nullopt when no job came.
  Result<std::optional<ClaimedJob>> claim(std::chrono::seconds wait);
  Result<Heartbeat> heartbeat(std::int64_t job, int attempt);
  Status deregister();

  Status post_build_records(std::int64_t job, int attempt, boost::json::array records);
  Status put_artifact(const std::string& sha256, const std::string& name, const std::string& kind, std::string_view bytes);
  Status append_log(std::int64_t job, int attempt, std::string_view text);
  Status complete(std::int64_t job, int attempt, bool succeeded, const std::string& reason, bool retry = false);
  // PUT /api/v1/kernels: the harness's instances and, when given, its variants with features.
  Status put_kernels(boost::json::array instances, boost::json::array variants = {});
  Status post_results(std::int64_t job, int attempt, boost::json::array results);
  // The bytes of a stored artifact, verified against `sha256` (unavailable when they differ:
  // a damaged transfer is worth a retry).
  Result<std::string> get_artifact(const std::string& sha256);

  // GET a JSON document (e.g. "/api/v1/pipelines/3").
  Result<boost::json::value> get(const std::string& path);

 private:
  Result<boost::json::value> send(std::string_view method, const std::string& path, std::string_view body,
                                  const std::string& token, std::chrono::milliseconds timeout = std::chrono::milliseconds{0},
                                  std::string_view content_type = "application/json");
  std::string m_server;
  std::string m_token;
  http::Client m_client;
};

// Maps an HTTP status to the Errc it stands for (the inverse of errc_http_status).
Errc errc_from_status(int status);

}  // namespace kport::runner
