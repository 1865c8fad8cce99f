#include "kport/coordinator/coordinator.h"

#include <sys/resource.h>

#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "app/bisections.h"
#include "best_asks.h"
#include "best_index.h"
#include "claim_broker.h"
#include "codec.h"
#include "delivery_sender.h"
#include "families.h"
#include "context.h"
#include "kport/common/build_info.h"
#include "kport/common/clock.h"
#include "kport/common/crypto.h"
#include "kport/common/install_paths.h"
#include "kport/common/log.h"
#include "kport/git/remote.h"
#include "kport/git/workspace.h"
#include "kport/http/server.h"
#include "readiness.h"
#include "registration.h"
#include "slurm_dispatch.h"
#include "static_files.h"
#include "token_cache.h"
#include "hooks_and_verdicts.h"

namespace kport::coordinator {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// A token not given in the configuration is generated once and kept in a 0600 file
// beside the database, so restarts keep it and local tools can read it.
Result<std::string> resolve_token(std::string given, const fs::path& file, std::string_view prefix) {
  if (!given.empty()) return given;
  std::error_code ec;
  if (fs::exists(file, ec)) {
    std::ifstream in(file);
    std::string token;
    std::getline(in, token);
    if (!token.empty()) return token;
  }
  std::string token = crypto::random_token(prefix);
  {
    std::ofstream out(file, std::ios::trunc);
    out << token << "\n";
    if (!out) return make_error(Errc::unavailable, "cannot write " + file.string());
  }
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, ec);
  log::info("generated token", {{"file", file.string()}});
  return token;
}

// Every connection is a descriptor: a soft limit of 1024 (the usual default) would turn
// a few hundred idle clients into accept failures long before max_connections.
void raise_fd_limit(std::size_t max_connections) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  const auto before = lim.rlim_cur;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) lim.rlim_cur = before;
  }
  log::info("file descriptor limit", {{"soft_before", static_cast<std::int64_t>(before)},
                                      {"soft", static_cast<std::int64_t>(lim.rlim_cur)},
                                      {"hard", static_cast<std::int64_t>(lim.rlim_max)}});
  // Descriptors beyond the connections: the database and its WAL, readers, artifacts, logs.
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < max_connections + 256)
    log::warn(
        "the file descriptor limit is below max-connections plus headroom; raise LimitNOFILE or lower "
        "--max-connections",
        {{"limit", static_cast<std::int64_t>(lim.rlim_cur)},
         {"max_connections", static_cast<std::int64_t>(max_connections)}});
}

// The queue gauges of /metrics, rendered by the reaper thread once a second so that a
// scrape never reads the database on an I/O thread.
std::string render_queue_metrics(const db::QueueStats& stats) {
  std::string out = "# HELP kport_jobs Jobs by status.\n# TYPE kport_jobs gauge\n";
  for (const auto& [status, n] : stats.jobs_by_status)
    out += "kport_jobs{status=\"" + std::string(db::to_string(status)) + "\"} " + std::to_string(n) + "\n";
  out += "# HELP kport_queue_depth Jobs waiting to be claimed.\n# TYPE kport_queue_depth gauge\n";
  std::int64_t depth = 0;
  for (auto s : {db::JobStatus::queued, db::JobStatus::awaiting_runner})
    if (auto it = stats.jobs_by_status.find(s); it != stats.jobs_by_status.end()) depth += it->second;
  out += "kport_queue_depth " + std::to_string(depth) + "\n";
  out += "# HELP kport_runners_online Runners heard from recently.\n# TYPE kport_runners_online gauge\n";
  out += "kport_runners_online " + std::to_string(stats.runners_online) + "\n";
  return out;
}

}  // namespace

class Coordinator::Impl {
 public:
  Config config;
  std::unique_ptr<db::Store> store;
  http::EventHub events;
  std::unique_ptr<ClaimBroker> broker;
  std::unique_ptr<RegistrationGate> registration;
  TokenCache tokens;
  std::unique_ptr<boost::asio::thread_pool> workers;
  BestAsks best_asks;
  std::unique_ptr<Families> families;
  std::unique_ptr<BestIndex> best_index;
  Context ctx;
  std::shared_ptr<http::Router> router = std::make_shared<http::Router>();
  std::unique_ptr<http::Server> server;
  std::unique_ptr<SlurmDispatcher> slurm;  // set when --slurm-partition is
  std::unique_ptr<Readiness> readiness;
  std::unique_ptr<DeliverySender> sender;  // forge reports and webhooks
  std::mutex queue_metrics_mu;             // guards the two below
  std::string queue_metrics;
  std::int64_t queue_metrics_at_ms = 0;
  std::thread reaper;
  std::int64_t bisections_swept_ms = 0;  // reaper thread only
  static constexpr std::int64_t k_bisection_sweep_ms = 10'000;
  // The unmeasured asks' next flush (reaper thread only): a second after the last, or
  // k_asks_flush_share times as long as it took when that is later.
  std::chrono::steady_clock::time_point asks_flush_due{};
  static constexpr int k_asks_flush_share = 20;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;

  void build_routes();
  void reap();
  void refresh_queue_metrics();
  void flush_best_asks();
};

void Coordinator::Impl::build_routes() {
  auto& r = *router;
  // Liveness answers from memory: it says the process serves HTTP, nothing more, so no
  // load on the database or the workers can make a probe kill a healthy coordinator.
  const std::string live = json::serialize(json::object{{"status", "ok"}, {"schema_version", db::schema_version()}});
  r.add_sync(
      "GET", "/healthz", [live](const http::Request&) { return http::text_response(200, live, "application/json"); },
      "/healthz");
  r.add(
      "GET", "/readyz", [this](http::Request&&, http::Reply reply) { readiness->check(std::move(reply)); }, "/readyz");
  r.add_sync(
      "GET", "/metrics",
      [this](const http::Request&) {
        return http::text_response(200, server->metrics().render_prometheus(),
                                   "text/plain; version=0.0.4; charset=utf-8");
      },
      "/metrics");
  r.add_sync(
      "GET", "/api/v1/openapi.json",
      [](const http::Request&) { return http::text_response(200, openapi_document(), "application/json"); },
      "/api/v1/openapi.json");
  r.add_sync(
      "GET", "/api/v1/events",
      [this](const http::Request& req) {
        std::vector<std::string> topics;
        std::string_view t = req.query_or("topics");
        while (!t.empty()) {
          auto comma = t.find(',');
          topics.emplace_back(t.substr(0, comma));
          t = comma == std::string_view::npos ? std::string_view{} : t.substr(comma + 1);
        }
        http::Response res;
        res.content_type = "text/event-stream";
        res.set_header("Cache-Control", "no-cache");
        res.events = events.subscribe(std::move(topics));
        res.body = http::format_event("hello", R"({"ok":true})");
        return res;
      },
      "/api/v1/events");
  r.add_sync(
      "GET", "/api/v1/queue",
      [this](const http::Request&) {
        auto stats = store->queue_stats();
        if (!stats.ok()) return http::error_response(stats.error());
        json::object out = to_json(*stats).as_object();
        out["claims_waiting"] = broker->waiting();
        if (slurm) out["slurm"] = slurm->snapshot();
        return http::json_ok(out);
      },
      "/api/v1/queue");
  add_catalog_routes(r, ctx);
  add_pipeline_routes(r, ctx);
  add_runner_routes(r, ctx);
  add_result_routes(r, ctx);
  add_artifact_routes(r, ctx);
  add_dashboard_routes(r, ctx);
  add_pipeline_page_routes(r, ctx);
  add_hook_routes(r, ctx);
  add_verdict_routes(r, ctx);
  add_admin_routes(r, ctx);
  add_best_request_routes(r, ctx);
  add_dispatch_routes(r, ctx);
  add_forge_routes(r, ctx);
  add_bisection_routes(r, ctx);
  if (!config.web_dir.empty())
    add_static_routes(r, config.web_dir);
  else
    add_missing_dashboard_route(r);
}

// Expires leases once a second; what comes back to the queue may be claimed at once.
void Coordinator::Impl::refresh_queue_metrics() {
  auto stats = store->queue_stats();
  if (!stats.ok()) return log::warn("queue metrics not refreshed", {{"error", stats.error().message}});
  std::string text = render_queue_metrics(*stats);
  std::lock_guard lock(queue_metrics_mu);
  queue_metrics = std::move(text);
  queue_metrics_at_ms = now_unix_ms();
}

// Writes the counts of /api/v1/best questions answered without a measurement. Each
// flush is an upsert per key counted (up to BestAsks::k_max_keys), so a flood of distinct
// unmeasured shapes made the writer's share of the CPU a fifth of what the answers took;
// flushing no more than 1/k_asks_flush_share of the time bounds it. Meanwhile the counts
// wait in memory, where GET /api/v1/best/requests reads them too (BestAsks::pending_for).
void Coordinator::Impl::flush_best_asks() {
  const auto start = std::chrono::steady_clock::now();
  if (auto st = best_asks.flush(*store); !st.ok())
    log::warn("best-answer asks not recorded; kept for the next flush", {{"error", st.error().message}});
  const auto took = std::chrono::steady_clock::now() - start;
  asks_flush_due =
      start + std::max<std::chrono::steady_clock::duration>(std::chrono::seconds(1), took * k_asks_flush_share);
}

void Coordinator::Impl::reap() {
  std::unique_lock lock(mu);
  while (!cv.wait_for(lock, std::chrono::seconds(1), [this] { return stopping; })) {
    lock.unlock();
    refresh_queue_metrics();
    if (std::chrono::steady_clock::now() >= asks_flush_due) flush_best_asks();
    // Bisections whose last probe ended unseen (a restart in between) go on from here.
    if (const std::int64_t now = now_unix_ms(); now - bisections_swept_ms >= k_bisection_sweep_ms) {
      bisections_swept_ms = now;
      app::sweep_bisections(ctx);
    }
    auto expired = store->expire_leases(now_unix_ms());
    if (!expired.ok()) {
      log::warn("lease expiry failed", {{"error", expired.error().message}});
    } else if (!expired->empty()) {
      for (const auto& e : *expired) {
        log::warn("lease expired", {{"job", e.job_id},
                                    {"attempt", e.attempt},
                                    {"runner", e.runner_id},
                                    {"now", std::string(db::to_string(e.status))}});
        if (e.status == db::JobStatus::failed || e.status == db::JobStatus::cancelled) {
          // A bisection's probe that lost its last attempt (probed again once) or was
          // cancelled (the bisection stops) has ended too.
          if (auto job = store->get_job(e.job_id); job.ok() && *job) app::advance_probe(ctx, **job);
        }
        if (e.status != db::JobStatus::queued) continue;
        broker->notify_in(std::chrono::milliseconds(e.retry_in.others_ms));
        broker->notify_in(std::chrono::milliseconds(e.retry_in.same_ms));
      }
      broker->notify();
      events.publish("jobs", "expired",
                     json::serialize(json::object{{"count", static_cast<std::int64_t>(expired->size())}}));
    }
    lock.lock();
  }
}

Result<std::unique_ptr<Coordinator>> Coordinator::create(Config config) {
  auto impl = std::make_unique<Impl>();
  fs::path db_path(config.db_path);
  fs::path dir = db_path.has_parent_path() ? db_path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(Errc::unavailable, "cannot create directory " + dir.string() + ": " + ec.message());
  if (config.artifact_dir.empty()) config.artifact_dir = (dir / "artifacts").string();
  auto admin = resolve_token(config.admin_token, dir / "admin-token", "kpa_");
  if (!admin.ok()) return std::move(admin).error();
  config.admin_token = *admin;
  // A rotated token (its file has an expiry line) wins over one given at start: rotating
  // is how an admin retires a leaked token, and a restart must not bring that one back.
  const fs::path reg_file = dir / "registration-token";
  auto rotated = RegistrationGate::read_file(reg_file);
  if (rotated && rotated->rotated) {
    config.registration_token = rotated->value;
  } else {
    auto reg = resolve_token(config.registration_token, reg_file, "kpreg_");
    if (!reg.ok()) return std::move(reg).error();
    config.registration_token = *reg;
    rotated = RegistrationGate::Token{*reg, std::nullopt, false};
  }
  auto hook = resolve_token(config.hook_secret, dir / "hook-secret", "kph_");
  if (!hook.ok()) return std::move(hook).error();
  config.hook_secret = *hook;
  // The notification webhooks' secret is kept in a file, like the tokens, so a restart
  // signs with the same one.
  const fs::path notify_file =
      config.notify_secret_file.empty() ? dir / "notify-secret" : fs::path(config.notify_secret_file);
  auto notify = resolve_token("", notify_file, "kpn_");
  if (!notify.ok()) return std::move(notify).error();
  config.notify_secret = *notify;

  db::Options opts;
  opts.path = config.db_path;
  opts.artifact_dir = config.artifact_dir;
  opts.lease_ms = config.lease_ms;
  opts.runner_online_ms = config.runner_online_ms;
  opts.retry = db::RetryPolicy{config.retry_base_ms, config.retry_max_ms};
  auto store = db::Store::open(opts);
  if (!store.ok()) return std::move(store).error();
  impl->store = std::move(*store);
  impl->config = config;
  impl->broker = std::make_unique<ClaimBroker>(*impl->store, config.lease_ms);
  impl->registration = std::make_unique<RegistrationGate>(*rotated, reg_file, config.registration_burst,
                                                          config.registrations_per_minute);
  impl->workers = std::make_unique<boost::asio::thread_pool>(static_cast<std::size_t>(config.workers));
  impl->ctx = Context{config,
                      impl->store.get(),
                      &impl->events,
                      impl->broker.get(),
                      impl->workers.get(),
                      impl->registration.get(),
                      &git::remote_ref,
                      &impl->tokens};
  auto live = impl->store->live_runner_tokens();
  if (!live.ok()) return std::move(live).error();
  impl->tokens.reset(*live);
  impl->ctx.best_asks = &impl->best_asks;
  // kport's own families, then what builds reported: known before the first request.
  const std::string families_file = config.families_file.empty()
                                        ? install::data_path_or_default("kernels/kport.json", KPORT_FAMILIES_SOURCE)
                                        : config.families_file;
  auto builtin = Families::load_builtin(families_file);
  if (!builtin.ok()) return std::move(builtin).error();
  impl->families = std::make_unique<Families>(std::move(*builtin));
  if (auto st = impl->families->reload(*impl->store); !st.ok()) return st.error();
  impl->ctx.families = impl->families.get();
  // Bisections read a repository's history from a workspace of their own (one at a time:
  // a workspace is not thread-safe), fetched when the commit is not there yet.
  impl->ctx.commit_path = [root = dir / "repos", mu = std::make_shared<std::mutex>()](
                              const std::string& url, const std::string& good, const std::string& bad,
                              std::size_t limit) -> Result<std::vector<std::string>> {
    std::lock_guard lock(*mu);
    auto ws = git::Workspace::open(url, git::workspace_dir(root, url));
    if (!ws.ok()) return std::move(ws).error();
    if (!ws->has_commit(bad) || !ws->has_commit(good)) {
      if (auto f = ws->fetch(); !f.ok()) return std::move(f).error();
    }
    return ws->first_parent_path(good, bad, limit);
  };
  impl->best_index = std::make_unique<BestIndex>(*impl->store);
  impl->ctx.best_index = impl->best_index.get();
  impl->readiness = std::make_unique<Readiness>(*impl->store, *impl->workers, config.ready_timeout);
  impl->build_routes();
  return std::unique_ptr<Coordinator>(new Coordinator(std::move(impl)));
}

Coordinator::Coordinator(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

Coordinator::~Coordinator() { stop(); }

Status Coordinator::start() {
  auto& m = *m_impl;
  http::ServerOptions so;
  so.host = m.config.host;
  so.port = m.config.port;
  so.threads = m.config.threads;
  so.body_limit = m.config.body_limit;
  so.read_timeout = m.config.read_timeout;
  so.first_request_timeout = m.config.first_request_timeout;
  so.max_connections = m.config.max_connections;
  so.max_connections_per_address = m.config.max_connections_per_address;
  so.reserved_connections = m.config.reserved_connections;
  so.privileged_paths = {"/healthz", "/readyz", "/metrics"};
  so.tls_cert_file = m.config.tls_cert;
  so.tls_key_file = m.config.tls_key;
  // Only a token that would authenticate takes a reserve slot (asked of memory: this
  // runs on the I/O threads), so a bogus Authorization header cannot hold the reserve.
  so.authorized = [&m](std::string_view authorization) { return reserve_worthy(authorization, m.ctx); };
  raise_fd_limit(so.max_connections);
  m.server = std::make_unique<http::Server>(so, m.router);
  auto& metrics = m.server->metrics();
  m.refresh_queue_metrics();
  metrics.add_collector([&m](std::string& out) {
    std::lock_guard lock(m.queue_metrics_mu);
    out += m.queue_metrics;
    if (m.queue_metrics_at_ms == 0) return;
    out +=
        "# HELP kport_queue_metrics_age_seconds Age of the queue gauges (refreshed once a second).\n"
        "# TYPE kport_queue_metrics_age_seconds gauge\nkport_queue_metrics_age_seconds " +
        std::to_string(static_cast<double>(now_unix_ms() - m.queue_metrics_at_ms) / 1000.0) + "\n";
  });
  // Which build answers, and how the process fares: from memory and /proc, never the database.
  const auto& build = build_info();
  const std::string build_line =
      "# HELP kport_build_info The version and git commit of this coordinator; always 1.\n"
      "# TYPE kport_build_info gauge\nkport_build_info{version=\"" +
      std::string(build.version) + "\",commit=\"" + std::string(build.commit) + "\"} 1\n";
  metrics.add_collector([build_line](std::string& out) {
    out += build_line;
    http::append_process_metrics(out);
  });
  metrics.add_gauge("kport_claims_waiting", "Runner claims parked in long-poll.",
                    [&m] { return static_cast<double>(m.broker->waiting()); });
  metrics.add_gauge("kport_best_asks_dropped",
                    "Unmeasured /api/v1/best questions not counted: too many distinct ones between flushes.",
                    [&m] { return static_cast<double>(m.best_asks.dropped()); });
  // What /api/v1/best holds in memory (BestIndex::Stats: entries, their rows and shapes,
  // estimated bytes, and how often an entry was read from the store).
  metrics.add_collector([&m](std::string& out) {
    const auto st = m.best_index->stats();
    auto gauge = [&out](const char* name, const char* help, std::size_t v, const char* type = "gauge") {
      out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " +
             std::to_string(v) + "\n";
    };
    gauge("kport_best_index_keys", "(GPU model, family, dtype) keys whose best-kernel evidence is held in memory.",
          st.keys);
    gauge("kport_best_index_rows", "best_candidates rows held in memory for /api/v1/best.", st.rows);
    gauge("kport_best_index_shapes", "Distinct shapes of those rows.", st.shapes);
    gauge("kport_best_index_bytes", "Estimated bytes held by the best-kernel evidence index.", st.bytes);
    gauge("kport_best_index_loads_total", "Best-kernel evidence entries read from the store.", st.loads, "counter");
  });
  m.sender = std::make_unique<DeliverySender>(m.ctx);
  metrics.add_collector([&m](std::string& out) { out += m.sender->metrics(); });
  KPORT_TRY(m.server->start());
  m.server->stop_signal()->on_stop([&m] { m.broker->stop(); });
  if (m.config.public_url.empty())
    m.config.public_url =
        std::string(m.server->scheme()) + "://" + m.config.host + ":" + std::to_string(m.server->port());
  m.ctx.config.public_url = m.config.public_url;
  m.sender->start();
  m.reaper = std::thread([&m] { m.reap(); });
  if (!m.config.slurm.partition.empty()) {
    KPORT_TRY(prepare_slurm_config(m.config.slurm, m.config, m.server->port()));
    m.slurm = std::make_unique<SlurmDispatcher>(m.config.slurm, *m.store, Env::system());
    m.slurm->start();
  }
  // Written whole and renamed into place: a reader that sees the file sees the port.
  if (!m.config.port_file.empty())
    KPORT_TRY(Env::system().write_file(m.config.port_file, std::to_string(m.server->port()) + "\n"));
  log::info("coordinator listening",
            {{"url", std::string(m.server->scheme()) + "://" + m.config.host + ":" + std::to_string(m.server->port())},
             {"db", m.config.db_path}});
  return {};
}

std::uint16_t Coordinator::port() const { return m_impl->server ? m_impl->server->port() : 0; }
const Config& Coordinator::config() const { return m_impl->config; }

void Coordinator::stop() {
  auto& m = *m_impl;
  {
    std::lock_guard lock(m.mu);
    if (m.stopping) return;
    m.stopping = true;
  }
  m.cv.notify_all();
  if (m.server) m.server->stop(std::chrono::milliseconds(5000));
  m.broker->stop();
  if (m.slurm) m.slurm->stop();
  if (m.sender) m.sender->stop();
  if (m.reaper.joinable()) m.reaper.join();
  m.events.close_all();
  m.workers->join();
  m.flush_best_asks();
  m.readiness.reset();
  if (auto st = m.store->checkpoint(); !st.ok()) log::warn("checkpoint failed", {{"error", st.error().message}});
  log::info("coordinator stopped");
}

}  // namespace kport::coordinator
