#include "delivery_sender.h"

#include <fstream>
#include <sstream>

#include "app/bisections.h"
#include "forge_report.h"
#include "github_app.h"
#include "hooks_and_verdicts.h"
#include "kport/common/clock.h"
#include "kport/common/log.h"
#include "kport/http/client.h"
#include "reproduce.h"

namespace kport::coordinator {

namespace {

constexpr std::size_t k_answer_limit = 1u << 20;  // a forge's answer we read at most
constexpr std::size_t k_token_limit = 16u << 10;

// The token of a connection, first line of its file, whitespace trimmed. The error says
// which file, never what it held.
Result<std::string> read_token(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return make_error(Errc::unavailable,
                      "cannot read the token file " + file + "; create it (mode 0600) with the forge token");
  std::string token;
  std::getline(in, token);
  if (token.size() > k_token_limit)
    return make_error(Errc::invalid_argument, "the token file " + file + " is too long to hold a token");
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
  if (token.empty())
    return make_error(Errc::invalid_argument, "the token file " + file + " is empty; write the forge token into it");
  return token;
}

constexpr std::size_t k_repro_max = 20;
constexpr std::int64_t k_prune_every_ms = 60'000;  // how often delivered rows are pruned, at most
constexpr std::int64_t k_remeasure_wait_ms =
    30'000;  // how long a completed report waits for its re-measures  // commands in one summary at most

}  // namespace

std::map<std::int64_t, std::string> verdict_repro_commands(Context& ctx, const porting::Verdict& v) {
  std::map<std::int64_t, std::string> out;
  for (const auto& r : v.reasons) {
    if (out.size() >= k_repro_max) break;
    auto id = r.figures.find("result");
    if (id == r.figures.end() || !std::holds_alternative<std::int64_t>(id->second)) continue;
    auto result = ctx.store->get_result(std::get<std::int64_t>(id->second));
    if (!result.ok() || !*result) continue;
    out[(*result)->id] = reproduce_command(**result, r.kind == "perf_regression", ctx.config.public_url);
  }
  return out;
}

DeliverySender::DeliverySender(Context& ctx) : m_ctx(ctx) {}

DeliverySender::~DeliverySender() { stop(); }

void DeliverySender::start() {
  refresh_metrics();
  m_thread = std::thread([this] { run(); });
}

void DeliverySender::stop() {
  {
    std::lock_guard lock(m_mu);
    m_stopping = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void DeliverySender::poke() {
  {
    std::lock_guard lock(m_mu);
    m_poked = true;
  }
  m_cv.notify_all();
}

std::string DeliverySender::metrics() const {
  std::lock_guard lock(m_mu);
  return m_metrics;
}

void DeliverySender::run() {
  const auto poll = std::chrono::milliseconds(m_ctx.config.delivery_poll_ms);
  std::unique_lock lock(m_mu);
  while (!m_stopping) {
    m_poked = false;
    lock.unlock();
    // An exception here would end the thread and, with it, every report: log it and go on.
    try {
      report_round();
      send_round();
      prune_round();
      refresh_metrics();
    } catch (const std::exception& e) {
      log::error("delivery round failed", {{"error", e.what()}});
    }
    lock.lock();
    m_cv.wait_for(lock, poll, [this] { return m_stopping || m_poked; });
  }
}

// Moves each open report to its pipeline's state, enqueueing what that change says.
void DeliverySender::report_round() {
  auto pending = m_ctx.store->pending_reports(200);
  if (!pending.ok()) return log::warn("pipeline reports not read", {{"error", pending.error().message}});
  for (const auto& pr : *pending) {
    const std::string state = report_state(pr.pipeline.status);
    if (pr.reported && *pr.reported == state) continue;
    std::optional<Verdict> verdict;
    if (state == "completed") {
      auto v = commit_verdict(m_ctx, pr.pipeline.commit_sha);
      if (!v.ok()) {
        log::warn("verdict for the report failed; tried again next round",
                  {{"pipeline", pr.pipeline.id}, {"error", v.error().message}});
        continue;
      }
      verdict = std::move(*v);
      // The check that ends a pipeline may ask for re-measures, queued into the same
      // pipeline right after its completion: its verdict is not final yet, so the report
      // waits for them (a bounded while, should they never come).
      if (!verdict->remeasure.empty()) {
        const std::int64_t now = now_unix_ms();
        auto [it, fresh] = m_deferred.try_emplace(pr.pipeline.id, now);
        if (fresh || now - it->second < k_remeasure_wait_ms) continue;
      }
      m_deferred.erase(pr.pipeline.id);
    }
    ReportInputs in;
    in.pipeline = pr.pipeline;
    if (!pr.connection.kind.empty()) in.connection = pr.connection;
    in.state = state;
    in.verdict = verdict ? &*verdict : nullptr;
    in.public_url = m_ctx.config.public_url;
    in.notify_urls = m_ctx.config.notify_urls;
    if (verdict) in.repro_commands = verdict_repro_commands(m_ctx, *verdict);
    if (verdict && pr.connection.kind == "github" && pr.connection.mode == "check")
      in.annotations = annotations(*verdict, pr.pipeline.commit_sha);
    db::BisectionFilter bf;
    bf.commit = pr.pipeline.commit_sha;
    bf.limit = 20;
    if (auto bis = m_ctx.store->list_bisections(bf); bis.ok())
      for (const auto& b : bis->items) in.bisections.push_back(app::bisection_line(b, m_ctx.config.public_url));
    in.max_attempts = m_ctx.config.delivery_max_attempts;
    in.now_ms = now_unix_ms();
    auto advanced = m_ctx.store->advance_report(pr.pipeline.id, state, plan_report(in));
    if (!advanced.ok())
      log::warn("pipeline report not advanced", {{"pipeline", pr.pipeline.id}, {"error", advanced.error().message}});
    else if (*advanced) {
      log::info("pipeline report queued", {{"pipeline", pr.pipeline.id}, {"state", state}});
      m_ctx.events->publish(
          "deliveries", "delivery",
          boost::json::serialize(boost::json::object{{"pipeline", pr.pipeline.id}, {"report", state}}));
    }
  }
}

void DeliverySender::send_round() {
  http::ClientOptions opts;
  opts.timeout = std::chrono::milliseconds(m_ctx.config.delivery_timeout_ms);
  opts.body_limit = k_answer_limit;
  opts.ca_file = m_ctx.config.forge_ca_file;
  http::Client client(opts);
  for (;;) {
    auto due = m_ctx.store->due_deliveries(now_unix_ms(), 32);
    if (!due.ok()) return log::warn("due deliveries not read", {{"error", due.error().message}});
    if (due->empty()) return;
    for (const auto& [d, check_run_id] : *due) {
      {
        std::lock_guard lock(m_mu);
        if (m_stopping) return;
      }
      db::DeliveryAttempt attempt;
      attempt.id = d.id;
      const std::int64_t retry_at =
          now_unix_ms() +
          delivery_backoff_ms(d.attempts + 1, m_ctx.config.delivery_retry_base_ms, m_ctx.config.delivery_retry_max_ms);
      Result<OutgoingRequest> request = make_error(Errc::internal, "no request");
      std::optional<db::ForgeConnection> connection;
      bool exchanged = false;  // an app connection's installation token came for this attempt
      if (d.kind == "webhook") {
        request = webhook_request(d, m_ctx.config.notify_secret);
      } else {
        auto conn = d.repo ? m_ctx.store->get_forge_connection(*d.repo)
                           : Result<std::optional<db::ForgeConnection>>(std::nullopt);
        if (!conn.ok()) return log::warn("forge connection not read", {{"error", conn.error().message}});
        connection = std::move(*conn);
        std::optional<std::string> token;
        if (!connection) {
          attempt.outcome = db::DeliveryAttempt::Outcome::failed;
          attempt.error = "repository '" + d.repo.value_or("") + "' has no forge connection any more";
        } else if (connection->github_app()) {
          token = installation_token(client, d, *connection, retry_at, false, attempt, exchanged);
        } else if (auto read = read_token(connection->token_file); !read.ok()) {
          attempt.outcome = db::DeliveryAttempt::Outcome::refused;
          attempt.error = read.error().message;
        } else {
          token = std::move(*read);
        }
        if (token) {
          request = forge_request(d, *connection, *token, check_run_id);
          if (!request.ok()) {
            attempt.outcome = db::DeliveryAttempt::Outcome::failed;
            attempt.error = request.error().message;
          }
        }
      }
      if (request.ok()) {
        const bool app = connection && connection->github_app();
        attempt = send(client, d, *request, retry_at, app);
        // An installation token the forge no longer takes (revoked, or expired early) is
        // dropped and the call made once more with a fresh one before the connection is
        // called broken.
        if (app && !exchanged && attempt.outcome == db::DeliveryAttempt::Outcome::refused && attempt.status == 401) {
          log::info("installation token refused; asking for a fresh one", {{"repo", connection->repo}});
          auto token = installation_token(client, d, *connection, retry_at, true, attempt, exchanged);
          if (token) request = forge_request(d, *connection, *token, check_run_id);
          if (token && request.ok()) attempt = send(client, d, *request, retry_at, app);
        }
        // A token the forge refused is not offered again, not even after the connection is
        // put again.
        if (app && attempt.outcome == db::DeliveryAttempt::Outcome::refused) m_app_tokens.drop(*connection);
      }
      using Outcome = db::DeliveryAttempt::Outcome;
      const char* outcome = attempt.outcome == Outcome::delivered ? "delivered"
                            : attempt.outcome == Outcome::retry   ? "retry"
                            : attempt.outcome == Outcome::refused ? "refused"
                                                                  : "failed";
      if (attempt.outcome == Outcome::delivered)
        log::info("delivery sent",
                  {{"delivery", d.id}, {"kind", d.kind}, {"event", d.event}, {"status", attempt.status.value_or(0)}});
      else
        log::warn("delivery not sent",
                  {{"delivery", d.id}, {"kind", d.kind}, {"outcome", outcome}, {"error", attempt.error}});
      if (auto st = m_ctx.store->record_delivery_attempt(attempt); !st.ok())
        return log::warn("delivery attempt not recorded", {{"delivery", d.id}, {"error", st.error().message}});
      m_ctx.events->publish("deliveries", "delivery",
                            boost::json::serialize(boost::json::object{{"id", d.id}, {"outcome", outcome}}));
    }
  }
}

db::DeliveryAttempt DeliverySender::send(http::Client& client, const db::Delivery& d, const OutgoingRequest& request,
                                         std::int64_t retry_at, bool github_app) {
  std::string retry_after;
  auto answer = fetch(client, request);
  if (answer.ok()) retry_after = answer->retry_after;
  const std::int64_t at = retry_after.empty()
                              ? retry_at
                              : now_unix_ms() + delivery_backoff_ms(d.attempts + 1, m_ctx.config.delivery_retry_base_ms,
                                                                    m_ctx.config.delivery_retry_max_ms, retry_after);
  return classify_answer(d, request, answer, at, github_app);
}

Result<ClientAnswer> DeliverySender::fetch(http::Client& client, const OutgoingRequest& request) {
  auto res = client.fetch(request.method, request.url, request.body, request.headers);
  if (!res.ok()) {
    client.close();  // a connection that failed once is not reused
    return std::move(res).error();
  }
  return ClientAnswer{res->status, std::move(res->body), std::string(res->header("Retry-After")),
                      std::string(res->header("X-RateLimit-Remaining"))};
}

std::optional<std::string> DeliverySender::installation_token(http::Client& client, const db::Delivery& d,
                                                              const db::ForgeConnection& c, std::int64_t retry_at,
                                                              bool renew, db::DeliveryAttempt& failed,
                                                              bool& exchanged) {
  if (!renew)
    if (auto held = m_app_tokens.find(c, now_unix_ms())) return held;
  m_app_tokens.drop(c);
  exchanged = true;
  const std::string again = "; then PUT /api/v1/repositories/" + c.repo + "/forge again";
  auto key = read_private_key(c.private_key_file);
  if (!key.ok()) {
    failed.outcome = db::DeliveryAttempt::Outcome::refused;
    failed.error = key.error().message + again;
    return std::nullopt;
  }
  auto jwt = app_jwt(c, *key, now_unix_ms() / 1000);
  if (!jwt.ok()) {
    failed.outcome = db::DeliveryAttempt::Outcome::refused;
    failed.error = jwt.error().message + again;
    return std::nullopt;
  }
  const OutgoingRequest request = access_token_request(c, *jwt);
  auto answer = fetch(client, request);
  std::int64_t at = retry_at;
  if (answer.ok() && !answer->retry_after.empty())
    at = now_unix_ms() + delivery_backoff_ms(d.attempts + 1, m_ctx.config.delivery_retry_base_ms,
                                             m_ctx.config.delivery_retry_max_ms, answer->retry_after);
  auto read = read_access_token_answer(d, request, answer, now_unix_ms(), at);
  if (auto* refused = std::get_if<db::DeliveryAttempt>(&read)) {
    failed = std::move(*refused);
    return std::nullopt;
  }
  auto& token = std::get<InstallationToken>(read);
  log::info("installation token issued", {{"repo", c.repo},
                                          {"app", *c.app_id},
                                          {"installation", c.installation_id.value_or(0)},
                                          {"expires_at", iso8601_utc(token.expires_ms)}});
  std::string out = token.token;
  m_app_tokens.put(c, std::move(token));
  return out;
}

// The kernel source line of each resource regression, from the variant's build record at
// the commit (where the build runner found its source); regressions without one are in
// the summary only.
std::vector<Annotation> DeliverySender::annotations(const porting::Verdict& v, const std::string& commit) {
  std::vector<Annotation> out;
  for (const auto& r : v.reasons) {
    if (r.kind != "resource_regression" || out.size() == k_max_annotations) continue;
    const auto dot = r.variant.find('.');
    if (dot == std::string::npos) continue;
    db::BuildRecordFilter f;
    f.commit_sha = commit;
    f.target = r.target;
    f.family = r.variant.substr(0, dot);
    f.variant = r.variant.substr(dot + 1);
    f.limit = 1;
    auto records = m_ctx.store->list_build_records(f);
    if (!records.ok() || records->items.empty() || !records->items[0].source_path) continue;
    const auto& b = records->items[0];
    out.push_back(Annotation{*b.source_path, b.source_line.value_or(1),
                             "Resource regression: " + r.variant + " on " + r.target, r.message});
  }
  return out;
}

// Delivered rows are history: the queue keeps them for --delivery-retention-ms and at most
// --delivery-keep of them, so the table stays bounded however long the coordinator runs.
// Once a minute is enough (a shorter retention prunes that often): the bound is on rows,
// not on time to the millisecond.
void DeliverySender::prune_round() {
  const std::int64_t now = now_unix_ms();
  if (now - m_pruned_ms < std::min(k_prune_every_ms, m_ctx.config.delivery_retention_ms)) return;
  m_pruned_ms = now;
  auto n = m_ctx.store->prune_deliveries(now - m_ctx.config.delivery_retention_ms, m_ctx.config.delivery_keep);
  if (!n.ok()) return log::warn("delivered deliveries not pruned", {{"error", n.error().message}});
  if (*n > 0) log::info("delivered deliveries pruned", {{"removed", *n}});
}

void DeliverySender::refresh_metrics() {
  auto st = m_ctx.store->delivery_stats();
  if (!st.ok()) return log::warn("delivery metrics not refreshed", {{"error", st.error().message}});
  std::string out =
      "# HELP kport_deliveries Outgoing deliveries (forge reports, webhooks) by state.\n# TYPE kport_deliveries "
      "gauge\n";
  for (const auto& [state, n] : st->by_state)
    out += "kport_deliveries{state=\"" + state + "\"} " + std::to_string(n) + "\n";
  out +=
      "# HELP kport_delivery_attempts_total Attempts to send a delivery.\n# TYPE kport_delivery_attempts_total "
      "counter\n";
  out += "kport_delivery_attempts_total " + std::to_string(st->attempts) + "\n";
  out +=
      "# HELP kport_deliveries_pruned_total Delivered deliveries removed from the queue (retention).\n"
      "# TYPE kport_deliveries_pruned_total counter\n";
  out += "kport_deliveries_pruned_total " + std::to_string(st->pruned) + "\n";
  out +=
      "# HELP kport_forge_connections_broken Forge connections whose token the forge refused.\n"
      "# TYPE kport_forge_connections_broken gauge\n";
  out += "kport_forge_connections_broken " + std::to_string(st->broken_connections) + "\n";
  std::lock_guard lock(m_mu);
  m_metrics = std::move(out);
}

}  // namespace kport::coordinator
