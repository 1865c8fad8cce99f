// Runners: registration (token stored hashed), authentication, listing, deregistration,
// and the queue statistics /metrics shows.
#include "impl.h"
#include "json_text.h"
#include "kport/common/crypto.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

namespace {

Result<std::vector<Runner>> runners_where(Connection& c, const std::string& where) {
  auto s = c.prepare(std::string(detail::k_runner_select) + where + " ORDER BY id");
  if (!s) return std::move(s).error();
  auto rows = detail::collect<Runner>(*s, detail::read_runner);
  if (!rows) return std::move(rows).error();
  for (Runner& r : *rows) {
    auto full = detail::load_runner(c, r.id);
    if (!full) return std::move(full).error();
    if (*full) r.caps.targets = std::move((*full)->caps.targets);
  }
  return rows;
}

}  // namespace

Result<RegisteredRunner> Store::register_runner(const NewRunner& n) {
  if (n.name.empty()) return make_error(Errc::invalid_argument, "runner name is empty");
  if (n.role == RunnerRole::build && n.caps.targets.empty())
    return make_error(Errc::invalid_argument, "build runner \"" + n.name + "\" lists no targets it can compile for");
  if (n.role == RunnerRole::gpu && (n.caps.arch.empty() || n.caps.gpu_model.empty()))
    return make_error(Errc::invalid_argument, "gpu runner \"" + n.name + "\" must report its GPU model and arch");
  auto extra = detail::json_text("capabilities extra_json", n.caps.extra_json);
  if (!extra) return std::move(extra).error();
  // The token leaves this function once; only its hash is stored.
  std::string token = crypto::random_token("kpr_");
  const std::string hash = crypto::sha256_hex(token);
  const std::int64_t now = m_impl->now();
  auto runner = m_impl->write<Runner>([&](Connection& c) -> Result<Runner> {
    auto ins = c.prepare(
        "INSERT INTO runners(name, role, token_hash, toolkit, cores, gpu_model, gpu_uuid, arch, driver,"
        " extra_json, registered_ms, last_heartbeat_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)");
    if (!ins) return std::move(ins).error();
    KPORT_TRY(ins->bind_all(n.name, to_string(n.role), hash, n.caps.toolkit, n.caps.cores, n.caps.gpu_model,
                            n.caps.gpu_uuid, n.caps.arch, n.caps.driver, *extra, now)
                  .run());
    const std::int64_t id = c.last_insert_rowid();
    for (const auto& t : n.caps.targets) {
      auto tg = c.prepare("INSERT OR IGNORE INTO runner_targets(runner_id, target) VALUES (?1, ?2)");
      if (!tg) return std::move(tg).error();
      KPORT_TRY(tg->bind_all(id, t).run());
    }
    if (n.role == RunnerRole::gpu) {
      // The fleet catalog learns GPU models and drivers from the runners that have them.
      auto m = c.prepare(
          "INSERT INTO gpu_models(name, arch, first_seen_ms, last_seen_ms) VALUES (?1, ?2, ?3, ?3)"
          " ON CONFLICT(name) DO UPDATE SET last_seen_ms = excluded.last_seen_ms");
      if (!m) return std::move(m).error();
      KPORT_TRY(m->bind_all(n.caps.gpu_model, n.caps.arch, now).run());
      if (!n.caps.driver.empty()) {
        auto d = c.prepare("INSERT OR IGNORE INTO gpu_drivers(gpu_model, driver, first_seen_ms) VALUES (?1, ?2, ?3)");
        if (!d) return std::move(d).error();
        KPORT_TRY(d->bind_all(n.caps.gpu_model, n.caps.driver, now).run());
      }
    }
    auto r = detail::load_runner(c, id);
    if (!r) return std::move(r).error();
    (*r)->online = true;
    return std::move(**r);
  });
  if (!runner) return std::move(runner).error();
  return RegisteredRunner{std::move(*runner), std::move(token)};
}

Result<Runner> Store::authenticate_runner(std::string_view token) {
  const std::string hash = crypto::sha256_hex(token);
  const std::int64_t since = m_impl->online_since(m_impl->now());
  return m_impl->read<Runner>([&](Connection& c) -> Result<Runner> {
    auto s = c.prepare("SELECT id, token_hash FROM runners WHERE token_hash = ?1 AND deregistered_ms IS NULL");
    if (!s) return std::move(s).error();
    auto row = s->bind(1, hash).step();
    if (!row) return std::move(row).error();
    // The index lookup finds the row; the constant-time compare keeps the final check
    // free of early exits on the secret-derived value.
    if (!*row || !crypto::constant_time_equal(s->text(1), hash))
      return make_error(Errc::unauthorized, "unknown or revoked runner token; register the runner again");
    auto r = detail::load_runner(c, s->int64(0));
    if (!r) return std::move(r).error();
    (*r)->online = (*r)->last_heartbeat_ms >= since;
    return std::move(**r);
  });
}

Result<std::vector<std::pair<std::int64_t, std::string>>> Store::live_runner_tokens() {
  using Row = std::pair<std::int64_t, std::string>;
  return m_impl->read<std::vector<Row>>([&](Connection& c) -> Result<std::vector<Row>> {
    auto s = c.prepare("SELECT id, token_hash FROM runners WHERE deregistered_ms IS NULL ORDER BY id");
    if (!s) return std::move(s).error();
    return detail::collect<Row>(*s, [](const detail::Stmt& st) { return Row{st.int64(0), st.text(1)}; });
  });
}

Result<std::optional<Runner>> Store::get_runner(std::int64_t id) {
  const std::int64_t since = m_impl->online_since(m_impl->now());
  return m_impl->read<std::optional<Runner>>([&](Connection& c) -> Result<std::optional<Runner>> {
    auto r = detail::load_runner(c, id);
    if (r && *r) (*r)->online = !(*r)->deregistered_ms && (*r)->last_heartbeat_ms >= since;
    return r;
  });
}

Result<std::vector<Runner>> Store::list_runners(bool include_deregistered) {
  const std::int64_t since = m_impl->online_since(m_impl->now());
  return m_impl->read<std::vector<Runner>>([&](Connection& c) -> Result<std::vector<Runner>> {
    auto rows = runners_where(c, include_deregistered ? "" : " WHERE deregistered_ms IS NULL");
    if (!rows) return rows;
    for (Runner& r : *rows) r.online = !r.deregistered_ms && r.last_heartbeat_ms >= since;
    return rows;
  });
}

Result<RetryDelay> Store::deregister_runner(std::int64_t runner_id) {
  const std::int64_t now = m_impl->now();
  return m_impl->write<RetryDelay>([&](Connection& c) -> Result<RetryDelay> {
    RetryDelay delay;
    auto runner = detail::load_runner(c, runner_id);
    if (!runner) return std::move(runner).error();
    if (!*runner) return make_error(Errc::not_found, "no runner " + std::to_string(runner_id));
    if ((*runner)->deregistered_ms) return delay;
    if ((*runner)->current_job) {
      auto job = detail::load_job(c, *(*runner)->current_job);
      if (!job) return std::move(job).error();
      if (*job && (*job)->status == JobStatus::running && (*job)->runner_id == runner_id) {
        const RetryDelay backoff = m_impl->backoff((*job)->attempt);
        auto released = detail::release_lease(c, **job, now, "runner deregistered", backoff);
        if (!released) return std::move(released).error();
        if (*released == JobStatus::queued) delay = backoff;
      }
    }
    auto s = c.prepare("UPDATE runners SET deregistered_ms = ?2, current_job = NULL WHERE id = ?1");
    if (!s) return std::move(s).error();
    KPORT_TRY(s->bind_all(runner_id, now).run());
    return delay;
  });
}

Result<QueueStats> Store::queue_stats() {
  const std::int64_t since = m_impl->online_since(m_impl->now());
  return m_impl->read<QueueStats>([&](Connection& c) -> Result<QueueStats> {
    QueueStats out;
    for (JobStatus st : {JobStatus::queued, JobStatus::awaiting_runner, JobStatus::running, JobStatus::succeeded,
                         JobStatus::failed, JobStatus::cancelled})
      out.jobs_by_status[st] = 0;
    auto s = c.prepare("SELECT status, count(*) FROM jobs GROUP BY status");
    if (!s) return std::move(s).error();
    auto counts = detail::collect<std::pair<std::string, std::int64_t>>(
        *s, [](const detail::Stmt& st) { return std::make_pair(st.text(0), st.int64(1)); });
    if (!counts) return std::move(counts).error();
    for (const auto& [status, n] : *counts)
      if (auto st = parse_job_status(status)) out.jobs_by_status[*st] = n;
    auto w = c.prepare(
        "SELECT count(*) FROM jobs j WHERE j.status = 'queued' AND j.kind = 'check' AND (" KPORT_JOB_STATUS_EXPR
        ") = 'awaiting_runner'");
    if (!w) return std::move(w).error();
    w->bind(1, since);
    auto waiting = detail::collect_one<std::int64_t>(*w, [](const detail::Stmt& st) { return st.int64(0); });
    if (!waiting) return std::move(waiting).error();
    const std::int64_t n_waiting = waiting->value_or(0);
    out.jobs_by_status[JobStatus::awaiting_runner] = n_waiting;
    out.jobs_by_status[JobStatus::queued] -= n_waiting;
    auto r = c.prepare(
        "SELECT role, count(*) FROM runners WHERE deregistered_ms IS NULL AND last_heartbeat_ms >= ?1 GROUP BY role");
    if (!r) return std::move(r).error();
    r->bind(1, since);
    auto online = detail::collect<std::pair<std::string, std::int64_t>>(
        *r, [](const detail::Stmt& st) { return std::make_pair(st.text(0), st.int64(1)); });
    if (!online) return std::move(online).error();
    for (RunnerRole role : {RunnerRole::build, RunnerRole::gpu}) out.runners_online_by_role[role] = 0;
    for (const auto& [role, n] : *online) {
      if (auto ro = parse_runner_role(role)) out.runners_online_by_role[*ro] = n;
      out.runners_online += n;
    }
    return out;
  });
}

}  // namespace kport::db
