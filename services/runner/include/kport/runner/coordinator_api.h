// The runner's side of the coordinator's REST API (docs/ARCHITECTURE.md, "How the parts
// talk"): register, long-poll claim, heartbeat, uploads, completion. Every body is a
// kport::api message (runner_protocol.h, job_report.h) written by its to_json.
//
// Every call returns a Result and never throws: transport failures keep the http client's
// codes (unavailable, request_timeout); an HTTP error status becomes an Error with the
// code the status maps to and the server's message; a 2xx answer that does not validate
// (answers.h: not JSON, a field of the wrong type, a missing field) and a 1xx/3xx status
// are unavailable, with the request and what was wrong in the message. Not thread-safe: one CoordinatorApi per
// thread (the heartbeat thread has its own).
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kport/api/build_record.h"
#include "kport/api/job_report.h"
#include "kport/api/runner_protocol.h"
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
  std::string kind;  // "build" or "check"
  std::string commit;
  std::string target;
  int attempt = 0;
  std::optional<std::int64_t> depends_on;  // a check job: the build whose harness it runs
  boost::json::object payload;
};

struct Heartbeat {
  bool cancel_requested = false;
};

// A job the coordinator leased out, by id and attempt.
struct Lease {
  std::int64_t job = 0;
  int attempt = 0;
};

class CoordinatorApi {
 public:
  // `ca_file`: for an https:// server, the CA certificates (PEM) to trust instead of
  // the system store. A refused certificate is unavailable, like any network failure.
  explicit CoordinatorApi(std::string server_url, std::string token = {}, std::string ca_file = {});

  void set_token(std::string token) { m_token = std::move(token); }
  const std::string& server() const { return m_server; }

  Result<Registration> register_runner(const std::string& registration_token, const api::RunnerRegistration& who);
  // Long-polls up to `wait`; nullopt when no job came. When the answer named a job whose
  // id and attempt were readable but the rest was not, `unreadable` receives its lease.
  Result<std::optional<ClaimedJob>> claim(std::chrono::seconds wait, std::optional<Lease>* unreadable = nullptr);
  Result<Heartbeat> heartbeat(std::int64_t job, int attempt);
  Status deregister();

  Status post_build_records(std::int64_t job, int attempt, const std::vector<api::BuildRecordUpload>& records);
  // Uploads into the job attempt this runner holds (the coordinator refuses an upload
  // without a live lease: 403 another runner's job, 409 an attempt that ended).
  Status put_artifact(std::int64_t job, int attempt, const std::string& sha256, const std::string& name,
                      const std::string& kind, std::string_view bytes);
  Status append_log(std::int64_t job, int attempt, std::string_view text);
  Status complete(std::int64_t job, int attempt, bool succeeded, const std::string& reason, bool retry = false);
  // PUT /api/v1/kernels: the harness's instances and, when given, its variants with features.
  Status put_kernels(const api::KernelCatalogUpload& catalog);
  Status post_results(std::int64_t job, int attempt, std::vector<api::ResultUpload> results);
  // The bytes of a stored artifact, verified against `sha256` (unavailable when they differ:
  // a damaged transfer is worth a retry).
  Result<std::string> get_artifact(const std::string& sha256);

  // GET a JSON document (e.g. "/api/v1/pipelines/3"); a body that is not JSON is an Error.
  Result<boost::json::value> get(const std::string& path);
  // GET the body of a 2xx answer as it came, for the answers.h parsers.
  Result<std::string> get_text(const std::string& path);

 private:
  // The body of a 2xx answer.
  Result<std::string> send(std::string_view method, const std::string& path, std::string_view body,
                           const std::string& token, std::chrono::milliseconds timeout = std::chrono::milliseconds{0},
                           std::string_view content_type = "application/json");
  // send(), then the body must be empty or a JSON object (answers.h, parse_ack).
  Status ack(std::string_view method, const std::string& path, std::string_view body,
             std::chrono::milliseconds timeout = std::chrono::milliseconds{0},
             std::string_view content_type = "application/json");
  // ack() of an upload the coordinator stores once per job, attempt and item (results, build
  // records: a batch sent again is answered with what the first one stored), so a batch
  // whose answer did not come (a kept connection closed as the batch left, a restart, a proxy's
  // 503) goes again, up to three times in all.
  Status ack_upload(const std::string& path, std::string_view body);
  std::string m_server;
  std::string m_token;
  http::Client m_client;
};

// Maps an HTTP status to the Errc it stands for (the inverse of errc_http_status).
Errc errc_from_status(int status);

}  // namespace kport::runner
