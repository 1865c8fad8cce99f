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

}  // namespace kport::db
