// The job queue's state transitions: claim, heartbeat, complete, fail, lease expiry.
// Each runs as one write request, so a transition is atomic and durable when it returns.
#include "impl.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

namespace {

// The runner, alive: unknown -> not_found, deregistered -> gone.
Result<Runner> live_runner(Connection& c, std::int64_t runner_id, std::int64_t now) {
  auto r = detail::load_runner(c, runner_id);
  if (!r) return std::move(r).error();
  if (!*r) return make_error(Errc::not_found, "no runner " + std::to_string(runner_id) + "; register again");
  if ((*r)->deregistered_ms)
    return make_error(Errc::gone, "runner " + std::to_string(runner_id) + " was deregistered; register again");
  auto s = c.prepare("UPDATE runners SET last_heartbeat_ms = ?2 WHERE id = ?1");
  if (!s) return std::move(s).error();
  KPORT_TRY(s->bind_all(runner_id, now).run());
  return std::move(**r);
}

Result<std::optional<std::int64_t>> pick_job(Connection& c, const Runner& r, std::int64_t now) {
  // The oldest queued job the runner can do whose build dependency (if any) succeeded
  // and whose backoff passed (longer for the runner that failed its last attempt).
  constexpr const char* k_ready =
      " AND (j.depends_on IS NULL OR EXISTS (SELECT 1 FROM jobs d WHERE d.id = j.depends_on"
      " AND d.status = 'succeeded'))"
      " AND (j.not_before_ms IS NULL OR j.not_before_ms <= ?3)"
      " AND (j.retry_runner_id IS NULL OR j.retry_runner_id <> ?4 OR j.retry_runner_after_ms <= ?3)"
      " ORDER BY j.id LIMIT 1";
  const bool build = r.role == RunnerRole::build;
  auto s = build ? c.prepare(std::string("SELECT j.id FROM jobs j WHERE j.status = 'queued' AND j.kind = 'build'"
                                         " AND j.target IN (SELECT target FROM runner_targets WHERE runner_id = ?1)") +
                             k_ready)
                 : c.prepare(std::string("SELECT j.id FROM jobs j WHERE j.status = 'queued' AND j.kind = 'check'"
                                         " AND j.arch = ?1 AND (j.gpu_model IS NULL OR j.gpu_model = ?2)"
                                         " AND (j.driver IS NULL OR j.driver = ?5)") +
                             k_ready);
  if (!s) return std::move(s).error();
  if (build)
    s->bind(1, r.id);
  else
    s->bind_all(r.caps.arch, r.caps.gpu_model);
  if (!build) s->bind(5, r.caps.driver);
  s->bind(3, now);
  s->bind(4, r.id);
  return detail::collect_one<std::int64_t>(*s, [](const detail::Stmt& st) { return st.int64(0); });
}

// A reply without spawned jobs. Built out of line: GCC 12 reports a false
// -Wfree-nonheap-object when a braced CompleteReply temporary converts to Result.
Result<CompleteReply> answer(JobStatus status, bool duplicate) {
  CompleteReply reply;
  reply.status = status;
  reply.duplicate = duplicate;
  return reply;
}

}  // namespace

Result<std::optional<Claim>> Store::claim(std::int64_t runner_id, std::int64_t lease_ms) {
  const std::int64_t now = m_impl->now();
  const std::int64_t lease = lease_ms > 0 ? lease_ms : m_impl->options.lease_ms;
  return m_impl->write<std::optional<Claim>>([&](Connection& c) -> Result<std::optional<Claim>> {
    auto runner = live_runner(c, runner_id, now);
    if (!runner) return std::move(runner).error();
    if (runner->current_job) {
      auto held = detail::load_job(c, *runner->current_job);
      if (!held) return std::move(held).error();
      // A runner token is one worker and holds one job. A second claim on it is a
      // retried request whose answer was lost, or one of many parked duplicates: it
      // gets the lease it holds, unchanged, so no claim ever burns an attempt. A
      // restarted runner registers again and gets a new token; the old lease expires.
      if (*held && (*held)->status == JobStatus::running && (*held)->runner_id == runner_id) {
        Claim again{std::move(**held), 0, true};
        again.lease_expires_ms = again.job.lease_expires_ms.value_or(now);
        return std::optional<Claim>(std::move(again));
      }
    }
    auto picked = pick_job(c, *runner, now);
    if (!picked) return std::move(picked).error();
    if (!*picked) return std::optional<Claim>{};
    auto up = c.prepare(
        "UPDATE jobs SET status = 'running', attempt = attempt + 1, runner_id = ?2, lease_expires_ms = ?3,"
        " cancel_requested = 0, started_ms = coalesce(started_ms, ?4), not_before_ms = NULL, retry_runner_id = NULL,"
        " retry_runner_after_ms = NULL WHERE id = ?1 AND status = 'queued'");
    if (!up) return std::move(up).error();
    KPORT_TRY(up->bind_all(**picked, runner_id, now + lease, now).run());
    auto cur = c.prepare("UPDATE runners SET current_job = ?2 WHERE id = ?1");
    if (!cur) return std::move(cur).error();
    KPORT_TRY(cur->bind_all(runner_id, **picked).run());
    auto job = detail::load_job(c, **picked);
    if (!job) return std::move(job).error();
    return std::optional<Claim>(Claim{std::move(**job), now + lease});
  });
}

Result<HeartbeatReply> Store::heartbeat(std::int64_t runner_id, std::optional<std::int64_t> job_id, int attempt,
                                        std::int64_t lease_ms) {
  const std::int64_t now = m_impl->now();
  const std::int64_t lease = lease_ms > 0 ? lease_ms : m_impl->options.lease_ms;
  return m_impl->write<HeartbeatReply>([&](Connection& c) -> Result<HeartbeatReply> {
    auto runner = live_runner(c, runner_id, now);
    if (!runner) return std::move(runner).error();
    if (!job_id) return HeartbeatReply{};
    auto job = detail::load_job(c, *job_id);
    if (!job) return std::move(job).error();
    if (!*job) return make_error(Errc::not_found, "no job " + std::to_string(*job_id));
    const Job& j = **job;
    if (j.status != JobStatus::running)
      return make_error(Errc::gone, "job " + std::to_string(j.id) + " is " + std::string(to_string(j.status)) +
                                        "; stop working on it");
    KPORT_TRY(detail::check_holder(j, runner_id, attempt > 0 ? attempt : j.attempt, now));
    auto up = c.prepare("UPDATE jobs SET lease_expires_ms = ?2 WHERE id = ?1");
    if (!up) return std::move(up).error();
    KPORT_TRY(up->bind_all(j.id, now + lease).run());
    return HeartbeatReply{now + lease, j.cancel_requested};
  });
}

Result<CompleteReply> Store::complete(std::int64_t job_id, std::int64_t runner_id, int attempt, bool spawn) {
  const std::int64_t now = m_impl->now();
  return m_impl->write<CompleteReply>([&](Connection& c) -> Result<CompleteReply> {
    auto job = detail::load_job(c, job_id);
    if (!job) return std::move(job).error();
    if (!*job) return make_error(Errc::not_found, "no job " + std::to_string(job_id));
    const Job& j = **job;
    const bool same_attempt = j.attempt == attempt && j.runner_id == runner_id;
    if (same_attempt && (j.status == JobStatus::succeeded || j.status == JobStatus::cancelled)) {
      // The runner retried a report whose answer it lost: answer it again, change nothing.
      CompleteReply reply;
      reply.status = j.status;
      reply.duplicate = true;
      if (j.status == JobStatus::succeeded) {
        auto deps = detail::dependents(c, j.id);
        if (!deps) return std::move(deps).error();
        reply.spawned = std::move(*deps);
      }
      return reply;
    }
    KPORT_TRY(detail::check_holder(j, runner_id, attempt, now));
    const JobStatus status = j.cancel_requested ? JobStatus::cancelled : JobStatus::succeeded;
    KPORT_TRY(detail::finish_job(c, j, status,
                                 j.cancel_requested ? std::optional<std::string>("cancelled") : std::nullopt, now));
    CompleteReply reply;
    reply.status = status;
    if (status == JobStatus::succeeded && j.kind == JobKind::build && spawn) {
      auto ids = detail::spawn_checks(c, j, now, m_impl->online_since(now));
      if (!ids) return std::move(ids).error();
      reply.spawned = std::move(*ids);
    }
    return reply;
  });
}

Result<CompleteReply> Store::fail(std::int64_t job_id, std::int64_t runner_id, int attempt, std::string_view reason,
                                  bool retry) {
  const std::int64_t now = m_impl->now();
  const std::string why = reason.empty() ? std::string("failed without a reason") : std::string(reason);
  return m_impl->write<CompleteReply>([&](Connection& c) -> Result<CompleteReply> {
    auto job = detail::load_job(c, job_id);
    if (!job) return std::move(job).error();
    if (!*job) return make_error(Errc::not_found, "no job " + std::to_string(job_id));
    const Job& j = **job;
    const bool ended = j.status == JobStatus::failed || j.status == JobStatus::cancelled;
    if (j.attempt == attempt && ((ended && j.runner_id == runner_id) || j.status == JobStatus::queued))
      return answer(j.status, true);  // this attempt already ended; nothing to change
    KPORT_TRY(detail::check_holder(j, runner_id, attempt, now));
    if (j.cancel_requested) {
      KPORT_TRY(detail::finish_job(c, j, JobStatus::cancelled, std::string("cancelled"), now));
      return answer(JobStatus::cancelled, false);
    }
    if (retry && j.attempt < j.max_attempts) {
      const RetryDelay backoff = m_impl->backoff(j.attempt);
      KPORT_TRY(detail::requeue_job(c, j, why, now, backoff));
      auto reply = answer(JobStatus::queued, false);
      if (reply) reply->retry_in = backoff;
      return reply;
    }
    KPORT_TRY(detail::finish_job(
        c, j, JobStatus::failed,
        retry ? why + " (attempt " + std::to_string(j.attempt) + " of " + std::to_string(j.max_attempts) + ")" : why,
        now));
    return answer(JobStatus::failed, false);
  });
}

Result<std::vector<ExpiredLease>> Store::expire_leases(std::int64_t now_ms) {
  return m_impl->write<std::vector<ExpiredLease>>([&](Connection& c) -> Result<std::vector<ExpiredLease>> {
    auto s = c.prepare("SELECT id FROM jobs WHERE status = 'running' AND lease_expires_ms <= ?1 ORDER BY id");
    if (!s) return std::move(s).error();
    s->bind(1, now_ms);
    auto ids = detail::collect<std::int64_t>(*s, [](const detail::Stmt& st) { return st.int64(0); });
    if (!ids) return std::move(ids).error();
    std::vector<ExpiredLease> out;
    for (std::int64_t id : *ids) {
      auto job = detail::load_job(c, id);
      if (!job) return std::move(job).error();
      if (!*job) continue;
      const RetryDelay backoff = m_impl->backoff((*job)->attempt);
      auto status = detail::release_lease(c, **job, now_ms, "lease expired", backoff);
      if (!status) return std::move(status).error();
      out.push_back(ExpiredLease{id, (*job)->attempt, (*job)->runner_id.value_or(0), *status,
                                 *status == JobStatus::queued ? backoff : RetryDelay{}});
    }
    return out;
  });
}

}  // namespace kport::db
