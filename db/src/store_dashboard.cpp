// The dashboard's read models (dashboard.h). Every query here reads summaries or an
// index range, never a scan of the result history: best_candidates for peaks,
// results_by_instance for a kernel's own rows. A
// target's board (its bring-up facts) is in store_bringup.cpp.
#include <map>

#include "impl.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;
using detail::Stmt;

namespace {

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

}  // namespace

Result<std::vector<KernelPoint>> Store::kernel_history(std::string_view instance, std::string_view dtype,
                                                       std::string_view shape, const std::optional<std::string>& repo) {
  return m_impl->read<std::vector<KernelPoint>>([&](Connection& c) -> Result<std::vector<KernelPoint>> {
    auto s = c.prepare(
        "SELECT r.gpu_model, r.commit_sha, coalesce(nullif(c.time_ms, 0), min(r.created_ms)), count(*),"
        " avg(r.median_us),"
        " min(r.median_us - coalesce(r.stddev_us, 0)), max(r.median_us + coalesce(r.stddev_us, 0)),"
        " avg(r.tflops), avg(r.gbps), avg(r.ratio), max(r.id), min(r.created_ms)"
        " FROM results r LEFT JOIN commits c ON c.sha = r.commit_sha"
        " WHERE r.instance = ?1 AND r.dtype = ?2 AND r.shape = ?3 AND r.status = 'passed'"
        " AND r.median_us IS NOT NULL AND (?4 IS NULL OR r.repo IN (?4, ''))"
        " GROUP BY r.gpu_model, r.commit_sha ORDER BY r.gpu_model, 3, 12");
    if (s) s->bind_all(instance, dtype, shape, repo);
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

Result<std::vector<std::pair<std::string, std::string>>> Store::measured_configs(
    std::string_view instance, const std::optional<std::string>& repo) {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  return m_impl->read<Pairs>([&](Connection& c) -> Result<Pairs> {
    auto s = c.prepare(
        "SELECT DISTINCT dtype, shape FROM best_candidates WHERE instance = ?1"
        " AND (?2 IS NULL OR repo IN (?2, '')) ORDER BY 1, 2");
    if (s) s->bind_all(instance, repo);
    Pairs out;
    KPORT_TRY(each_row(s, [&](const Stmt& st) { out.emplace_back(st.text(0), st.text(1)); }));
    return out;
  });
}

}  // namespace kport::db
