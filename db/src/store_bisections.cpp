// Bisections and their probe pipelines (migrations 0015, 0018).
#include "impl.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

namespace {

constexpr const char* k_bisection_select =
    "SELECT id, kind, origin, repo, target, gpu_model, arch, good_sha, bad_sha, commits_json, cases_json,"
    " good_env_json, state, cause, first_bad_sha, effect, uncertainty, summary, outcome_json, created_ms,"
    " updated_ms, finished_ms, bad_env_json, driver FROM bisections b";

Bisection read_bisection(const detail::Stmt& s) {
  Bisection b;
  b.id = s.int64(0);
  b.kind = s.text(1);
  b.origin = s.text(2);
  b.repo = s.text(3);
  b.target = s.text(4);
  b.gpu_model = s.text(5);
  b.arch = s.text(6);
  b.good_sha = s.text(7);
  b.bad_sha = s.text(8);
  b.commits_json = s.text(9);
  b.cases_json = s.text(10);
  b.good_env_json = s.text(11);
  b.state = s.text(12);
  b.cause = s.opt_text(13);
  b.first_bad_sha = s.opt_text(14);
  b.effect = s.opt_real(15);
  b.uncertainty = s.opt_real(16);
  b.summary = s.text(17);
  b.outcome_json = s.text(18);
  b.created_ms = s.int64(19);
  b.updated_ms = s.int64(20);
  b.finished_ms = s.opt_int64(21);
  b.driver = s.text(23);
  b.bad_env_json = s.text(22);
  return b;
}

Status attach_probes(Connection& c, std::vector<Bisection>& list) {
  for (auto& b : list) {
    auto s = c.prepare(
        "SELECT pipeline_id, bisection_id, commit_sha, created_ms FROM bisection_probes WHERE bisection_id = ?1"
        " ORDER BY pipeline_id");
    if (!s) return std::move(s).error();
    s->bind(1, b.id);
    auto probes = detail::collect<BisectionProbe>(*s, [](const detail::Stmt& st) {
      return BisectionProbe{st.int64(0), st.int64(1), st.text(2), st.int64(3), PipelineStatus::queued};
    });
    if (!probes) return std::move(probes).error();
    for (auto& p : *probes) {
      auto pipeline = detail::load_pipeline(c, p.pipeline_id);
      if (!pipeline) return std::move(pipeline).error();
      if (*pipeline) p.status = (*pipeline)->status;
    }
    b.probes = std::move(*probes);
  }
  return {};
}

Result<std::optional<Bisection>> load_bisection(Connection& c, std::int64_t id) {
  auto s = c.prepare(std::string(k_bisection_select) + " WHERE id = ?1");
  if (!s) return std::move(s).error();
  s->bind(1, id);
  auto one = detail::collect_one<Bisection>(*s, read_bisection);
  if (!one || !*one) return one;
  std::vector<Bisection> v{std::move(**one)};
  KPORT_TRY(attach_probes(c, v));
  return std::optional<Bisection>(std::move(v.front()));
}

Status insert_probes(Connection& c, std::int64_t bisection_id, const std::vector<NewPipeline>& probes,
                     std::int64_t now) {
  for (const auto& p : probes) {
    auto ins = detail::insert_pipeline(c, p, now);
    if (!ins) return std::move(ins).error();
    auto rec = c.prepare(
        "INSERT INTO bisection_probes(pipeline_id, bisection_id, commit_sha, created_ms) VALUES (?1, ?2, ?3, ?4)");
    if (!rec) return std::move(rec).error();
    KPORT_TRY(rec->bind_all(ins->id, bisection_id, p.commit_sha, now).run());
  }
  auto up = c.prepare("UPDATE bisections SET updated_ms = ?2 WHERE id = ?1");
  if (!up) return std::move(up).error();
  return up->bind_all(bisection_id, now).run();
}

}  // namespace

Result<std::optional<Bisection>> Store::open_bisection(const Bisection& what, const std::vector<NewPipeline>& probes) {
  const std::int64_t now = m_impl->now();
  return m_impl->write<std::optional<Bisection>>([&](Connection& c) -> Result<std::optional<Bisection>> {
    auto seen =
        c.prepare("SELECT 1 FROM bisections WHERE bad_sha = ?1 AND target = ?2 AND gpu_model = ?3 AND kind = ?4");
    if (!seen) return std::move(seen).error();
    auto row = seen->bind_all(what.bad_sha, what.target, what.gpu_model, what.kind).step();
    if (!row) return std::move(row).error();
    if (*row) return std::optional<Bisection>{};
    auto ins = c.prepare(
        "INSERT INTO bisections(kind, origin, repo, target, gpu_model, arch, good_sha, bad_sha, commits_json,"
        " cases_json, good_env_json, summary, created_ms, updated_ms, bad_env_json, driver)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13, ?14, ?15)");
    if (!ins) return std::move(ins).error();
    KPORT_TRY(ins->bind_all(what.kind, what.origin, what.repo, what.target, what.gpu_model, what.arch, what.good_sha,
                            what.bad_sha, what.commits_json, what.cases_json,
                            what.good_env_json.empty() ? std::string("{}") : what.good_env_json, what.summary, now,
                            what.bad_env_json.empty() ? std::string("{}") : what.bad_env_json, what.driver)
                  .run());
    const std::int64_t id = c.last_insert_rowid();
    KPORT_TRY(insert_probes(c, id, probes, now));
    return load_bisection(c, id);
  });
}

Result<bool> Store::add_bisection_probes(std::int64_t bisection_id, const std::vector<NewPipeline>& probes) {
  const std::int64_t now = m_impl->now();
  return m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto s = c.prepare("SELECT state FROM bisections WHERE id = ?1");
    if (!s) return std::move(s).error();
    auto row = s->bind(1, bisection_id).step();
    if (!row) return std::move(row).error();
    if (!*row) return make_error(Errc::not_found, "no bisection " + std::to_string(bisection_id));
    if (s->text(0) != "running") return false;
    KPORT_TRY(insert_probes(c, bisection_id, probes, now));
    return true;
  });
}

Result<bool> Store::finish_bisection(std::int64_t bisection_id, const BisectionEnd& end,
                                     const std::vector<NewDelivery>& deliveries) {
  if (end.state != "done" && end.state != "failed" && end.state != "cancelled")
    return make_error(Errc::invalid_argument, "a bisection ends done, failed or cancelled, not '" + end.state + "'");
  for (const auto& d : deliveries) KPORT_TRY(detail::check_delivery(d));
  const std::int64_t now = m_impl->now();
  return m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto up = c.prepare(
        "UPDATE bisections SET state = ?2, cause = ?3, first_bad_sha = ?4, effect = ?5, uncertainty = ?6,"
        " summary = ?7, outcome_json = ?8, updated_ms = ?9, finished_ms = ?9 WHERE id = ?1 AND state = 'running'");
    if (!up) return std::move(up).error();
    KPORT_TRY(up->bind_all(bisection_id, end.state, end.cause, end.first_bad_sha, end.effect, end.uncertainty,
                           end.summary, end.outcome_json.empty() ? std::string("{}") : end.outcome_json, now)
                  .run());
    if (c.changes() == 0) return false;
    for (const auto& d : deliveries) KPORT_TRY(detail::insert_delivery(c, d, now));
    return true;
  });
}

Status Store::note_bisection(std::int64_t bisection_id, const std::string& summary) {
  const std::int64_t now = m_impl->now();
  auto done = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto up = c.prepare("UPDATE bisections SET summary = ?2, updated_ms = ?3 WHERE id = ?1 AND state = 'running'");
    if (!up) return std::move(up).error();
    KPORT_TRY(up->bind_all(bisection_id, summary, now).run());
    return true;
  });
  if (!done.ok()) return std::move(done).error();
  return {};
}

Result<std::optional<Bisection>> Store::get_bisection(std::int64_t id) {
  return m_impl->read<std::optional<Bisection>>(
      [&](Connection& c) -> Result<std::optional<Bisection>> { return load_bisection(c, id); });
}

Result<Page<Bisection>> Store::list_bisections(const BisectionFilter& f) {
  KPORT_TRY(detail::check_limit(f.limit));
  return m_impl->read<Page<Bisection>>([&](Connection& c) -> Result<Page<Bisection>> {
    detail::Where w;
    w.add("b.state = ?", f.state);
    w.add("b.id < ?", f.before_id);
    if (f.commit) {
      const std::string n = std::to_string(w.next_param());
      w.add_value("(b.good_sha = ? OR b.bad_sha = ?" + n + " OR b.first_bad_sha = ?" + n +
                      " OR EXISTS (SELECT 1 FROM bisection_probes p WHERE p.bisection_id = b.id AND p.commit_sha = ?" +
                      n + "))",
                  *f.commit);
    }
    auto s =
        c.prepare(std::string(k_bisection_select) + w.sql() + " ORDER BY b.id DESC LIMIT " + std::to_string(f.limit));
    if (!s) return std::move(s).error();
    w.bind(*s);
    auto rows = detail::collect<Bisection>(*s, read_bisection);
    if (!rows) return std::move(rows).error();
    KPORT_TRY(attach_probes(c, *rows));
    return detail::make_page(std::move(*rows), f.limit, [](const Bisection& b) { return b.id; });
  });
}

Result<std::optional<std::int64_t>> Store::bisection_of_pipeline(std::int64_t pipeline_id) {
  return m_impl->read<std::optional<std::int64_t>>([&](Connection& c) -> Result<std::optional<std::int64_t>> {
    auto s = c.prepare("SELECT bisection_id FROM bisection_probes WHERE pipeline_id = ?1");
    if (!s) return std::move(s).error();
    auto row = s->bind(1, pipeline_id).step();
    if (!row) return std::move(row).error();
    if (!*row) return std::optional<std::int64_t>{};
    return std::optional<std::int64_t>(s->int64(0));
  });
}

Result<VerdictInputs> Store::probe_inputs(std::int64_t pipeline_id) {
  const std::int64_t since = m_impl->online_since(m_impl->now());
  return m_impl->read<VerdictInputs>([&](Connection& c) -> Result<VerdictInputs> {
    VerdictInputs in;
    auto jobs = c.prepare(std::string(detail::k_job_select) + " WHERE j.pipeline_id = ?2 ORDER BY j.id");
    if (!jobs) return std::move(jobs).error();
    jobs->bind_all(since, pipeline_id);
    auto j = detail::collect<Job>(*jobs, detail::read_job);
    if (!j) return std::move(j).error();
    in.jobs = std::move(*j);
    auto builds = c.prepare(std::string(detail::k_build_select) +
                            " WHERE id IN (SELECT max(b.id) FROM build_records b JOIN jobs j ON j.id = b.job_id"
                            " WHERE j.pipeline_id = ?1 GROUP BY b.target, b.family, b.variant)"
                            " ORDER BY target, family, variant");
    if (!builds) return std::move(builds).error();
    builds->bind(1, pipeline_id);
    auto b = detail::collect<BuildRecord>(*builds, detail::read_build);
    if (!b) return std::move(b).error();
    in.builds = std::move(*b);
    auto results = c.prepare(std::string(detail::k_result_select) +
                             " WHERE id IN (SELECT max(r.id) FROM results r JOIN jobs j ON j.id = r.job_id"
                             " WHERE j.pipeline_id = ?1 GROUP BY r.target, r.gpu_model, r.instance, r.dtype, r.shape)"
                             " ORDER BY target, gpu_model, instance, dtype, shape");
    if (!results) return std::move(results).error();
    results->bind(1, pipeline_id);
    auto r = detail::collect<ResultRecord>(*results, detail::read_result);
    if (!r) return std::move(r).error();
    in.results = std::move(*r);
    return in;
  });
}

}  // namespace kport::db
