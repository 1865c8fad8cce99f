// A target's bring-up facts (dashboard.h, TargetBoard): per variant, its build record and
// latest results at the target's stage commit, its declared features, and the history of
// first times for the burndown. The stages are decided from these by porting's
// decide_stages, never here.
#include <boost/json.hpp>

#include <map>
#include <tuple>

#include "impl.h"
#include "kport/porting/check_arches.h"
#include "kport/db/best_measurement.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;
using detail::Stmt;

namespace {

using Key = std::pair<std::string, std::string>;  // family, variant

template <typename Fn>
Status each_row(Result<Stmt>& s, Fn fn) {
  if (!s) return std::move(s).error();
  for (;;) {
    auto row = s->step();
    if (!row) return std::move(row).error();
    if (!*row) return {};
    fn(*s);
  }
}

// The latest commit that has a build for the target, with its library (repository): by
// author time where the commit is known (a rebuild of an old commit does not make it
// current), else by when it was built. `repo` set: that library's latest only.
Result<std::optional<std::pair<std::string, std::string>>> stage_commit(Connection& c, const std::string& target,
                                                                        const std::optional<std::string>& repo) {
  auto s = c.prepare(
      "SELECT b.commit_sha, b.repo FROM build_records b LEFT JOIN commits c ON c.sha = b.commit_sha"
      " WHERE b.target = ?1 AND (?2 IS NULL OR b.repo = ?2)"
      " ORDER BY CASE WHEN c.time_ms > 0 THEN c.time_ms ELSE b.created_ms END DESC, b.id DESC LIMIT 1");
  if (s) s->bind_all(target, repo);
  std::optional<std::pair<std::string, std::string>> out;
  KPORT_TRY(each_row(s, [&](const Stmt& st) { out.emplace(st.text(0), st.text(1)); }));
  return out;
}

// The library a commit's builds of the target belong to; nullopt when it has none.
Result<std::optional<std::string>> commit_repo(Connection& c, const std::string& target, const std::string& commit) {
  auto s = c.prepare("SELECT repo FROM build_records WHERE target = ?1 AND commit_sha = ?2 ORDER BY id DESC LIMIT 1");
  if (s) s->bind_all(target, commit);
  std::optional<std::string> out;
  KPORT_TRY(each_row(s, [&](const Stmt& st) { out = st.text(0); }));
  return out;
}

Status board_builds(Connection& c, const std::string& target, const std::string& commit,
                    std::map<Key, VariantBoard>& rows) {
  // The bare columns come from the row holding max(id): the latest record per variant.
  auto s = c.prepare(
      "SELECT family, variant, id, job_id, status, commit_sha, registers,"
      " CASE WHEN spill_stores_bytes IS NULL AND spill_loads_bytes IS NULL THEN NULL"
      " ELSE coalesce(spill_stores_bytes, 0) + coalesce(spill_loads_bytes, 0) END, shared_mem_bytes, message, max(id)"
      " FROM build_records WHERE target = ?1 AND commit_sha = ?2 GROUP BY family, variant");
  if (s) s->bind_all(target, commit);
  return each_row(s, [&](const Stmt& st) {
    VariantBoard& v = rows[{st.text(0), st.text(1)}];
    v.build_id = st.int64(2);
    v.build_job_id = st.opt_int64(3);
    v.build_status = st.text(4);
    v.build_commit = st.text(5);
    if (auto r = st.opt_int64(6)) v.registers = static_cast<int>(*r);
    v.spill_bytes = st.opt_int64(7);
    v.shared_mem_bytes = st.opt_int64(8);
    v.build_message = st.text(9);
  });
}

// The arches that check the target (porting::check_arches), as a JSON array for json_each.
std::string arches_json(const std::vector<std::string>& arches) {
  boost::json::array a;
  for (const auto& x : arches) a.emplace_back(x);
  return boost::json::serialize(a);
}

Status board_results(Connection& c, const Target& t, const std::vector<std::string>& arches, const std::string& commit,
                     std::map<Key, VariantBoard>& rows) {
  // The latest result of each key at the commit, on GPUs that run the target's code: its
  // arch or its check arches. A rerun replaces what it reran.
  auto s = c.prepare(
      "SELECT family, variant, sum(status = 'passed'), sum(status IN ('failed', 'crashed', 'timeout')),"
      " sum(status = 'passed' AND median_us IS NOT NULL), max(CASE WHEN status = 'passed' THEN ratio END),"
      " max(CASE WHEN status = 'passed' THEN tflops END), max(CASE WHEN status = 'passed' THEN gbps END),"
      " max(CASE WHEN status = 'passed' THEN id END), max(CASE WHEN status IN ('failed', 'crashed', 'timeout') THEN id "
      "END)"
      " FROM results WHERE id IN (SELECT max(id) FROM results WHERE commit_sha = ?3 AND target = ?1"
      "  AND arch IN (SELECT value FROM json_each(?2))"
      "  GROUP BY gpu_model, instance, dtype, shape)"
      " GROUP BY family, variant");
  if (s) s->bind_all(t.name, arches_json(arches), commit);
  return each_row(s, [&](const Stmt& st) {
    VariantBoard& v = rows[{st.text(0), st.text(1)}];
    v.passed = st.int64(2);
    v.failed = st.int64(3);
    v.measured = st.int64(4);
    v.max_ratio = st.opt_real(5);
    v.max_tflops = st.opt_real(6);
    v.max_gbps = st.opt_real(7);
    v.pass_result_id = st.opt_int64(8);
    v.fail_result_id = st.opt_int64(9);
  });
}

// When each stage was first reached on any commit: the burndown's history.
Status board_milestones(Connection& c, const Target& t, const std::vector<std::string>& arches,
                        const std::optional<std::string>& repo, std::map<Key, VariantBoard>& rows) {
  auto first = c.prepare(
      "SELECT b.family, b.variant, min(coalesce(nullif(c.time_ms, 0), b.created_ms)) FROM build_records b"
      " LEFT JOIN commits c ON c.sha = b.commit_sha WHERE b.target = ?1 AND b.status = 'ok'"
      " AND (?2 IS NULL OR b.repo = ?2) GROUP BY b.family, b.variant");
  if (first) first->bind_all(t.name, repo);
  KPORT_TRY(each_row(first, [&](const Stmt& st) { rows[{st.text(0), st.text(1)}].built_ms = st.int64(2); }));
  auto s = c.prepare(
      "SELECT r.family, r.variant,"
      " min(CASE WHEN r.passed > 0 THEN coalesce(nullif(c.time_ms, 0), r.first_ms) END),"
      " min(CASE WHEN r.measured > 0 THEN coalesce(nullif(c.time_ms, 0), r.first_ms) END)"
      " FROM result_rollup r LEFT JOIN commits c ON c.sha = r.commit_sha"
      " WHERE r.target = ?1 AND r.arch IN (SELECT value FROM json_each(?2))"
      " AND (?3 IS NULL OR r.commit_sha IN (SELECT commit_sha FROM build_records WHERE repo = ?3 AND target = ?1))"
      " GROUP BY r.family, r.variant");
  if (s) s->bind_all(t.name, arches_json(arches), repo);
  return each_row(s, [&](const Stmt& st) {
    VariantBoard& v = rows[{st.text(0), st.text(1)}];
    v.numerics_ms = st.opt_int64(2);
    v.measured_ms = st.opt_int64(3);
  });
}

// Shapes where one of the target's instances is the best answer, by porting's rule
// (select_best: current figures, ties within noise, an unstable figure never winning a
// tie) over every instance measured there on that GPU model, whatever its target.
// `repo` set: among that library's instances only.
Status board_selected(Connection& c, const std::string& target, const std::optional<std::string>& repo,
                      std::map<Key, VariantBoard>& rows) {
  auto s = c.prepare(
      std::string(detail::k_candidate_select) +
      " WHERE (b.gpu_model, b.family, b.dtype, b.shape) IN"
      "  (SELECT gpu_model, family, dtype, shape FROM best_candidates WHERE target = ?1 AND median_us IS NOT NULL"
      "   AND (?2 IS NULL OR repo = ?2))"
      " AND (?2 IS NULL OR b.repo = ?2)"
      " ORDER BY b.gpu_model, b.family, b.dtype, b.shape");
  if (!s) return std::move(s).error();
  s->bind_all(target, repo);
  auto candidates = detail::collect<BestCandidate>(*s, detail::read_candidate);
  if (!candidates) return std::move(candidates).error();
  // Rows come grouped by (GPU model, family, dtype, shape): one selection per group.
  std::vector<porting::Measurement> group;
  for (std::size_t i = 0; i < candidates->size(); ++i) {
    const BestCandidate& row = (*candidates)[i];
    group.push_back(to_measurement(row));
    const bool last = i + 1 == candidates->size();
    if (!last) {
      const BestCandidate& next = (*candidates)[i + 1];
      if (std::tie(next.gpu_model, next.family, next.dtype, next.shape) ==
          std::tie(row.gpu_model, row.family, row.dtype, row.shape))
        continue;
    }
    porting::SelectionQuery q{row.gpu_model, row.arch, target, group.front().shape, row.dtype};
    const porting::Selection sel = porting::select_best(q, porting::SelectionInputs{.on_gpu = group});
    if (const auto* best = sel.best(); best && best->evidence && best->evidence->target == target)
      ++rows[{row.family, best->variant}].selected;
    group.clear();
  }
  return {};
}

}  // namespace

Result<std::optional<TargetBoard>> Store::target_board(std::string_view target, std::optional<std::string> commit_sha,
                                                       std::optional<std::string> repo) {
  return m_impl->read<std::optional<TargetBoard>>([&](Connection& c) -> Result<std::optional<TargetBoard>> {
    auto ts = c.prepare(std::string(detail::k_target_select) + " WHERE name = ?1");
    if (!ts) return std::move(ts).error();
    ts->bind(1, target);
    auto t = detail::collect_one<Target>(*ts, detail::read_target);
    if (!t) return std::move(t).error();
    if (!*t) return std::optional<TargetBoard>{};
    TargetBoard out;
    out.target = std::move(**t);
    std::vector<std::string> registered;
    auto a = c.prepare("SELECT arch FROM target_check_arches WHERE target = ?1");
    if (a) a->bind(1, out.target.name);
    KPORT_TRY(each_row(a, [&](const Stmt& st) { registered.push_back(st.text(0)); }));
    // Which results count for the target is porting's rule; shown with its own arch first.
    const auto arches = porting::check_arches(out.target.arch, registered);
    if (!out.target.arch.empty()) out.check_arches.push_back(out.target.arch);
    for (const auto& x : arches)
      if (x != out.target.arch) out.check_arches.push_back(x);
    auto libs = c.prepare("SELECT DISTINCT repo FROM build_records WHERE target = ?1 ORDER BY repo");
    if (libs) libs->bind(1, out.target.name);
    KPORT_TRY(each_row(libs, [&](const Stmt& st) { out.repositories.push_back(st.text(0)); }));
    // One library's board: the one asked for, else the asked commit's, else the one built last.
    if (commit_sha) {
      out.stage_commit = std::move(commit_sha);
      if (!repo) {
        auto of = commit_repo(c, out.target.name, *out.stage_commit);
        if (!of) return std::move(of).error();
        repo = std::move(*of);
      }
    } else {
      auto latest = stage_commit(c, out.target.name, repo);
      if (!latest) return std::move(latest).error();
      if (*latest) {
        out.stage_commit = (*latest)->first;
        repo = (*latest)->second;
      }
    }
    out.repo = repo;
    std::map<Key, VariantBoard> rows;
    // Every variant of the library appears, with its declared features, even one never
    // built for this target; before any build, every variant known.
    auto v = repo ? c.prepare(
                        "SELECT family, name, features_json FROM kernel_variants v WHERE EXISTS"
                        " (SELECT 1 FROM build_records b WHERE b.repo = ?1 AND b.family = v.family"
                        "  AND b.variant = v.name) OR EXISTS (SELECT 1 FROM kernel_instances i WHERE i.repo = ?1"
                        "  AND i.family = v.family AND i.variant = v.name)")
                  : c.prepare("SELECT family, name, features_json FROM kernel_variants");
    if (v && repo) v->bind(1, *repo);
    KPORT_TRY(each_row(v, [&](const Stmt& st) { rows[{st.text(0), st.text(1)}].features_json = st.text(2); }));
    if (out.stage_commit) {
      KPORT_TRY(board_builds(c, out.target.name, *out.stage_commit, rows));
      KPORT_TRY(board_results(c, out.target, arches, *out.stage_commit, rows));
    }
    KPORT_TRY(board_milestones(c, out.target, arches, repo, rows));
    KPORT_TRY(board_selected(c, out.target.name, repo, rows));
    for (auto& [key, row] : rows) {
      row.family = key.first;
      row.variant = key.second;
      out.variants.push_back(std::move(row));
    }
    return std::optional<TargetBoard>(std::move(out));
  });
}

}  // namespace kport::db
