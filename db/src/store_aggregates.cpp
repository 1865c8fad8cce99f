// Aggregates: commit summary, a target's bring-up, best candidates per GPU model.
#include <map>

#include "impl.h"
#include "json_text.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;
using detail::Stmt;

namespace {

using Counts = std::vector<std::pair<std::string, std::int64_t>>;

// sql groups by ?2 = the key; ?1, when the SQL uses it, is the "online since" time.
Result<Counts> counts(Connection& c, const std::string& sql, std::int64_t online_since, std::string_view key) {
  auto s = c.prepare(sql);
  if (!s) return std::move(s).error();
  s->bind(2, key);
  if (sql.find("?1") != std::string::npos) s->bind(1, online_since);
  return detail::collect<std::pair<std::string, std::int64_t>>(
      *s, [](const Stmt& st) { return std::make_pair(st.text(0), st.int64(1)); });
}

template <typename E, typename Parse>
Status fill(std::map<E, std::int64_t>& out, Result<Counts> rows, Parse parse) {
  if (!rows) return std::move(rows).error();
  for (const auto& [name, n] : *rows)
    if (auto e = parse(name)) out[*e] += n;
  return {};
}

}  // namespace

Result<std::optional<CommitSummary>> Store::commit_summary(std::string_view sha) {
  const std::int64_t since = m_impl->online_since(m_impl->now());
  auto commit = get_commit(sha);
  if (!commit) return std::move(commit).error();
  return m_impl->read<std::optional<CommitSummary>>([&](Connection& c) -> Result<std::optional<CommitSummary>> {
    CommitSummary out;
    out.commit = commit->value_or(Commit{std::string(sha), {}, {}, {}, {}, 0});
    auto p = c.prepare("SELECT id FROM pipelines WHERE commit_sha = ?1 ORDER BY id");
    if (!p) return std::move(p).error();
    p->bind(1, sha);
    auto ids = detail::collect<std::int64_t>(*p, [](const Stmt& st) { return st.int64(0); });
    if (!ids) return std::move(ids).error();
    out.pipeline_ids = std::move(*ids);
    KPORT_TRY(
        fill(out.jobs_by_status,
             counts(c, "SELECT " KPORT_JOB_STATUS_EXPR ", count(*) FROM jobs j WHERE j.commit_sha = ?2 GROUP BY 1",
                    since, sha),
             parse_job_status));
    KPORT_TRY(fill(out.builds_by_status,
                   counts(c,
                          "SELECT status, count(*) FROM build_records WHERE commit_sha = ?2"
                          " GROUP BY status",
                          since, sha),
                   parse_build_status));
    KPORT_TRY(fill(out.results_by_status,
                   counts(c,
                          "SELECT status, count(*) FROM results WHERE commit_sha = ?2"
                          " GROUP BY status",
                          since, sha),
                   parse_result_status));
    auto t = c.prepare(
        "SELECT target FROM build_records WHERE commit_sha = ?1 UNION SELECT target FROM results WHERE commit_sha = ?1"
        " ORDER BY 1");
    if (!t) return std::move(t).error();
    t->bind(1, sha);
    auto targets = detail::collect<std::string>(*t, [](const Stmt& st) { return st.text(0); });
    if (!targets) return std::move(targets).error();
    out.targets = std::move(*targets);
    if (!*commit && out.pipeline_ids.empty() && out.targets.empty()) return std::optional<CommitSummary>{};
    return std::optional<CommitSummary>(std::move(out));
  });
}

// The order best_candidates() and best_evidence() return rows in (the answer's query
// echoes the first row's arch).
constexpr const char* k_candidate_order =
    " ORDER BY s.numel, b.shape, b.median_us IS NULL, b.median_us, b.gpu_model, b.instance";

Result<std::vector<BestCandidate>> Store::best_candidates(std::string_view gpu_model, std::string_view family,
                                                          std::string_view dtype) {
  return m_impl->read<std::vector<BestCandidate>>([&](Connection& c) -> Result<std::vector<BestCandidate>> {
    // Served from the best_candidates primary key (gpu_model, family, dtype, ...), or
    // its (family, dtype, shape) index for every GPU model.
    const std::string cols = detail::k_candidate_select;
    const std::string order = k_candidate_order;
    auto s = gpu_model.empty() ? c.prepare(cols + " WHERE b.family = ?2 AND b.dtype = ?3 AND ?1 = ''" + order)
                               : c.prepare(cols + " WHERE b.gpu_model = ?1 AND b.family = ?2 AND b.dtype = ?3" + order);
    if (!s) return std::move(s).error();
    s->bind_all(gpu_model, family, dtype);
    return detail::collect<BestCandidate>(*s, detail::read_candidate);
  });
}

Result<std::vector<BestCandidate>> Store::gpu_best_candidates(std::string_view gpu_model) {
  return m_impl->read<std::vector<BestCandidate>>([&](Connection& c) -> Result<std::vector<BestCandidate>> {
    // A range of the best_candidates primary key (gpu_model, family, dtype, ...).
    auto s = c.prepare(std::string(detail::k_candidate_select) +
                       " WHERE b.gpu_model = ?1 ORDER BY b.family, b.dtype, b.shape, b.instance");
    if (!s) return std::move(s).error();
    s->bind(1, gpu_model);
    return detail::collect<BestCandidate>(*s, detail::read_candidate);
  });
}

Result<BestEvidenceRows> Store::best_evidence(std::string_view gpu_model, std::string_view family,
                                              std::string_view dtype) {
  return m_impl->read<BestEvidenceRows>([&](Connection& c) -> Result<BestEvidenceRows> {
    BestEvidenceRows out;
    auto s = c.prepare(std::string(detail::k_candidate_select) +
                       " WHERE b.gpu_model = ?1 AND b.family = ?2 AND b.dtype = ?3" + k_candidate_order);
    if (!s) return std::move(s).error();
    s->bind_all(gpu_model, family, dtype);
    auto rows = detail::collect<BestCandidate>(*s, detail::read_candidate);
    if (!rows) return std::move(rows).error();
    out.rows = std::move(*rows);
    auto d = c.prepare(
        "SELECT driver, results, last_ms FROM result_drivers WHERE gpu_model = ?1 AND family = ?2 AND dtype = ?3"
        " ORDER BY driver");
    if (!d) return std::move(d).error();
    d->bind_all(gpu_model, family, dtype);
    auto drivers = detail::collect<DriverCount>(*d, [](const Stmt& st) {
      return DriverCount{st.text(0), st.int64(1), st.int64(2)};
    });
    if (!drivers) return std::move(drivers).error();
    out.drivers = std::move(*drivers);
    return out;
  });
}

std::uint64_t Store::best_evidence_version(std::string_view gpu_model, std::string_view family,
                                           std::string_view dtype) const noexcept {
  return m_impl->best_versions->version(gpu_model, family, dtype);
}

std::size_t Store::best_evidence_keys() const { return m_impl->best_versions->keys(); }

Result<std::vector<DriverCount>> Store::result_drivers(std::string_view gpu_model, std::string_view family,
                                                       std::string_view dtype) {
  return m_impl->read<std::vector<DriverCount>>([&](Connection& c) -> Result<std::vector<DriverCount>> {
    auto s = c.prepare(
        "SELECT driver, results, last_ms FROM result_drivers WHERE gpu_model = ?1 AND family = ?2 AND dtype = ?3"
        " ORDER BY driver");
    if (!s) return std::move(s).error();
    s->bind_all(gpu_model, family, dtype);
    return detail::collect<DriverCount>(*s, [](const Stmt& st) {
      return DriverCount{st.text(0), st.int64(1), st.int64(2)};
    });
  });
}

Result<std::vector<std::string>> Store::best_instances(std::string_view gpu_model,
                                                       const std::optional<std::string>& repo) {
  return m_impl->read<std::vector<std::string>>([&](Connection& c) -> Result<std::vector<std::string>> {
    // Of one library: its rows and those of none, best among themselves.
    auto s = c.prepare(
        "SELECT DISTINCT b.instance FROM best_candidates b WHERE b.gpu_model = ?1"
        " AND (?2 IS NULL OR b.repo IN (?2, '')) AND b.median_us ="
        " (SELECT min(o.median_us) FROM best_candidates o WHERE o.gpu_model = b.gpu_model"
        "  AND o.family = b.family AND o.dtype = b.dtype AND o.shape = b.shape"
        "  AND (?2 IS NULL OR o.repo IN (?2, ''))) ORDER BY 1");
    if (!s) return std::move(s).error();
    s->bind_all(gpu_model, repo);
    return detail::collect<std::string>(*s, [](const detail::Stmt& st) { return st.text(0); });
  });
}

Result<std::vector<BuiltInstance>> Store::built_variants(std::string_view target, std::string_view family,
                                                         const std::optional<std::string>& repo) {
  return m_impl->read<std::vector<BuiltInstance>>([&](Connection& c) -> Result<std::vector<BuiltInstance>> {
    // SQLite takes the bare columns of an aggregate query from the row holding max(id):
    // the latest build record of each variant.
    auto s = c.prepare(
        "SELECT target, family, variant, commit_sha, id, created_ms, status, max(id) FROM build_records"
        " WHERE target = ?1 AND (?2 = '' OR family = ?2) AND (?3 IS NULL OR repo IN (?3, ''))"
        " GROUP BY family, variant ORDER BY family, variant");
    if (!s) return std::move(s).error();
    s->bind_all(target, family, repo);
    std::vector<BuiltInstance> out;
    for (;;) {
      auto row = s->step();
      if (!row) return std::move(row).error();
      if (!*row) break;
      if (s->text(6) != "ok") continue;
      out.push_back(BuiltInstance{s->text(0), s->text(1), s->text(2), s->text(3), s->int64(4), s->int64(5)});
    }
    return out;
  });
}

}  // namespace kport::db
