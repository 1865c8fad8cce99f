// The A/A history of series: figures grouped by the code that produced them, read in one
// statement so a verdict costs one read however many series it compares. The code is
// the harness binary's sha256 when the result names it (any two measurements of the same
// binary are the same code, whichever pipeline ran them), else the commit and target.
#include "impl.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

namespace {

// The figures of `r` that count as A/A measurements, and their code. A screen figure
// (a few samples, kept for an instance not competitive at its shape) is another
// measurement than a precise one of the same binary: it is A/A only with screens, so an
// instance that is only ever screened still learns its noise.
constexpr const char* k_figure_columns =
    "r.gpu_model, r.driver, r.instance, r.dtype, r.shape,"
    " coalesce(nullif(json_extract(r.env_json, '$.reproduce.harness_sha256'), ''),"
    "          nullif(json_extract(r.env_json, '$.harness_sha256'), ''), r.commit_sha || ':' || r.target)"
    " || '/' || coalesce(json_extract(r.env_json, '$.timing.precision'), 'precise'),"
    " r.median_us";
constexpr const char* k_figure_filter =
    " r.status = 'passed' AND r.median_us IS NOT NULL AND r.median_us > 0 AND r.unstable = 0";

// Results of one (GPU model, family, dtype, shape), every instance, a verdict learns from.
constexpr int k_history_window = 256;

SeriesFigure read_figure(const detail::Stmt& s) {
  return SeriesFigure{s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5), s.real(6)};
}

CaseRunRecord read_run(const detail::Stmt& s) {
  CaseRunRecord r;
  int c = 0;
  r.gpu_model = s.text(c++);
  r.instance = s.text(c++);
  r.dtype = s.text(c++);
  r.shape = s.text(c++);
  r.code = s.text(c++);
  r.commit_sha = s.text(c++);
  r.target = s.text(c++);
  r.status = parse_result_status(s.text(c++)).value_or(ResultStatus::failed);
  r.seed = s.opt_int64(c++);
  r.result_id = s.int64(c++);
  r.created_ms = s.int64(c++);
  r.job_id = s.opt_int64(c++);
  r.job_results = s.int32(c++);
  r.job_broken = s.int32(c++);
  return r;
}

}  // namespace

Result<std::vector<CaseRunRecord>> Store::case_runs(const CaseRunFilter& f) {
  return m_impl->read<std::vector<CaseRunRecord>>([&](Connection& c) -> Result<std::vector<CaseRunRecord>> {
    auto s = c.prepare(
        "WITH k AS (SELECT DISTINCT gpu_model, family, dtype, shape, instance FROM results"
        "           WHERE status IN ('failed','crashed','timeout') AND (?1 = '' OR commit_sha = ?1)"
        "             AND (?2 = '' OR gpu_model = ?2)),"
        " runs AS (SELECT r.* FROM k JOIN results r ON r.gpu_model = k.gpu_model AND r.family = k.family"
        "          AND r.dtype = k.dtype AND r.shape = k.shape AND r.instance = k.instance),"
        " per_job AS (SELECT job_id, count(*) AS n, coalesce(sum(status IN ('crashed','timeout')), 0) AS broken"
        "             FROM results WHERE job_id IN (SELECT job_id FROM runs WHERE job_id IS NOT NULL) GROUP BY job_id)"
        " SELECT runs.gpu_model, runs.instance, runs.dtype, runs.shape,"
        " coalesce(nullif(json_extract(runs.env_json, '$.reproduce.harness_sha256'), ''),"
        "          nullif(json_extract(runs.env_json, '$.harness_sha256'), ''), runs.commit_sha || ':' || runs.target),"
        " runs.commit_sha, runs.target, runs.status, runs.seed, runs.id, runs.created_ms, runs.job_id,"
        " coalesce(per_job.n, 0), coalesce(per_job.broken, 0)"
        " FROM runs LEFT JOIN per_job ON per_job.job_id = runs.job_id ORDER BY runs.id");
    if (!s) return std::move(s).error();
    s->bind_all(f.commit_sha, f.gpu_model);
    return detail::collect<CaseRunRecord>(*s, read_run);
  });
}

Result<std::vector<SeriesFigure>> Store::commit_series_history(std::string_view sha) {
  return m_impl->read<std::vector<SeriesFigure>>([&](Connection& c) -> Result<std::vector<SeriesFigure>> {
    // Joined on the columns of results_by_gpu, so each series is read from an index range,
    // and only from the newest k_history_window results of its (GPU model, family, dtype,
    // shape): what a verdict costs does not grow with the years of history, and the noise
    // is the GPU's as it is now.
    auto s = c.prepare(std::string("SELECT ") + k_figure_columns +
                       " FROM (SELECT DISTINCT gpu_model, family, dtype, shape, instance, driver FROM results"
                       "       WHERE commit_sha = ?1) k"
                       " JOIN results r ON r.gpu_model = k.gpu_model AND r.family = k.family AND r.dtype = k.dtype"
                       "  AND r.shape = k.shape AND r.instance = k.instance AND r.driver = k.driver"
                       "  AND r.id >= coalesce((SELECT x.id FROM results x WHERE x.gpu_model = k.gpu_model"
                       "   AND x.family = k.family AND x.dtype = k.dtype AND x.shape = k.shape"
                       "   ORDER BY x.id DESC LIMIT 1 OFFSET " +
                       std::to_string(k_history_window - 1) +
                       "), 0)"
                       " WHERE" +
                       k_figure_filter + " ORDER BY r.id");
    if (!s) return std::move(s).error();
    s->bind(1, sha);
    return detail::collect<SeriesFigure>(*s, read_figure);
  });
}

Result<std::vector<SeriesFigure>> Store::series_history(const SeriesFilter& f) {
  return m_impl->read<std::vector<SeriesFigure>>([&](Connection& c) -> Result<std::vector<SeriesFigure>> {
    // Only the fields given become conditions, in results_by_gpu's column order, so a
    // filter that names GPU model, family, dtype and shape reads one index range.
    std::string sql = std::string("SELECT ") + k_figure_columns + " FROM results r WHERE" + k_figure_filter;
    std::vector<const std::string*> values;
    for (const auto& [column, value] :
         {std::pair{"gpu_model", &f.gpu_model}, std::pair{"family", &f.family}, std::pair{"dtype", &f.dtype},
          std::pair{"shape", &f.shape}, std::pair{"instance", &f.instance}, std::pair{"driver", &f.driver}}) {
      if (value->empty()) continue;
      values.push_back(value);
      sql += std::string(" AND r.") + column + " = ?" + std::to_string(values.size());
    }
    if (f.repo) {
      values.push_back(&*f.repo);
      sql += " AND r.repo IN (?" + std::to_string(values.size()) + ", '')";
    }
    auto s = c.prepare(sql + " ORDER BY r.driver, r.instance, r.dtype, r.shape, r.id");
    if (!s) return std::move(s).error();
    for (std::size_t i = 0; i < values.size(); ++i) s->bind(static_cast<int>(i + 1), *values[i]);
    return detail::collect<SeriesFigure>(*s, read_figure);
  });
}

}  // namespace kport::db
