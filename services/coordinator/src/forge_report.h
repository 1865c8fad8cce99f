// What a push pipeline's report says, and to whom: the forge calls and notification
// webhooks one state change of a pipeline enqueues (as delivery rows), and the HTTP
// request each delivery becomes when it is sent. Pure and thread-safe: the sender
// (delivery_sender.h) reads the store, calls these, and writes the outcome back.
//
// States: queued (no job started), in_progress, completed (every job done). A completed
// pipeline concludes as cancelled (its jobs were cancelled), failure (the verdict fails),
// success (the verdict passes on records) or neutral (insufficient data: no records, or
// the verdict still waits on a re-measure).
//
// GitHub in mode check: a check run named kport (created by POST, then PATCHed by id);
// GitHub in mode status, Gitea and GitLab: a commit status with context/name kport.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kport/common/result.h"
#include "kport/db/forge.h"
#include "kport/http/message.h"
#include "kport/porting/verdict.h"

namespace kport::coordinator {

// The report state of a pipeline's derived status.
std::string report_state(db::PipelineStatus status);

// success, failure, neutral or cancelled (see above).
std::string conclusion_of(db::PipelineStatus status, const porting::Verdict* verdict);

// A line of kernel source a check run points at: a variant whose resources regressed.
struct Annotation {
  std::string path;  // relative to the repository root
  int line = 1;
  std::string title, message;
};

// GitHub takes at most 50 annotations per check run request.
inline constexpr std::size_t k_max_annotations = 50;

struct ReportInputs {
  db::Pipeline pipeline;
  std::optional<db::ForgeConnection> connection;  // none: webhooks only
  std::string state;                              // queued, in_progress or completed
  const porting::Verdict* verdict = nullptr;      // completed: the commit's verdict
  std::string public_url;                         // the dashboard's root, no trailing slash
  std::vector<std::string> notify_urls;
  // The command that reproduces each result a verdict reason names (its figures'
  // "result"), keyed by result id; reasons without one are listed without.
  std::map<std::int64_t, std::string> repro_commands;
  // completed: the source lines of its resource regressions (a check run's
  // output.annotations, the first k_max_annotations).
  std::vector<Annotation> annotations;
  // One line per bisection the commit is part of (app::bisection_line), listed as they
  // stand when the report is written.
  std::vector<std::string> bisections;
  // completed: a short line appended to a commit status's description (a bisection's
  // end), within the 140 characters a status shows.
  std::string status_note;
  int max_attempts = 10;
  std::int64_t now_ms = 0;
};

// The deliveries one state change enqueues: the forge's call (when connected) and, when
// completed, a `verdict` webhook to every notify URL plus a `regression` one when the
// verdict holds regressions or new failures.
std::vector<db::NewDelivery> plan_report(const ReportInputs& in);

// What a bisection's end is told where the push came from: `reports` are the completed
// reports of the bad commit's pipelines (each one's `bisections` already listing the
// ended bisection as it ended, `status_note` its one line), sent again to their forge
// (the check run PATCHed with the summary written again, without annotations, which
// GitHub would add a second time; a commit status posted with the same state and the
// note), each as its pipeline's delivery subject so it follows that pipeline's earlier
// reports; and a `bisection.finished` webhook to every notify URL with the bisection as
// the API answers it.
struct BisectionEndInputs {
  std::vector<ReportInputs> reports;
  std::string commit;          // the bisection's bad commit
  std::string bisection_json;  // GET /api/v1/bisections/{id}'s answer, as text
  std::string public_url;
  std::vector<std::string> notify_urls;
  int max_attempts = 10;
};
std::vector<db::NewDelivery> plan_bisection_end(const BisectionEndInputs& in);

// The check run's title and Markdown summary of a completed pipeline (per target and
// GPU model: new failures and regressions with their figures; what still waits; how to
// reproduce), bounded to GitHub's 65535 characters.
std::string report_title(const std::string& conclusion, const porting::Verdict* verdict);
std::string report_summary(const db::Pipeline& pipeline, const std::string& conclusion, const porting::Verdict* verdict,
                           const std::string& details_url,
                           const std::map<std::int64_t, std::string>& repro_commands = {},
                           const std::vector<std::string>& bisections = {});

// The dashboard page of a commit, and of a pipeline (a check's details_url, a status's
// target_url, a webhook's pipeline.url).
std::string commit_page_url(const std::string& public_url, const std::string& sha);
std::string pipeline_page_url(const std::string& public_url, std::int64_t pipeline_id);

// One HTTP request ready to send. headers hold the token or signature: never log them.
struct OutgoingRequest {
  std::string method, url, body;
  http::HeaderList headers;
};

// The request a forge delivery becomes: the connection's API root joined with the
// delivery's path, the forge's documented headers with `token`; a check_run delivery
// PATCHes check_run_id when its report already created one, else POSTs a new check run
// (head_sha added).
Result<OutgoingRequest> forge_request(const db::Delivery& d, const db::ForgeConnection& connection,
                                      const std::string& token, std::optional<std::int64_t> check_run_id);
// A webhook delivery: the stored body, signed with `secret` (X-Kport-Signature-256:
// sha256=<hex HMAC-SHA256 of the body>), X-Kport-Event and X-Kport-Delivery (the row id,
// the same on every retry).
OutgoingRequest webhook_request(const db::Delivery& d, const std::string& secret);

// An answer as the sender read it (the HTTP client's response, reduced).
struct ClientAnswer {
  int status = 0;
  std::string body;
  std::string retry_after;          // the Retry-After header, when sent
  std::string ratelimit_remaining;  // GitHub's X-RateLimit-Remaining, when sent
};

// What an answer (or a transport error) means for a delivery. A created check run's id
// is read from a 2xx answer to its POST. `github_app`: the request carried a GitHub App's
// installation token (a refusal then says to check the app, not a token file). Never
// throws, whatever the answer holds.
db::DeliveryAttempt classify_answer(const db::Delivery& d, const OutgoingRequest& request,
                                    const Result<ClientAnswer>& answer, std::int64_t retry_at_ms,
                                    bool github_app = false);

// A webhook URL as the API and the logs show it: scheme, host and port, the path
// replaced by "/…" (chat webhooks carry their secret in the path).
std::string redact_url(std::string_view url);

// The backoff before the attempt after `attempts` failed ones: base doubled per attempt,
// at most max; a Retry-After (seconds) asks for longer within the same bound.
std::int64_t delivery_backoff_ms(int attempts, std::int64_t base_ms, std::int64_t max_ms,
                                 std::string_view retry_after = {});

}  // namespace kport::coordinator
