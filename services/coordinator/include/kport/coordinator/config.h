// kport-coordinator's configuration: flags, KPORT_* environment variables and an
// optional config file (see kport::Options for precedence).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kport/common/log.h"
#include "kport/common/result.h"
#include "kport/coordinator/slurm_config.h"

namespace kport::coordinator {

struct Config {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  std::string db_path = "var/kport.db";
  std::string artifact_dir;  // default: <db dir>/artifacts
  std::string web_dir;       // dashboard files; empty: not served ("/" says why)
  // kport's own library manifest (kernels/kport.json): the op families known before any
  // build reports one. Empty: share/kport/kernels/kport.json beside the binary, else the
  // checkout's.
  std::string families_file;
  std::string admin_token;            // empty: generated and written to <db dir>/admin-token
  std::string registration_token;     // empty: generated and written to <db dir>/registration-token
  std::string hook_secret;            // push webhooks; empty: generated into <db dir>/hook-secret
  bool open_reads = true;             // GET needs no token
  int threads = 2;                    // HTTP I/O threads
  int workers = 8;                    // threads for database-bound handlers
  int registration_burst = 20;        // registrations allowed at once ...
  int registrations_per_minute = 60;  // ... and refilled at this rate (429 beyond)
  std::size_t body_limit = 64u << 20;
  std::chrono::milliseconds read_timeout{30'000};
  // Connection fairness (see http::ServerOptions).
  std::size_t max_connections = 10'000;
  std::size_t max_connections_per_address = 256;
  std::size_t reserved_connections = 1'000;
  std::chrono::milliseconds first_request_timeout{5'000};
  std::chrono::milliseconds ready_timeout{1'000};  // /readyz's database check deadline
  std::int64_t lease_ms = 60'000;
  int max_attempts = 3;
  int flake_release_after = 5;          // passing runs in a row that release a flaky case
  std::int64_t retry_base_ms = 10'000;  // backoff after a job's first failed attempt (doubles, jittered)
  std::int64_t retry_max_ms = 600'000;  // longest backoff
  int max_claim_wait_s = 30;
  std::int64_t runner_online_ms = 90'000;
  std::string port_file;  // when set, the bound port is written there (for scripts)
  // HTTPS: PEM certificate (chain) and key, both or neither; neither serves plain HTTP.
  std::string tls_cert;
  std::string tls_key;
  // Reporting back (forge statuses and check runs, notification webhooks), through the
  // durable delivery queue.
  std::string public_url;                     // the dashboard's URL in reports; empty: http(s)://<listen address>
  std::vector<std::string> notify_urls;       // webhooks told of verdicts and regressions
  std::string notify_secret_file;             // their HMAC-SHA256 secret; empty: generated into <db dir>/notify-secret
  std::string notify_secret;                  // read from notify_secret_file at start
  std::string forge_ca_file;                  // https forges whose CA is not in the system store
  std::int64_t delivery_poll_ms = 1'000;      // how often reports and due deliveries are looked at
  std::int64_t delivery_timeout_ms = 10'000;  // one outgoing call, connect to last byte
  std::int64_t delivery_retry_base_ms = 5'000;  // backoff after a failed attempt; doubles
  std::int64_t delivery_retry_max_ms = 600'000;
  int delivery_max_attempts = 10;                         // attempts before a delivery is given up
  std::int64_t delivery_retention_ms = 7 * 86'400'000LL;  // delivered rows older than this are pruned
  std::int64_t delivery_keep = 10'000;                    // and beyond the newest this many
  log::Settings log;                                      // --log-level, --log-format (--log-json: json)
  SlurmConfig slurm;                                      // --slurm-*: runner jobs submitted where work waits
};

// Parses the command line and environment. Sets `help` and leaves the config at its
// defaults when --help or --version was given; `help_text` then holds what to print
// (the usage, or the version line) before exiting 0.
Result<Config> parse_config(int argc, const char* const* argv, bool& help, std::string& help_text);

}  // namespace kport::coordinator
