#include "kport/coordinator/config.h"

#include "kport/common/log_options.h"
#include "kport/common/options.h"
#include "slurm_dispatch.h"
#include "static_files.h"

namespace kport::coordinator {

Result<Config> parse_config(int argc, const char* const* argv, bool& help, std::string& help_text) {
  Options o("kport-coordinator",
            "The kport coordinator: REST API, job queue, artifact store and dashboard over one SQLite database.");
  o.add("listen", "KPORT_LISTEN", "127.0.0.1:8080", "HOST:PORT to serve on; port 0 picks a free one (logged)")
      .add("db", "KPORT_DB", "var/kport.db", "SQLite database file (created with its schema when missing)")
      .add("artifacts", "KPORT_ARTIFACTS", "", "artifact directory (default: artifacts/ beside the database)")
      .add("web", "KPORT_WEB", "",
           "directory of the dashboard's static files (default: share/kport/web beside the binary, else the checkout's "
           "web/)")
      .add("families", "KPORT_FAMILIES", "",
           "kport's own library manifest, whose op families are known before any build reports one (default: "
           "share/kport/kernels/kport.json beside the binary, else the checkout's kernels/kport.json)")
      .add("admin-token", "KPORT_ADMIN_TOKEN", "",
           "admin token (default: generated into admin-token beside the database)")
      .add("registration-token", "KPORT_REGISTRATION_TOKEN", "",
           "token runners register with (default: generated into registration-token beside the database)")
      .add("hook-secret", "KPORT_HOOK_SECRET", "",
           "secret push webhooks sign with (default: generated into hook-secret beside the database)")
      .add_flag("open-reads", "KPORT_OPEN_READS", true, "GET requests need no token")
      .add("registration-burst", "KPORT_REGISTRATION_BURST", "20", "registrations allowed at once (429 beyond)")
      .add("registrations-per-minute", "KPORT_REGISTRATIONS_PER_MINUTE", "60",
           "rate at which the registration burst refills")
      .add("threads", "KPORT_THREADS", "2", "HTTP I/O threads")
      .add("workers", "KPORT_WORKERS", "8", "threads for database-bound requests")
      .add("body-limit", "KPORT_BODY_LIMIT", "67108864", "largest request body in bytes (413 beyond)")
      .add("read-timeout-ms", "KPORT_READ_TIMEOUT_MS", "30000", "time a client has to send one request")
      .add("first-request-timeout-ms", "KPORT_FIRST_REQUEST_TIMEOUT_MS", "5000",
           "time a new connection has to send its first request (then it is closed)")
      .add("max-connections", "KPORT_MAX_CONNECTIONS", "10000", "open client connections at most (503 beyond)")
      .add("max-connections-per-address", "KPORT_MAX_CONNECTIONS_PER_ADDRESS", "256",
           "ordinary connections one client address may hold; beyond, only authorized requests and health checks")
      .add("reserved-connections", "KPORT_RESERVED_CONNECTIONS", "1000",
           "connections of max-connections kept for authorized requests and health checks")
      .add("ready-timeout-ms", "KPORT_READY_TIMEOUT_MS", "1000", "deadline of /readyz's database check")
      .add("lease-seconds", "KPORT_LEASE_SECONDS", "60", "job lease a claim grants; heartbeats extend it")
      .add("max-attempts", "KPORT_MAX_ATTEMPTS", "3", "attempts before a job fails")
      .add("retry-base-ms", "KPORT_RETRY_BASE_MS", "10000",
           "backoff after a job's first failed attempt; doubles per attempt, with jitter")
      .add("retry-max-ms", "KPORT_RETRY_MAX_MS", "600000", "longest backoff between attempts of a job")
      .add("flake-release-after", "KPORT_FLAKE_RELEASE_AFTER", "5",
           "passing runs in a row that release a flaky case from quarantine")
      .add("max-claim-wait", "KPORT_MAX_CLAIM_WAIT", "30", "longest long-poll of a claim, seconds")
      .add("runner-online-seconds", "KPORT_RUNNER_ONLINE_SECONDS", "90", "a runner is online if heard from within this")
      .add("port-file", "KPORT_PORT_FILE", "", "write the bound port to this file once listening")
      .add("tls-cert", "KPORT_TLS_CERT", "",
           "serve HTTPS with this PEM certificate (chain, leaf first); needs --tls-key (default: plain HTTP)")
      .add("tls-key", "KPORT_TLS_KEY", "", "the PEM private key of --tls-cert")
      .add("public-url", "KPORT_PUBLIC_URL", "",
           "the dashboard's URL as forges and webhooks link to it (default: the listen address)")
      .add("notify-urls", "KPORT_NOTIFY_URLS", "",
           "comma-separated webhook URLs told of verdicts and regressions (JSON, signed X-Kport-Signature-256)")
      .add("notify-secret-file", "KPORT_NOTIFY_SECRET_FILE", "",
           "file holding the notification webhooks' HMAC secret (default: notify-secret beside the database)")
      .add("forge-ca-file", "KPORT_FORGE_CA_FILE", "",
           "PEM CA certificates of https forges and webhooks not in the system store")
      .add("delivery-poll-ms", "KPORT_DELIVERY_POLL_MS", "1000",
           "how often pipeline reports and due deliveries are looked at")
      .add("delivery-timeout-ms", "KPORT_DELIVERY_TIMEOUT_MS", "10000", "time one outgoing call may take")
      .add("delivery-retry-base-ms", "KPORT_DELIVERY_RETRY_BASE_MS", "5000",
           "backoff after a delivery's failed attempt (network error, 5xx); doubles per attempt")
      .add("delivery-retry-max-ms", "KPORT_DELIVERY_RETRY_MAX_MS", "600000",
           "longest backoff between attempts of a delivery")
      .add("delivery-max-attempts", "KPORT_DELIVERY_MAX_ATTEMPTS", "10", "attempts before a delivery is given up")
      .add("delivery-retention-ms", "KPORT_DELIVERY_RETENTION_MS", "604800000",
           "delivered deliveries older than this are removed (failed and pending ones are kept)")
      .add("delivery-keep", "KPORT_DELIVERY_KEEP", "10000", "delivered deliveries kept at most (the newest)")
      .add_flag("log-json", "KPORT_LOG_JSON", false, "the same as --log-format json (kept for existing units)");
  log::add_options(o);
  declare_slurm_options(o);
  KPORT_TRY(o.parse(argc, argv));
  help = o.help_requested() || o.version_requested();
  help_text = o.version_requested() ? o.version_text() : o.help_text();
  Config c;
  if (help) return c;
  if (!o.positional().empty())
    return make_error(Errc::invalid_argument, "unexpected argument '" + o.positional().front() + "'; see --help");
  auto hp = parse_host_port(o.get("listen"));
  if (!hp) return make_error(Errc::invalid_argument, "--listen: " + hp.error().message);
  c.host = hp->first;
  c.port = hp->second;
  c.db_path = o.get("db");
  if (c.db_path.empty()) return make_error(Errc::invalid_argument, "--db must name a file");
  c.artifact_dir = o.get("artifacts");
  c.web_dir = o.get("web").empty() ? find_dashboard() : o.get("web");
  c.families_file = o.get("families");
  c.admin_token = o.get("admin-token");
  c.registration_token = o.get("registration-token");
  c.hook_secret = o.get("hook-secret");
  c.open_reads = o.flag("open-reads");
  auto threads = o.integer("threads", 1, 256);
  auto workers = o.integer("workers", 1, 256);
  auto body = o.integer("body-limit", 1024, std::int64_t{1} << 34);
  auto read_timeout = o.integer("read-timeout-ms", 100, 3'600'000);
  auto lease = o.integer("lease-seconds", 1, 86'400);
  auto first = o.integer("first-request-timeout-ms", 100, 3'600'000);
  auto max_conn = o.integer("max-connections", 1, 1'000'000);
  auto per_addr = o.integer("max-connections-per-address", 1, 1'000'000);
  auto reserved = o.integer("reserved-connections", 0, 1'000'000);
  auto ready = o.integer("ready-timeout-ms", 10, 60'000);
  auto attempts = o.integer("max-attempts", 1, 100);
  auto wait = o.integer("max-claim-wait", 0, 300);
  auto online = o.integer("runner-online-seconds", 1, 86'400);
  auto burst = o.integer("registration-burst", 1, 1'000'000);
  auto per_minute = o.integer("registrations-per-minute", 1, 1'000'000);
  auto retry_base = o.integer("retry-base-ms", 0, 86'400'000);
  auto retry_max = o.integer("retry-max-ms", 0, 86'400'000);
  auto d_poll = o.integer("delivery-poll-ms", 10, 3'600'000);
  auto d_timeout = o.integer("delivery-timeout-ms", 100, 600'000);
  auto d_base = o.integer("delivery-retry-base-ms", 0, 86'400'000);
  auto d_max = o.integer("delivery-retry-max-ms", 0, 86'400'000);
  auto d_attempts = o.integer("delivery-max-attempts", 1, 1000);
  auto d_retention = o.integer("delivery-retention-ms", 0, 3'650LL * 86'400'000);
  auto d_keep = o.integer("delivery-keep", 0, 100'000'000);
  for (auto* r : {&d_poll, &d_timeout, &d_base, &d_max, &d_attempts, &d_retention, &d_keep})
    if (!r->ok()) return r->error();
  c.delivery_retention_ms = *d_retention;
  c.delivery_keep = *d_keep;
  c.delivery_poll_ms = *d_poll;
  c.delivery_timeout_ms = *d_timeout;
  c.delivery_retry_base_ms = *d_base;
  c.delivery_retry_max_ms = *d_max;
  c.delivery_max_attempts = static_cast<int>(*d_attempts);
  c.public_url = o.get("public-url");
  while (!c.public_url.empty() && c.public_url.back() == '/') c.public_url.pop_back();
  for (std::string_view rest = o.get("notify-urls"); !rest.empty();) {
    const auto comma = rest.find(',');
    std::string one(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    while (!one.empty() && one.front() == ' ') one.erase(0, 1);
    while (!one.empty() && one.back() == ' ') one.pop_back();
    if (one.empty()) continue;
    if (one.rfind("http://", 0) != 0 && one.rfind("https://", 0) != 0)
      return make_error(Errc::invalid_argument, "--notify-urls: '" + one + "' is not an http:// or https:// URL");
    c.notify_urls.push_back(std::move(one));
  }
  c.notify_secret_file = o.get("notify-secret-file");
  c.forge_ca_file = o.get("forge-ca-file");
  auto release = o.integer("flake-release-after", 1, 1000);
  for (auto* r : {&threads, &workers, &body, &read_timeout, &lease, &attempts, &wait, &online, &first, &max_conn,
                  &per_addr, &reserved, &ready, &burst, &per_minute, &retry_base, &retry_max, &release})
    if (!r->ok()) return r->error();
  if (*reserved >= *max_conn)
    return make_error(Errc::invalid_argument, "--reserved-connections (" + std::to_string(*reserved) +
                                                  ") must be below --max-connections (" + std::to_string(*max_conn) +
                                                  ")");
  c.first_request_timeout = std::chrono::milliseconds(*first);
  c.max_connections = static_cast<std::size_t>(*max_conn);
  c.max_connections_per_address = static_cast<std::size_t>(*per_addr);
  c.reserved_connections = static_cast<std::size_t>(*reserved);
  c.ready_timeout = std::chrono::milliseconds(*ready);
  c.threads = static_cast<int>(*threads);
  c.workers = static_cast<int>(*workers);
  c.body_limit = static_cast<std::size_t>(*body);
  c.read_timeout = std::chrono::milliseconds(*read_timeout);
  c.lease_ms = *lease * 1000;
  c.max_attempts = static_cast<int>(*attempts);
  c.max_claim_wait_s = static_cast<int>(*wait);
  c.runner_online_ms = *online * 1000;
  c.registration_burst = static_cast<int>(*burst);
  c.registrations_per_minute = static_cast<int>(*per_minute);
  c.retry_base_ms = *retry_base;
  c.retry_max_ms = *retry_max;
  c.flake_release_after = static_cast<int>(*release);
  c.port_file = o.get("port-file");
  c.tls_cert = o.get("tls-cert");
  c.tls_key = o.get("tls-key");
  if (c.tls_cert.empty() != c.tls_key.empty())
    return make_error(Errc::invalid_argument, std::string("HTTPS needs both --tls-cert and --tls-key; ") +
                                                  (c.tls_cert.empty() ? "--tls-cert" : "--tls-key") + " is missing");
  auto log = log::read_options(o);
  if (!log) return log.error();
  c.log = *log;
  if (o.flag("log-json")) c.log.format = log::Format::json;
  KPORT_TRY(read_slurm_options(o, c.slurm));
  return c;
}

}  // namespace kport::coordinator
