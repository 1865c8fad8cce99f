// Results and build records: immutable rows, uploaded idempotently per job attempt.
#include <map>
#include <set>

#include "impl.h"
#include "json_text.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

namespace {

Error missing(const std::string& what, const std::string& field) {
  return make_error(Errc::invalid_argument, what + " has no " + field);
}

std::string row_name(const ResultRecord& r, std::size_t index) {
  return "result " + std::to_string(index) + " (" + r.instance + ")";
}

// A job's row takes commit, target and GPU model from its job in the transaction, so
// only a row outside a job must carry them itself.
Status validate(const ResultRecord& r, std::size_t index) {
  const std::string what = row_name(r, index);
  const bool own = !r.job_id;
  const std::pair<const std::string*, const char*> required[] = {
      {&r.family, "family"}, {&r.variant, "variant"}, {&r.instance, "instance"}, {&r.dtype, "dtype"}};
  for (const auto& [value, field] : required)
    if (value->empty()) return missing(what, field);
  if (own && r.commit_sha.empty()) return missing(what, "commit_sha");
  if (own && r.target.empty()) return missing(what, "target");
  if (own && r.gpu_model.empty()) return missing(what, "gpu_model");
  if (r.job_id && !r.runner_id)
    return make_error(Errc::invalid_argument,
                      what + " belongs to job " + std::to_string(*r.job_id) +
                          " but names no runner; a job's results come from the runner holding its lease");
  auto dims = detail::parse_shape(r.shape);
  if (!dims) return std::move(dims).error();
  auto env = detail::json_text(what + " env_json", r.env_json);
  if (!env) return std::move(env).error();
  return {};
}

// Ties a row to its job: written by the holder of the job's live lease for its current
// attempt (detail::check_holder), on a check job, with the job's commit, target and arch
// and the GPU model the job is pinned to or its runner registered with.
Status bind_to_job(Connection& c, std::map<std::int64_t, Job>& jobs, std::map<std::int64_t, Runner>& runners,
                   ResultRecord& r, std::size_t index, std::int64_t now) {
  const std::int64_t job_id = *r.job_id, runner_id = *r.runner_id;
  auto it = jobs.find(job_id);
  if (it == jobs.end()) {
    auto job = detail::holder_job(c, job_id, runner_id, r.attempt, now);
    if (!job) return std::move(job).error();
    it = jobs.emplace(job_id, std::move(*job)).first;
  }
  const Job& j = it->second;
  KPORT_TRY(detail::check_holder(j, runner_id, r.attempt, now));
  if (j.kind != JobKind::check)
    return make_error(Errc::conflict, "job " + std::to_string(job_id) + " is a " + std::string(to_string(j.kind)) +
                                          " job; results come from check jobs");
  auto rt = runners.find(runner_id);
  if (rt == runners.end()) {
    auto runner = detail::load_runner(c, runner_id);
    if (!runner) return std::move(runner).error();
    if (!*runner) return make_error(Errc::not_found, "no runner " + std::to_string(runner_id));
    rt = runners.emplace(runner_id, std::move(**runner)).first;
  }
  const Runner& who = rt->second;
  const std::string what = row_name(r, index);
  KPORT_TRY(detail::from_job(r.commit_sha, j.commit_sha, "commit", what, job_id));
  KPORT_TRY(detail::from_job(r.target, j.target, "target", what, job_id));
  KPORT_TRY(detail::from_job(r.gpu_model, j.gpu_model.value_or(who.caps.gpu_model), "gpu_model", what, job_id));
  KPORT_TRY(detail::from_job(r.arch, j.arch.value_or(who.caps.arch), "arch", what, job_id));
  if (r.gpu_model.empty()) return missing(what, "gpu_model");
  return {};
}

Result<std::optional<std::int64_t>> find_id(Connection& c, const char* sql, std::int64_t job_id, int attempt,
                                            const std::string& a, const std::string& b, const std::string& d) {
  auto s = c.prepare(sql);
  if (!s) return std::move(s).error();
  s->bind_all(job_id, attempt, a, b, d);
  return detail::collect_one<std::int64_t>(*s, [](const detail::Stmt& st) { return st.int64(0); });
}

Status insert_shape(Connection& c, const std::string& shape) {
  auto dims = detail::parse_shape(shape);
  if (!dims) return std::move(dims).error();
  double numel = 1;
  for (const auto& d : *dims) numel *= static_cast<double>(d.second);
  auto s = c.prepare("INSERT OR IGNORE INTO shapes(shape, dims_json, numel) VALUES (?1, ?2, ?3)");
  if (!s) return std::move(s).error();
  return s->bind_all(shape, detail::dims_to_json(*dims), numel).run();
}

}  // namespace

Result<std::vector<PutOutcome>> Store::put_results(const std::vector<ResultRecord>& results) {
  for (std::size_t i = 0; i < results.size(); ++i) KPORT_TRY(validate(results[i], i));
  const std::int64_t now = m_impl->now();
  return m_impl->write<std::vector<PutOutcome>>([&](Connection& c) -> Result<std::vector<PutOutcome>> {
    std::vector<PutOutcome> out;
    std::map<std::int64_t, Job> jobs;
    std::map<std::int64_t, Runner> runners;
    std::set<std::string, std::less<>> shapes;  // an upload repeats few shapes
    for (std::size_t i = 0; i < results.size(); ++i) {
      ResultRecord r = results[i];
      if (r.job_id) {
        // The holder rule comes before duplicates: a retry is answered only while the
        // attempt is live, and nobody else learns what it stored.
        KPORT_TRY(bind_to_job(c, jobs, runners, r, i, now));
        auto dup = find_id(c,
                           "SELECT id FROM results WHERE job_id = ?1 AND attempt = ?2 AND instance = ?3"
                           " AND dtype = ?4 AND shape = ?5",
                           *r.job_id, r.attempt, r.instance, r.dtype, r.shape);
        if (!dup) return std::move(dup).error();
        if (*dup) {
          out.push_back(PutOutcome{**dup, true});
          continue;
        }
      }
      if (shapes.insert(r.shape).second) KPORT_TRY(insert_shape(c, r.shape));
      KPORT_TRY(detail::insert_result(c, r, now));
      out.push_back(PutOutcome{c.last_insert_rowid(), false});
    }
    return out;
  });
}

Result<std::optional<ResultRecord>> Store::get_result(std::int64_t id) {
  return m_impl->read<std::optional<ResultRecord>>([&](Connection& c) -> Result<std::optional<ResultRecord>> {
    auto s = c.prepare(std::string(detail::k_result_select) + " WHERE id = ?1");
    if (!s) return std::move(s).error();
    s->bind(1, id);
    return detail::collect_one<ResultRecord>(*s, detail::read_result);
  });
}

Result<Page<ResultRecord>> Store::list_results(const ResultFilter& f) {
  KPORT_TRY(detail::check_limit(f.limit));
  return m_impl->read<Page<ResultRecord>>([&](Connection& c) -> Result<Page<ResultRecord>> {
    // Without table statistics SQLite may walk a broad index (every result of a target)
    // when a narrow one fits. A unary "+" keeps a column off the index choice, so the
    // most selective filter present picks the index: job or commit, then GPU model,
    // then target. Every one of those indexes ends in id, so pages need no sort.
    const bool by_job = f.job_id.has_value(), by_commit = !by_job && f.commit_sha;
    const bool by_gpu = !by_job && !by_commit && f.gpu_model;
    const std::string off_gpu = by_job || by_commit ? "+" : "";
    const std::string off_target = by_job || by_commit || by_gpu ? "+" : "";
    detail::Where where;
    where.add((by_job ? "+" : "") + std::string("commit_sha = ?"), f.commit_sha);
    where.add(off_target + "target = ?", f.target);
    where.add(off_gpu + "gpu_model = ?", f.gpu_model);
    where.add(off_gpu + "family = ?", f.family);
    where.add("+variant = ?", f.variant);
    where.add(off_target + "instance = ?", f.instance);
    where.add(off_gpu + "dtype = ?", f.dtype);
    where.add(off_gpu + "shape = ?", f.shape);
    if (f.status) where.add_value("+status = ?", std::string(to_string(*f.status)));
    where.add("job_id = ?", f.job_id);
    where.add("created_ms >= ?", f.since_ms);
    where.add("id < ?", f.before_id);
    const int limit_param = where.next_param();
    auto s = c.prepare(std::string(detail::k_result_select) + where.sql() + " ORDER BY id DESC LIMIT ?" +
                       std::to_string(limit_param));
    if (!s) return std::move(s).error();
    where.bind(*s);
    s->bind(limit_param, f.limit);
    auto rows = detail::collect<ResultRecord>(*s, detail::read_result);
    if (!rows) return std::move(rows).error();
    return detail::make_page(std::move(*rows), f.limit, [](const ResultRecord& r) { return r.id; });
  });
}

}  // namespace kport::db
