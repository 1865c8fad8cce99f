// Measure requests and the count of questions answered without a measurement
// (migration 0010; a request's library, migration 0023; an ask's, migration 0025).
#include "impl.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

namespace {

constexpr const char* k_request_select =
    "SELECT br.id, br.gpu_model, br.family, br.dtype, br.shape, br.job_id, br.requests, br.created_ms, br.updated_ms,"
    " coalesce((SELECT a.asks FROM best_asks a WHERE a.gpu_model = br.gpu_model AND a.family = br.family"
    " AND a.dtype = br.dtype AND a.shape = br.shape AND a.repo = br.repo), 0), br.repo"
    " FROM best_requests br";

BestRequest read_request(const detail::Stmt& s) {
  BestRequest r;
  r.id = s.int64(0);
  r.key = BestKey{s.text(1), s.text(2), s.text(3), s.text(4)};
  r.job_id = s.int64(5);
  r.requests = s.int64(6);
  r.created_ms = s.int64(7);
  r.updated_ms = s.int64(8);
  r.asked = s.int64(9);
  r.repo = s.text(10);
  return r;
}

// Fills each request's job as list_jobs reports it (awaiting_runner derived).
Status attach_jobs(Connection& c, std::vector<BestRequest>& requests, std::int64_t online_since) {
  for (auto& r : requests) {
    auto job = detail::load_job(c, r.job_id, online_since);
    if (!job) return std::move(job).error();
    if (!*job) return make_error(Errc::internal, "measure request " + std::to_string(r.id) + " names a missing job");
    r.job = std::move(**job);
  }
  return {};
}

Result<std::optional<BestRequest>> load_request(Connection& c, std::int64_t id, std::int64_t online_since) {
  auto s = c.prepare(std::string(k_request_select) + " WHERE br.id = ?1");
  if (!s) return std::move(s).error();
  s->bind(1, id);
  auto one = detail::collect_one<BestRequest>(*s, read_request);
  if (!one || !*one) return one;
  std::vector<BestRequest> v{std::move(**one)};
  KPORT_TRY(attach_jobs(c, v, online_since));
  return std::optional<BestRequest>(std::move(v.front()));
}

}  // namespace

Result<BestRequestOpened> Store::open_best_request(const BestKey& key, const std::string& repo,
                                                   const NewPipeline& pipeline) {
  if (pipeline.jobs.size() != 1 || pipeline.jobs.front().kind != JobKind::check)
    return make_error(Errc::invalid_argument, "a measure request queues exactly one check job");
  const std::int64_t now = m_impl->now();
  const std::int64_t online_since = m_impl->online_since(now);
  return m_impl->write<BestRequestOpened>([&](Connection& c) -> Result<BestRequestOpened> {
    // One writer runs every transaction, so no request of the key can open between
    // this read and the insert below. Another library's open request of the key is not this one.
    auto open = c.prepare(
        "SELECT br.id FROM best_requests br JOIN jobs j ON j.id = br.job_id"
        " WHERE br.gpu_model = ?1 AND br.family = ?2 AND br.dtype = ?3 AND br.shape = ?4 AND br.repo = ?5"
        " AND j.status IN ('queued', 'running') ORDER BY br.id DESC LIMIT 1");
    if (!open) return std::move(open).error();
    auto row = open->bind_all(key.gpu_model, key.family, key.dtype, key.shape, repo).step();
    if (!row) return std::move(row).error();
    std::int64_t id = 0;
    bool created = false;
    if (*row) {
      id = open->int64(0);
      auto bump = c.prepare("UPDATE best_requests SET requests = requests + 1, updated_ms = ?2 WHERE id = ?1");
      if (!bump) return std::move(bump).error();
      KPORT_TRY(bump->bind_all(id, now).run());
    } else {
      auto p = detail::insert_pipeline(c, pipeline, now);
      if (!p) return std::move(p).error();
      auto job = c.prepare("SELECT min(id) FROM jobs WHERE pipeline_id = ?1");
      if (!job) return std::move(job).error();
      auto j = job->bind(1, p->id).step();
      if (!j) return std::move(j).error();
      if (!*j || job->is_null(0)) return make_error(Errc::internal, "the measure request's job was not created");
      const std::int64_t job_id = job->int64(0);
      auto ins = c.prepare(
          "INSERT INTO best_requests(gpu_model, family, dtype, shape, repo, job_id, requests, created_ms, updated_ms)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?7)");
      if (!ins) return std::move(ins).error();
      KPORT_TRY(ins->bind_all(key.gpu_model, key.family, key.dtype, key.shape, repo, job_id, now).run());
      id = c.last_insert_rowid();
      created = true;
    }
    auto loaded = load_request(c, id, online_since);
    if (!loaded) return std::move(loaded).error();
    if (!*loaded) return make_error(Errc::internal, "measure request " + std::to_string(id) + " vanished");
    return BestRequestOpened{std::move(**loaded), created};
  });
}

Result<std::optional<BestRequest>> Store::get_best_request(std::int64_t id) {
  const std::int64_t online_since = m_impl->online_since(m_impl->now());
  return m_impl->read<std::optional<BestRequest>>(
      [&](Connection& c) -> Result<std::optional<BestRequest>> { return load_request(c, id, online_since); });
}

Result<Page<BestRequest>> Store::list_best_requests(const BestRequestFilter& f) {
  KPORT_TRY(detail::check_limit(f.limit));
  const std::int64_t online_since = m_impl->online_since(m_impl->now());
  return m_impl->read<Page<BestRequest>>([&](Connection& c) -> Result<Page<BestRequest>> {
    detail::Where w;
    w.add("br.gpu_model = ?", f.gpu_model);
    w.add("br.repo = ?", f.repo);
    w.add("br.id < ?", f.before_id);
    auto s =
        c.prepare(std::string(k_request_select) + w.sql() + " ORDER BY br.id DESC LIMIT " + std::to_string(f.limit));
    if (!s) return std::move(s).error();
    w.bind(*s);
    auto rows = detail::collect<BestRequest>(*s, read_request);
    if (!rows) return std::move(rows).error();
    KPORT_TRY(attach_jobs(c, *rows, online_since));
    return detail::make_page(std::move(*rows), f.limit, [](const BestRequest& r) { return r.id; });
  });
}

Status Store::record_best_asks(const std::vector<BestAsk>& asks, std::int64_t keep) {
  if (asks.empty()) return {};
  auto written = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    for (const auto& a : asks) {
      // One Stmt per row: the connection's cached statement is reset when it goes away.
      auto up = c.prepare(
          "INSERT INTO best_asks(gpu_model, family, dtype, shape, repo, asks, first_ms, last_ms)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
          " ON CONFLICT(gpu_model, family, dtype, shape, repo) DO UPDATE SET asks = asks + excluded.asks,"
          " last_ms = max(last_ms, excluded.last_ms)");
      if (!up) return std::move(up).error();
      KPORT_TRY(
          up->bind_all(a.key.gpu_model, a.key.family, a.key.dtype, a.key.shape, a.repo, a.asks, a.first_ms, a.last_ms)
              .run());
    }
    // Bounded: shapes nobody asked for lately are forgotten first.
    auto count = c.prepare("SELECT count(*) FROM best_asks");
    if (!count) return std::move(count).error();
    auto n = count->step();
    if (!n) return std::move(n).error();
    const std::int64_t rows = *n ? count->int64(0) : 0;
    if (rows > keep) {
      auto prune = c.prepare(
          "DELETE FROM best_asks WHERE rowid IN (SELECT rowid FROM best_asks ORDER BY last_ms, asks LIMIT ?1)");
      if (!prune) return std::move(prune).error();
      KPORT_TRY(prune->bind(1, rows - keep).run());
    }
    return true;
  });
  if (!written.ok()) return std::move(written).error();
  return {};
}

Result<std::vector<BestAsk>> Store::list_best_asks(std::string_view gpu_model, int limit,
                                                   const std::optional<std::string>& repo) {
  KPORT_TRY(detail::check_limit(limit));
  return m_impl->read<std::vector<BestAsk>>([&](Connection& c) -> Result<std::vector<BestAsk>> {
    auto s = c.prepare(
        "SELECT gpu_model, family, dtype, shape, asks, first_ms, last_ms, repo FROM best_asks"
        " WHERE (?1 = '' OR gpu_model = ?1) AND (?3 IS NULL OR repo = ?3)"
        " ORDER BY asks DESC, last_ms DESC LIMIT ?2");
    if (!s) return std::move(s).error();
    s->bind_all(gpu_model, limit, repo);
    return detail::collect<BestAsk>(*s, [](const detail::Stmt& r) {
      return BestAsk{BestKey{r.text(0), r.text(1), r.text(2), r.text(3)}, r.int64(4), r.int64(5), r.int64(6),
                     r.text(7)};
    });
  });
}

}  // namespace kport::db
