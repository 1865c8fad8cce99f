// What a commit's verdict and a driver revalidation are decided from, and the
// re-measure and revalidation records that keep each of them from happening twice.
#include "impl.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

namespace {

Remeasure read_remeasure(const detail::Stmt& s) {
  return Remeasure{s.text(0), s.text(1), s.text(2), s.int64(3), s.text(4), s.int64(5)};
}

Revalidation read_revalidation(const detail::Stmt& s) {
  return Revalidation{s.text(0), s.text(1), s.text(2), s.text(3), s.opt_int64(4), s.int64(5)};
}

}  // namespace

Result<std::optional<std::string>> Store::validated_ancestor(std::string_view sha, int max_depth) {
  return m_impl->read<std::optional<std::string>>([&](Connection& c) -> Result<std::optional<std::string>> {
    std::string at(sha);
    for (int depth = 0; depth < max_depth; ++depth) {
      // Fresh statements each step: a cached one is reset when its handle goes away.
      auto parent = c.prepare("SELECT parent_sha FROM commits WHERE sha = ?1");
      if (!parent) return std::move(parent).error();
      auto row = parent->bind(1, at).step();
      if (!row) return std::move(row).error();
      if (!*row || parent->is_null(0)) return std::optional<std::string>{};
      at = parent->text(0);
      // A bisection's probe (migration 0015) measures a commit for the search only.
      auto validated = c.prepare(
          "SELECT EXISTS (SELECT 1 FROM build_records WHERE commit_sha = ?1 AND (job_id IS NULL OR job_id NOT IN"
          " (SELECT j.id FROM jobs j JOIN bisection_probes bp ON bp.pipeline_id = j.pipeline_id)))"
          " OR EXISTS (SELECT 1 FROM results WHERE commit_sha = ?1 AND (job_id IS NULL OR job_id NOT IN"
          " (SELECT j.id FROM jobs j JOIN bisection_probes bp ON bp.pipeline_id = j.pipeline_id)))");
      if (!validated) return std::move(validated).error();
      auto v = validated->bind(1, at).step();
      if (!v) return std::move(v).error();
      if (*v && validated->int64(0) != 0) return std::optional<std::string>(at);
    }
    return std::optional<std::string>{};
  });
}

Result<VerdictInputs> Store::verdict_inputs(std::string_view sha) {
  const std::int64_t since = m_impl->online_since(m_impl->now());
  return m_impl->read<VerdictInputs>([&](Connection& c) -> Result<VerdictInputs> {
    VerdictInputs in;
    // A measure request (migration 0010) times a shape nobody validated before on a build
    // that was already judged: what it finds answers /api/v1/best, not the commit's verdict.
    auto jobs = c.prepare(std::string(detail::k_job_select) +
                          " WHERE j.commit_sha = ?2 AND j.purpose <> 'measure_request'"
                          " AND j.pipeline_id NOT IN (SELECT pipeline_id FROM bisection_probes) ORDER BY j.id");
    if (!jobs) return std::move(jobs).error();
    jobs->bind_all(since, sha);
    auto j = detail::collect<Job>(*jobs, detail::read_job);
    if (!j) return std::move(j).error();
    in.jobs = std::move(*j);
    // The latest record of each key: a rebuild or a re-measure replaces what came before.
    auto builds = c.prepare(std::string(detail::k_build_select) +
                            " WHERE id IN (SELECT max(id) FROM build_records WHERE commit_sha = ?1"
                            " AND (job_id IS NULL OR job_id NOT IN (SELECT j.id FROM jobs j"
                            " JOIN bisection_probes bp ON bp.pipeline_id = j.pipeline_id))"
                            " GROUP BY target, family, variant) ORDER BY target, family, variant");
    if (!builds) return std::move(builds).error();
    builds->bind(1, sha);
    auto b = detail::collect<BuildRecord>(*builds, detail::read_build);
    if (!b) return std::move(b).error();
    in.builds = std::move(*b);
    // Revalidations measure old commits on new drivers; they judge the driver, not the commit.
    auto results = c.prepare(
        std::string(detail::k_result_select) +
        " WHERE id IN (SELECT max(r.id) FROM results r LEFT JOIN jobs j ON j.id = r.job_id"
        " WHERE r.commit_sha = ?1 AND (j.purpose IS NULL OR j.purpose NOT IN ('revalidate', 'measure_request'))"
        " AND (j.id IS NULL OR j.pipeline_id NOT IN (SELECT pipeline_id FROM bisection_probes))"
        " GROUP BY r.target, r.gpu_model, r.instance, r.dtype, r.shape)"
        " ORDER BY target, gpu_model, instance, dtype, shape");
    if (!results) return std::move(results).error();
    results->bind(1, sha);
    auto r = detail::collect<ResultRecord>(*results, detail::read_result);
    if (!r) return std::move(r).error();
    in.results = std::move(*r);
    auto rm = c.prepare(
        "SELECT commit_sha, target, gpu_model, job_id, instances_json, created_ms FROM remeasures WHERE commit_sha = "
        "?1");
    if (!rm) return std::move(rm).error();
    rm->bind(1, sha);
    auto m = detail::collect<Remeasure>(*rm, read_remeasure);
    if (!m) return std::move(m).error();
    in.remeasures = std::move(*m);
    return in;
  });
}

Result<bool> Store::request_remeasure(std::int64_t pipeline_id, const Remeasure& what, const JobSpec& job) {
  const std::int64_t now = m_impl->now();
  return m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    auto seen = c.prepare("SELECT 1 FROM remeasures WHERE commit_sha = ?1 AND target = ?2 AND gpu_model = ?3");
    if (!seen) return std::move(seen).error();
    auto row = seen->bind_all(what.commit_sha, what.target, what.gpu_model).step();
    if (!row) return std::move(row).error();
    if (*row) return false;
    auto id = detail::insert_job(c, pipeline_id, job, now);
    if (!id) return std::move(id).error();
    auto ins = c.prepare(
        "INSERT INTO remeasures(commit_sha, target, gpu_model, job_id, instances_json, created_ms)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!ins) return std::move(ins).error();
    KPORT_TRY(ins->bind_all(what.commit_sha, what.target, what.gpu_model, *id,
                            what.instances_json.empty() ? std::string("[]") : what.instances_json, now)
                  .run());
    return true;
  });
}

Result<std::optional<Revalidation>> Store::open_revalidation(const Revalidation& what, const NewPipeline& p) {
  const std::int64_t now = m_impl->now();
  return m_impl->write<std::optional<Revalidation>>([&](Connection& c) -> Result<std::optional<Revalidation>> {
    auto seen = c.prepare("SELECT 1 FROM revalidations WHERE gpu_model = ?1 AND driver = ?2");
    if (!seen) return std::move(seen).error();
    auto row = seen->bind_all(what.gpu_model, what.driver).step();
    if (!row) return std::move(row).error();
    if (*row) return std::optional<Revalidation>{};
    Revalidation out = what;
    out.created_ms = now;
    out.pipeline_id.reset();
    // Nothing built for the GPU's arch yet: recorded, no pipeline (its checks would wait forever).
    if (!p.jobs.empty()) {
      // Each library's check of a built target is split over the GPUs of the model that
      // could take it now, as a push's is (detail::split_check).
      NewPipeline split = p;
      split.jobs.clear();
      for (const JobSpec& spec : p.jobs) {
        std::optional<Job> build;
        if (spec.kind == JobKind::check && spec.depends_on && *spec.depends_on > 0) {
          auto loaded = detail::load_job(c, *spec.depends_on);
          if (!loaded) return std::move(loaded).error();
          build = std::move(*loaded);
        }
        if (!build) {
          split.jobs.push_back(spec);
          continue;
        }
        auto parts = detail::split_check(c, spec, *build, m_impl->online_since(now), 0);
        if (!parts) return std::move(parts).error();
        split.jobs.insert(split.jobs.end(), parts->begin(), parts->end());
      }
      auto ins = detail::insert_pipeline(c, split, now);
      if (!ins) return std::move(ins).error();
      out.pipeline_id = ins->id;
    }
    auto rec = c.prepare(
        "INSERT INTO revalidations(gpu_model, driver, arch, previous_driver, pipeline_id, created_ms)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!rec) return std::move(rec).error();
    KPORT_TRY(rec->bind_all(out.gpu_model, out.driver, out.arch, out.previous_driver, out.pipeline_id, now).run());
    return std::optional<Revalidation>(std::move(out));
  });
}

Result<std::vector<Revalidation>> Store::list_revalidations() {
  return m_impl->read<std::vector<Revalidation>>([&](Connection& c) -> Result<std::vector<Revalidation>> {
    auto s = c.prepare(
        "SELECT gpu_model, driver, arch, previous_driver, pipeline_id, created_ms FROM revalidations"
        " ORDER BY created_ms DESC, gpu_model, driver");
    if (!s) return std::move(s).error();
    return detail::collect<Revalidation>(*s, read_revalidation);
  });
}

Result<std::vector<ResultRecord>> Store::driver_results(std::string_view gpu_model, std::string_view driver) {
  return m_impl->read<std::vector<ResultRecord>>([&](Connection& c) -> Result<std::vector<ResultRecord>> {
    auto s = c.prepare(std::string(detail::k_result_select) +
                       " WHERE id IN (SELECT max(id) FROM results WHERE gpu_model = ?1 AND driver = ?2"
                       " GROUP BY repo, target, instance, dtype, shape) ORDER BY repo, target, instance, dtype, shape");
    if (!s) return std::move(s).error();
    s->bind_all(gpu_model, driver);
    return detail::collect<ResultRecord>(*s, detail::read_result);
  });
}

}  // namespace kport::db
