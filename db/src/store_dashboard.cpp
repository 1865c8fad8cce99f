// The dashboard's read models (dashboard.h). Every query here reads summaries or an
// index range, never a scan of the result history: result_rollup for a target's
// figures, best_candidates for selections and peaks, results_by_commit and
// results_by_instance for a commit's or a kernel's own rows.
#include <map>

#include "impl.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;
using detail::Stmt;

namespace {

using Key = std::pair<std::string, std::string>;  // family, variant

// Runs a prepared statement and hands every row to fn.
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

Status board_builds(Connection& c, const std::string& target, std::map<Key, VariantBoard>& rows) {
  // The bare columns come from the row holding max(id): the latest record per variant.
  auto s = c.prepare(
      "SELECT family, variant, id, job_id, status, commit_sha, registers,"
      " CASE WHEN spill_stores_bytes IS NULL AND spill_loads_bytes IS NULL THEN NULL"
      " ELSE coalesce(spill_stores_bytes, 0) + coalesce(spill_loads_bytes, 0) END, shared_mem_bytes, max(id)"
      " FROM build_records WHERE target = ?1 GROUP BY family, variant");
  if (s) s->bind(1, target);
  KPORT_TRY(each_row(s, [&](const Stmt& st) {
    VariantBoard& v = rows[{st.text(0), st.text(1)}];
    v.build_id = st.int64(2);
    v.build_job_id = st.opt_int64(3);
    v.build_status = st.text(4);
    v.build_commit = st.text(5);
    if (auto r = st.opt_int64(6)) v.registers = static_cast<int>(*r);
    v.spill_bytes = st.opt_int64(7);
    v.shared_mem_bytes = st.opt_int64(8);
  }));
  auto first = c.prepare(
      "SELECT b.family, b.variant, min(coalesce(c.time_ms, b.created_ms)) FROM build_records b"
      " LEFT JOIN commits c ON c.sha = b.commit_sha WHERE b.target = ?1 AND b.status = 'ok'"
      " GROUP BY b.family, b.variant");
  if (first) first->bind(1, target);
  return each_row(first, [&](const Stmt& st) { rows[{st.text(0), st.text(1)}].built_ms = st.int64(2); });
}

Status board_results(Connection& c, const Target& t, std::map<Key, VariantBoard>& rows) {
  // Numerics count only on GPUs that run the target's code: its arch or its check arches.
  auto s = c.prepare(
      "SELECT r.family, r.variant, sum(r.passed), sum(r.failed), sum(r.measured), max(r.max_ratio),"
      " max(r.max_tflops), max(r.max_gbps), max(r.pass_id), max(r.fail_id),"
      " min(CASE WHEN r.passed > 0 THEN coalesce(c.time_ms, r.first_ms) END),"
      " min(CASE WHEN r.measured > 0 THEN coalesce(c.time_ms, r.first_ms) END)"
      " FROM result_rollup r LEFT JOIN commits c ON c.sha = r.commit_sha"
      " WHERE r.target = ?1 AND r.arch IN (SELECT arch FROM target_check_arches WHERE target = ?1 UNION SELECT ?2)"
      " GROUP BY r.family, r.variant");
  if (s) s->bind_all(t.name, t.arch);
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
    v.numerics_ms = st.opt_int64(10);
    v.measured_ms = st.opt_int64(11);
  });
}

Status board_selected(Connection& c, const std::string& target, std::map<Key, VariantBoard>& rows) {
  auto s = c.prepare(
      "SELECT b.family, b.variant, count(*) FROM best_candidates b WHERE b.target = ?1 AND b.median_us ="
      " (SELECT min(o.median_us) FROM best_candidates o WHERE o.gpu_model = b.gpu_model"
      "  AND o.family = b.family AND o.dtype = b.dtype AND o.shape = b.shape) GROUP BY b.family, b.variant");
  if (s) s->bind(1, target);
  return each_row(s, [&](const Stmt& st) { rows[{st.text(0), st.text(1)}].selected = st.int64(2); });
}

}  // namespace

Result<std::optional<TargetBoard>> Store::target_board(std::string_view target) {
  return m_impl->read<std::optional<TargetBoard>>([&](Connection& c) -> Result<std::optional<TargetBoard>> {
    auto ts = c.prepare(std::string(detail::k_target_select) + " WHERE name = ?1");
    if (!ts) return std::move(ts).error();
    ts->bind(1, target);
    auto t = detail::collect_one<Target>(*ts, detail::read_target);
    if (!t) return std::move(t).error();
    if (!*t) return std::optional<TargetBoard>{};
    TargetBoard out;
    out.target = std::move(**t);
    out.check_arches.push_back(out.target.arch);
    auto a = c.prepare("SELECT arch FROM target_check_arches WHERE target = ?1 AND arch <> ?2 ORDER BY arch");
    if (a) a->bind_all(out.target.name, out.target.arch);
    KPORT_TRY(each_row(a, [&](const Stmt& st) { out.check_arches.push_back(st.text(0)); }));
    std::map<Key, VariantBoard> rows;
    // Every known variant appears, even one never built for this target yet.
    auto v = c.prepare("SELECT family, name FROM kernel_variants");
    KPORT_TRY(each_row(v, [&](const Stmt& st) { rows[{st.text(0), st.text(1)}]; }));
    KPORT_TRY(board_builds(c, out.target.name, rows));
    KPORT_TRY(board_results(c, out.target, rows));
    KPORT_TRY(board_selected(c, out.target.name, rows));
    for (auto& [key, row] : rows) {
      row.family = key.first;
      row.variant = key.second;
      out.variants.push_back(std::move(row));
    }
    return std::optional<TargetBoard>(std::move(out));
  });
}

Result<std::vector<ResultBrief>> Store::commit_results(std::string_view sha) {
  return m_impl->read<std::vector<ResultBrief>>([&](Connection& c) -> Result<std::vector<ResultBrief>> {
    // A rerun of the same key on the same commit supersedes the earlier result.
    auto s = c.prepare(
        "SELECT id, target, gpu_model, family, variant, instance, dtype, shape, status, median_us, stddev_us,"
        " tflops, gbps, ratio, max(id) FROM results WHERE commit_sha = ?1"
        " GROUP BY target, gpu_model, instance, dtype, shape ORDER BY target, gpu_model, instance, dtype, shape");
    if (s) s->bind(1, sha);
    std::vector<ResultBrief> out;
    KPORT_TRY(each_row(s, [&](const Stmt& st) {
      ResultBrief b;
      b.id = st.int64(0);
      b.target = st.text(1);
      b.gpu_model = st.text(2);
      b.family = st.text(3);
      b.variant = st.text(4);
      b.instance = st.text(5);
      b.dtype = st.text(6);
      b.shape = st.text(7);
      b.status = parse_result_status(st.text(8)).value_or(ResultStatus::failed);
      b.median_us = st.opt_real(9);
      b.stddev_us = st.opt_real(10);
      b.tflops = st.opt_real(11);
      b.gbps = st.opt_real(12);
      b.ratio = st.opt_real(13);
      out.push_back(std::move(b));
    }));
    return out;
  });
}

Result<std::vector<KernelPoint>> Store::kernel_history(std::string_view instance, std::string_view dtype,
                                                       std::string_view shape) {
  return m_impl->read<std::vector<KernelPoint>>([&](Connection& c) -> Result<std::vector<KernelPoint>> {
    auto s = c.prepare(
        "SELECT r.gpu_model, r.commit_sha, coalesce(c.time_ms, 0), count(*), avg(r.median_us),"
        " min(r.median_us - coalesce(r.stddev_us, 0)), max(r.median_us + coalesce(r.stddev_us, 0)),"
        " avg(r.tflops), avg(r.gbps), avg(r.ratio), max(r.id), min(r.created_ms)"
        " FROM results r LEFT JOIN commits c ON c.sha = r.commit_sha"
        " WHERE r.instance = ?1 AND r.dtype = ?2 AND r.shape = ?3 AND r.status = 'passed'"
        " AND r.median_us IS NOT NULL GROUP BY r.gpu_model, r.commit_sha ORDER BY r.gpu_model, 3, 12");
    if (s) s->bind_all(instance, dtype, shape);
    std::vector<KernelPoint> out;
    KPORT_TRY(each_row(s, [&](const Stmt& st) {
      KernelPoint p;
      p.gpu_model = st.text(0);
      p.commit_sha = st.text(1);
      p.commit_time_ms = st.int64(2);
      p.results = st.int64(3);
      p.median_us = st.real(4);
      p.low_us = st.real(5);
      p.high_us = st.real(6);
      p.tflops = st.opt_real(7);
      p.gbps = st.opt_real(8);
      p.ratio = st.opt_real(9);
      p.latest_result_id = st.int64(10);
      out.push_back(std::move(p));
    }));
    return out;
  });
}

Result<std::vector<GpuPeak>> Store::gpu_peaks(std::string_view family, std::string_view dtype) {
  return m_impl->read<std::vector<GpuPeak>>([&](Connection& c) -> Result<std::vector<GpuPeak>> {
    // The fastest median per shape also holds the highest throughput for that shape,
    // so the maximum over best_candidates is the maximum over every passing result.
    auto s = c.prepare(
        "SELECT gpu_model, max(max(coalesce(tflops, 0), coalesce(tflops / ratio, 0))),"
        " max(max(coalesce(gbps, 0), coalesce(gbps / ratio, 0))) FROM best_candidates"
        " WHERE family = ?1 AND dtype = ?2 GROUP BY gpu_model ORDER BY gpu_model");
    if (s) s->bind_all(family, dtype);
    std::vector<GpuPeak> out;
    KPORT_TRY(each_row(s, [&](const Stmt& st) {
      GpuPeak p{st.text(0), {}, {}};
      if (st.real(1) > 0) p.tflops = st.real(1);
      if (st.real(2) > 0) p.gbps = st.real(2);
      out.push_back(std::move(p));
    }));
    return out;
  });
}

Result<std::vector<std::pair<std::string, std::string>>> Store::measured_configs(std::string_view instance) {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  return m_impl->read<Pairs>([&](Connection& c) -> Result<Pairs> {
    auto s = c.prepare("SELECT DISTINCT dtype, shape FROM best_candidates WHERE instance = ?1 ORDER BY 1, 2");
    if (s) s->bind(1, instance);
    Pairs out;
    KPORT_TRY(each_row(s, [&](const Stmt& st) { out.emplace_back(st.text(0), st.text(1)); }));
    return out;
  });
}

}  // namespace kport::db
