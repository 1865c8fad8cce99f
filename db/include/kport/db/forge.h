// Records of forge connections, forge reports and the outgoing delivery queue
// (migration 0012). Conventions as in records.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kport/db/records.h"

namespace kport::db {

// Where a repository's pipelines are reported. kind: github, gitea or gitlab; mode:
// check (GitHub check runs) or status (commit statuses, every kind). It authenticates
// with a token or, on GitHub, as a GitHub App (migration 0017: the app's id, the
// installation's id and its private key's file), exactly one of the two. Neither the
// token nor the key is ever stored, only the file each is read from when a call is sent.
struct ForgeConnection {
  std::string repo;        // Repository::name
  std::string kind;        // github | gitea | gitlab
  std::string api_url;     // the API root: https://api.github.com, https://gitea.example/api/v1, ...
  std::string project;     // owner/name (GitHub, Gitea) or the project id or path (GitLab)
  std::string token_file;  // empty for a GitHub App
  std::optional<std::int64_t> app_id, installation_id;  // a GitHub App's, both or neither
  std::string private_key_file;                         // a GitHub App's PEM RSA key; empty for a token
  std::string mode = "status";
  std::optional<std::string> broken_reason;  // set while the forge refuses the token
  std::optional<std::int64_t> broken_ms;
  std::int64_t created_ms = 0, updated_ms = 0;

  bool github_app() const { return app_id.has_value(); }
  // token | github_app
  const char* auth() const { return github_app() ? "github_app" : "token"; }
};

// One outgoing call to enqueue. url is the path under the connection's api_url for a
// forge call (kind check_run or commit_status), the full URL for a webhook.
struct NewDelivery {
  std::string kind;                 // check_run | commit_status | webhook
  std::string subject;              // deliveries of one subject go out in order, one at a time
  std::optional<std::string> repo;  // the forge connection's repository (forge calls)
  std::optional<std::int64_t> pipeline_id;
  // What it reports: pipeline.queued, pipeline.in_progress, pipeline.completed, verdict,
  // regression, bringup.milestone, bringup.regression.
  std::string event;
  std::string commit_sha;
  std::string method = "POST";
  std::string url;
  std::string body;  // JSON text
  int max_attempts = 8;
};

struct Delivery : NewDelivery {
  std::int64_t id = 0;
  std::string state = "pending";  // pending | delivered | failed
  int attempts = 0;
  std::int64_t next_attempt_ms = 0;
  std::optional<int> last_status;  // the last HTTP status answered
  std::string last_error;          // why the last attempt did not deliver (or why it gave up)
  std::int64_t created_ms = 0, updated_ms = 0;
  std::optional<std::int64_t> finished_ms;
};

// What one attempt to send a delivery came to.
struct DeliveryAttempt {
  enum class Outcome {
    delivered,  // 2xx
    retry,      // network error, timeout, 5xx, 429: again at next_attempt_ms, or failed at the last attempt
    failed,     // given up now (another 4xx): the reason stays in last_error
    refused,    // 401/403: the connection is marked broken with `error`; the delivery waits
  };
  std::int64_t id = 0;
  Outcome outcome = Outcome::delivered;
  std::optional<int> status;
  std::string error;
  std::int64_t next_attempt_ms = 0;
  std::optional<std::int64_t> check_run_id;  // a created check run's id, kept for its updates
};

struct DeliveryFilter {
  std::optional<std::string> state, repo, kind;
  std::optional<std::int64_t> pipeline_id;
  int limit = 100;
  std::optional<std::int64_t> before_id;
};

struct DeliveryStats {
  std::map<std::string, std::int64_t> by_state;  // pending, delivered, failed (all three present)
  std::int64_t attempts = 0;                     // attempts made, all deliveries (pruned ones too)
  std::int64_t broken_connections = 0;
  std::int64_t pruned = 0;  // delivered deliveries removed by prune_deliveries, ever
};

// What the notification webhooks were last told of a target's bring-up (migration 0016).
struct BringupMark {
  std::string target;
  std::string repo;  // the library (repository) whose board it is; "" for none
  std::optional<std::string> commit_sha;
  std::string counts_json;              // the stage counts as last told; empty: never
  std::vector<std::string> milestones;  // "stage/level" already announced, each once
};

// A pipeline of a repository with a forge connection, whose report is not completed.
struct PendingReport {
  Pipeline pipeline;
  ForgeConnection connection;
  std::optional<std::string> reported;  // the state last reported; nullopt: never
  std::optional<std::int64_t> check_run_id;
};

}  // namespace kport::db
