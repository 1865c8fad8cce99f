// Pipelines and jobs: creation, listing, cancellation and queue statistics.
#include "impl.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

using detail::load_pipeline;

Result<Pipeline> Store::create_pipeline(const NewPipeline& p) {
  const std::int64_t now = m_impl->now();
  return m_impl->write<Pipeline>([&](Connection& c) -> Result<Pipeline> {
    auto ins = detail::insert_pipeline(c, p, now);
    if (!ins) return std::move(ins).error();
    if (!ins->created) return make_error(Errc::conflict, detail::already_validated(p.commit_sha, ins->id));
    auto out = load_pipeline(c, ins->id);
    if (!out) return std::move(out).error();
    return std::move(**out);
  });
}

Result<std::vector<std::int64_t>> Store::enqueue(std::int64_t pipeline_id, const std::vector<JobSpec>& jobs) {
  const std::int64_t now = m_impl->now();
  return m_impl->write<std::vector<std::int64_t>>([&](Connection& c) -> Result<std::vector<std::int64_t>> {
    auto known = load_pipeline(c, pipeline_id);
    if (!known) return std::move(known).error();
    if (!*known) return make_error(Errc::not_found, "no pipeline " + std::to_string(pipeline_id));
    return detail::insert_jobs(c, pipeline_id, jobs, now);
  });
}

Result<std::optional<Pipeline>> Store::get_pipeline(std::int64_t id) {
  return m_impl->read<std::optional<Pipeline>>([&](Connection& c) { return load_pipeline(c, id); });
}

Result<Page<Pipeline>> Store::list_pipelines(const PipelineFilter& f) {
  KPORT_TRY(detail::check_limit(f.limit));
  return m_impl->read<Page<Pipeline>>([&](Connection& c) -> Result<Page<Pipeline>> {
    detail::Where where;
    where.add("p.commit_sha = ?", f.commit_sha);
    where.add("p.repo = ?", f.repo);
    if (f.reason) where.add_value("p.reason = ?", std::string(to_string(*f.reason)));
    where.add("p.id < ?", f.before_id);
    auto s = c.prepare(std::string(detail::k_pipeline_select) + where.sql() +
                       " GROUP BY p.id ORDER BY p.id DESC LIMIT ?" + std::to_string(where.next_param()));
    if (!s) return std::move(s).error();
    where.bind(*s);
    s->bind(where.next_param(), f.limit);
    auto rows = detail::collect<Pipeline>(*s, detail::read_pipeline);
    if (!rows) return std::move(rows).error();
    return detail::make_page(std::move(*rows), f.limit, [](const Pipeline& p) { return p.id; });
  });
}

Result<std::optional<Job>> Store::get_job(std::int64_t id) {
  const std::int64_t since = m_impl->online_since(m_impl->now());
  return m_impl->read<std::optional<Job>>([&](Connection& c) { return detail::load_job(c, id, since); });
}

Result<Page<Job>> Store::list_jobs(const JobFilter& f) {
  KPORT_TRY(detail::check_limit(f.limit));
  const std::int64_t since = m_impl->online_since(m_impl->now());
  return m_impl->read<Page<Job>>([&](Connection& c) -> Result<Page<Job>> {
    detail::Where where(2);  // ?1 is the "online since" time of the derived status
    where.add("j.pipeline_id = ?", f.pipeline_id);
    if (f.kind) where.add_value("j.kind = ?", std::string(to_string(*f.kind)));
    where.add("j.commit_sha = ?", f.commit_sha);
    where.add("j.target = ?", f.target);
    where.add("(" KPORT_JOB_REPO_EXPR ") = ?", f.repo);
    if (f.status) {
      const bool waiting = *f.status == JobStatus::queued || *f.status == JobStatus::awaiting_runner;
      where.add_value("j.status = ?", std::string(waiting ? "queued" : to_string(*f.status)));
      if (waiting) where.add_value("(" KPORT_JOB_STATUS_EXPR ") = ?", std::string(to_string(*f.status)));
    }
    where.add("j.id < ?", f.before_id);
    const int limit_param = where.next_param();
    auto s = c.prepare(std::string(detail::k_job_select) + where.sql() + " ORDER BY j.id DESC LIMIT ?" +
                       std::to_string(limit_param));
    if (!s) return std::move(s).error();
    s->bind(1, since);
    where.bind(*s);
    s->bind(limit_param, f.limit);
    auto rows = detail::collect<Job>(*s, detail::read_job);
    if (!rows) return std::move(rows).error();
    return detail::make_page(std::move(*rows), f.limit, [](const Job& j) { return j.id; });
  });
}

Result<JobStatus> Store::cancel(std::int64_t job_id) {
  const std::int64_t now = m_impl->now();
  return m_impl->write<JobStatus>([&](Connection& c) -> Result<JobStatus> {
    auto job = detail::load_job(c, job_id);
    if (!job) return std::move(job).error();
    if (!*job) return make_error(Errc::not_found, "no job " + std::to_string(job_id));
    const Job& j = **job;
    if (j.status == JobStatus::queued) {
      KPORT_TRY(detail::finish_job(c, j, JobStatus::cancelled, std::string("cancelled"), now));
      return JobStatus::cancelled;
    }
    if (j.status != JobStatus::running) return j.status;
    // The runner stops at its next heartbeat; until then the lease stays its own.
    auto s = c.prepare("UPDATE jobs SET cancel_requested = 1 WHERE id = ?1");
    if (!s) return std::move(s).error();
    KPORT_TRY(s->bind(1, job_id).run());
    return JobStatus::running;
  });
}

Result<std::int64_t> Store::cancel_pipeline(std::int64_t pipeline_id) {
  const std::int64_t now = m_impl->now();
  return m_impl->write<std::int64_t>([&](Connection& c) -> Result<std::int64_t> {
    auto s = c.prepare(std::string(detail::k_job_select) +
                       " WHERE j.pipeline_id = ?2 AND j.status IN ('queued', 'running') ORDER BY j.id");
    if (!s) return std::move(s).error();
    s->bind_all(std::int64_t{0}, pipeline_id);
    auto jobs = detail::collect<Job>(*s, [](const detail::Stmt& st) { return detail::stored(detail::read_job(st)); });
    if (!jobs) return std::move(jobs).error();
    std::int64_t affected = 0;
    for (const Job& j : *jobs) {
      if (j.status == JobStatus::running) {
        auto up = c.prepare("UPDATE jobs SET cancel_requested = 1 WHERE id = ?1");
        if (!up) return std::move(up).error();
        KPORT_TRY(up->bind(1, j.id).run());
      } else {
        // An earlier cancel in this loop may already have ended it as a dependent.
        auto fresh = detail::load_job(c, j.id);
        if (!fresh) return std::move(fresh).error();
        if (!*fresh || (*fresh)->status != JobStatus::queued) continue;
        KPORT_TRY(detail::finish_job(c, j, JobStatus::cancelled, std::string("cancelled"), now));
      }
      ++affected;
    }
    return affected;
  });
}

namespace {

// Sends a finished job back to the queue for another run (store.h, "rerun").
Status requeue_finished(Connection& c, const Job& j, int attempts) {
  auto up = c.prepare(
      "UPDATE jobs SET status = 'queued', max_attempts = attempt + ?2, runner_id = NULL, lease_expires_ms = NULL,"
      " cancel_requested = 0, failure_reason = NULL, started_ms = NULL, finished_ms = NULL, not_before_ms = NULL,"
      " retry_runner_id = NULL, retry_runner_after_ms = NULL WHERE id = ?1");
  if (!up) return std::move(up).error();
  return up->bind_all(j.id, attempts).run();
}

// A completed report is reported again from the start: a new check run (GitHub keeps the
// old one as the earlier attempt), new statuses.
Status reopen_report(Connection& c, std::int64_t pipeline_id, std::int64_t now) {
  auto up = c.prepare(
      "UPDATE forge_reports SET state = 'new', check_run_id = NULL, updated_ms = ?2"
      " WHERE pipeline_id = ?1 AND state = 'completed'");
  if (!up) return std::move(up).error();
  return up->bind_all(pipeline_id, now).run();
}

Status check_rerunnable(const Job& j) {
  if (j.status == JobStatus::failed || j.status == JobStatus::cancelled) return {};
  return make_error(Errc::conflict, "job " + std::to_string(j.id) + " is " + std::string(to_string(j.status)) +
                                        "; only a failed or cancelled job runs again");
}

}  // namespace

Result<Job> Store::rerun_job(std::int64_t job_id, int attempts) {
  if (attempts < 1) return make_error(Errc::invalid_argument, "a re-run needs at least one attempt");
  const std::int64_t now = m_impl->now();
  const std::int64_t since = m_impl->online_since(now);
  return m_impl->write<Job>([&](Connection& c) -> Result<Job> {
    auto job = detail::load_job(c, job_id);
    if (!job) return std::move(job).error();
    if (!*job) return make_error(Errc::not_found, "job " + std::to_string(job_id) + " does not exist");
    KPORT_TRY(check_rerunnable(**job));
    KPORT_TRY(requeue_finished(c, **job, attempts));
    KPORT_TRY(reopen_report(c, (*job)->pipeline_id, now));
    auto out = detail::load_job(c, job_id, since);
    if (!out) return std::move(out).error();
    return std::move(**out);
  });
}

Result<std::vector<std::int64_t>> Store::rerun_pipeline(std::int64_t pipeline_id, int attempts) {
  if (attempts < 1) return make_error(Errc::invalid_argument, "a re-run needs at least one attempt");
  const std::int64_t now = m_impl->now();
  return m_impl->write<std::vector<std::int64_t>>([&](Connection& c) -> Result<std::vector<std::int64_t>> {
    auto known = load_pipeline(c, pipeline_id);
    if (!known) return std::move(known).error();
    if (!*known) return make_error(Errc::not_found, "pipeline " + std::to_string(pipeline_id) + " does not exist");
    auto s = c.prepare(std::string(detail::k_job_select) +
                       " WHERE j.pipeline_id = ?2 AND j.status IN ('failed', 'cancelled') ORDER BY j.id");
    if (!s) return std::move(s).error();
    s->bind_all(std::int64_t{0}, pipeline_id);
    auto jobs = detail::collect<Job>(*s, [](const detail::Stmt& st) { return detail::stored(detail::read_job(st)); });
    if (!jobs) return std::move(jobs).error();
    if (jobs->empty())
      return make_error(Errc::conflict,
                        "pipeline " + std::to_string(pipeline_id) + " has no failed or cancelled job to run again");
    std::vector<std::int64_t> ids;
    for (const Job& j : *jobs) {
      KPORT_TRY(requeue_finished(c, j, attempts));
      ids.push_back(j.id);
    }
    KPORT_TRY(reopen_report(c, pipeline_id, now));
    return ids;
  });
}

Result<std::optional<QueuePlace>> Store::queue_place(std::int64_t job_id) {
  const std::int64_t now = m_impl->now();
  const std::int64_t since = m_impl->online_since(now);
  return m_impl->read<std::optional<QueuePlace>>([&](Connection& c) -> Result<std::optional<QueuePlace>> {
    auto job = detail::load_job(c, job_id);
    if (!job) return std::move(job).error();
    if (!*job || (*job)->status != JobStatus::queued) return std::optional<QueuePlace>{};
    const Job& j = **job;
    const bool build = j.kind == JobKind::build;
    // The claim's own rule (store_claim.cpp pick_job): ready jobs, oldest first. Both
    // forms take the same three parameters; a build has no GPU model (?3 is NULL).
    constexpr const char* k_ready =
        " AND (q.depends_on IS NULL OR EXISTS (SELECT 1 FROM jobs d WHERE d.id = q.depends_on"
        " AND d.status = 'succeeded')) AND (q.not_before_ms IS NULL OR q.not_before_ms <= ?4)";
    auto ahead = build ? c.prepare(std::string("SELECT count(*) FROM jobs q WHERE q.status = 'queued' AND q.id < ?1"
                                               " AND q.kind = 'build' AND q.target = ?2 AND ?3 IS NULL") +
                                   k_ready)
                       : c.prepare(std::string("SELECT count(*) FROM jobs q WHERE q.status = 'queued' AND q.id < ?1"
                                               " AND q.kind = 'check' AND q.arch = ?2"
                                               " AND (q.gpu_model IS NULL OR ?3 IS NULL OR q.gpu_model = ?3)"
                                               " AND (q.driver IS NULL OR ?5 IS NULL OR q.driver = ?5)") +
                                   k_ready);
    if (!ahead) return std::move(ahead).error();
    ahead->bind_all(j.id, build ? j.target : j.arch.value_or(""), build ? std::nullopt : j.gpu_model, now);
    if (!build) ahead->bind(5, j.driver);
    auto row = ahead->step();
    if (!row) return std::move(row).error();
    QueuePlace place;
    place.ahead = ahead->int64(0);
    auto runners =
        build ? c.prepare(
                    "SELECT count(*), coalesce(sum(r.current_job IS NOT NULL), 0) FROM runners r WHERE r.role = 'build'"
                    " AND r.deregistered_ms IS NULL AND r.last_heartbeat_ms >= ?1"
                    " AND EXISTS (SELECT 1 FROM runner_targets t WHERE t.runner_id = r.id AND t.target = ?2)"
                    " AND ?3 IS NULL")
              : c.prepare(
                    "SELECT count(*), coalesce(sum(r.current_job IS NOT NULL), 0) FROM runners r WHERE r.role = 'gpu'"
                    " AND r.deregistered_ms IS NULL AND r.last_heartbeat_ms >= ?1 AND r.arch = ?2"
                    " AND (?3 IS NULL OR r.gpu_model = ?3) AND (?4 IS NULL OR r.driver = ?4)");
    if (!runners) return std::move(runners).error();
    runners->bind_all(since, build ? j.target : j.arch.value_or(""), build ? std::nullopt : j.gpu_model);
    if (!build) runners->bind(4, j.driver);
    auto rrow = runners->step();
    if (!rrow) return std::move(rrow).error();
    place.runners = runners->int64(0);
    place.runners_busy = runners->int64(1);
    return std::optional<QueuePlace>(place);
  });
}

}  // namespace kport::db
