// A target's bring-up: per variant, how far it got (DESIGN.md, "bring-up stage").
#include <map>

#include "impl.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;
using detail::Stmt;

namespace {

using Key = std::pair<std::string, std::string>;  // family, variant

Status latest_builds(Connection& c, const Target& t, const std::optional<std::string>& commit,
                     std::map<Key, BringupRow>& rows) {
  auto s = c.prepare(
      "SELECT family, variant, status, commit_sha, coalesce(spill_stores_bytes, 0) + coalesce(spill_loads_bytes, 0),"
      " max(id) FROM build_records WHERE target = ?1 AND (?2 IS NULL OR commit_sha = ?2) GROUP BY family, variant");
  if (!s) return std::move(s).error();
  s->bind_all(t.name, commit);
  for (;;) {
    auto row = s->step();
    if (!row) return std::move(row).error();
    if (!*row) return {};
    BringupRow& r = rows[{s->text(0), s->text(1)}];
    r.build_status = s->text(2);
    r.commit_sha = s->text(3);
    r.not_applicable = *r.build_status == "not_applicable";
    r.built = *r.build_status == "ok";
    r.resources_clean = r.built && s->int64(4) == 0;
  }
}

Status result_stages(Connection& c, const Target& t, const std::optional<std::string>& commit,
                     std::map<Key, BringupRow>& rows) {
  // Numerics count only on GPUs that can run the target's code: its arch or the arches
  // registered to check it.
  auto s = c.prepare(
      "SELECT family, variant,"
      " sum(status = 'passed' AND arch IN (SELECT arch FROM target_check_arches WHERE target = ?1 UNION SELECT ?2)),"
      " sum(status = 'passed' AND median_us IS NOT NULL),"
      " sum(status = 'passed'), sum(status IN ('failed', 'crashed', 'timeout'))"
      " FROM results WHERE target = ?1 AND (?3 IS NULL OR commit_sha = ?3) GROUP BY family, variant");
  if (!s) return std::move(s).error();
  s->bind_all(t.name, t.arch, commit);
  for (;;) {
    auto row = s->step();
    if (!row) return std::move(row).error();
    if (!*row) return {};
    BringupRow& r = rows[{s->text(0), s->text(1)}];
    r.numerics_passed = s->int64(2) > 0;
    r.measured = r.numerics_passed && s->int64(3) > 0;
    r.results_passed = s->int64(4);
    r.results_failed = s->int64(5);
  }
}

Status selected(Connection& c, const Target& t, std::map<Key, BringupRow>& rows) {
  auto s = c.prepare(
      "SELECT DISTINCT b.family, b.variant FROM best_candidates b WHERE b.target = ?1 AND b.median_us ="
      " (SELECT min(o.median_us) FROM best_candidates o WHERE o.gpu_model = b.gpu_model"
      "  AND o.family = b.family AND o.dtype = b.dtype AND o.shape = b.shape)");
  if (!s) return std::move(s).error();
  s->bind(1, t.name);
  for (;;) {
    auto row = s->step();
    if (!row) return std::move(row).error();
    if (!*row) return {};
    rows[{s->text(0), s->text(1)}].selected_best = true;
  }
}

}  // namespace

Result<std::optional<Bringup>> Store::bringup(std::string_view target, std::optional<std::string> commit_sha) {
  return m_impl->read<std::optional<Bringup>>([&](Connection& c) -> Result<std::optional<Bringup>> {
    auto ts = c.prepare(std::string(detail::k_target_select) + " WHERE name = ?1");
    if (!ts) return std::move(ts).error();
    ts->bind(1, target);
    auto t = detail::collect_one<Target>(*ts, detail::read_target);
    if (!t) return std::move(t).error();
    if (!*t) return std::optional<Bringup>{};
    std::map<Key, BringupRow> rows;
    // Every known variant appears, even one never built for this target yet.
    auto v = c.prepare("SELECT family, name FROM kernel_variants");
    if (!v) return std::move(v).error();
    for (;;) {
      auto row = v->step();
      if (!row) return std::move(row).error();
      if (!*row) break;
      rows[{v->text(0), v->text(1)}];
    }
    KPORT_TRY(latest_builds(c, **t, commit_sha, rows));
    KPORT_TRY(result_stages(c, **t, commit_sha, rows));
    KPORT_TRY(selected(c, **t, rows));
    Bringup out{std::move(**t), std::move(commit_sha), {}};
    for (auto& [key, row] : rows) {
      row.family = key.first;
      row.variant = key.second;
      row.selected_best = row.selected_best && row.measured;
      out.rows.push_back(std::move(row));
    }
    return std::optional<Bringup>(std::move(out));
  });
}

}  // namespace kport::db
