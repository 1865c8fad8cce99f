#include "queue_ops.h"

#include <boost/json.hpp>

#include <algorithm>
#include <map>

#include "json_text.h"
#include "kport/api/job_payload.h"
#include "kport/porting/check_arches.h"
#include "kport/porting/check_shards.h"
#include "rows.h"

namespace kport::db::detail {

namespace {

Error bad(std::string message) { return make_error(Errc::invalid_argument, std::move(message)); }

}  // namespace

Result<std::int64_t> insert_job(Connection& c, std::int64_t pipeline_id, const JobSpec& spec, std::int64_t now) {
  const std::string what = std::string(to_string(spec.kind)) + " job for target \"" + spec.target + "\"";
  if (spec.commit_sha.empty()) return bad(what + " has no commit_sha");
  if (spec.target.empty()) return bad("a " + std::string(to_string(spec.kind)) + " job needs a target");
  if (spec.kind == JobKind::check && (!spec.arch || spec.arch->empty()))
    return bad(what + " needs the arch of the GPUs that must run it");
  if (spec.max_attempts < 1) return bad(what + ": max_attempts must be at least 1");
  auto payload = json_text("payload_json", spec.payload_json);
  if (!payload) return std::move(payload).error();
  if (spec.depends_on) {
    auto dep = c.prepare("SELECT 1 FROM jobs WHERE id = ?1");
    if (!dep) return std::move(dep).error();
    auto row = dep->bind(1, *spec.depends_on).step();
    if (!row) return std::move(row).error();
    if (!*row) return bad(what + " depends on job " + std::to_string(*spec.depends_on) + ", which does not exist");
  }
  auto ins = c.prepare(
      "INSERT INTO jobs(pipeline_id, kind, commit_sha, target, arch, gpu_model, depends_on,"
      " max_attempts, payload_json, created_ms, purpose, driver) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
      " ?12)");
  if (!ins) return std::move(ins).error();
  KPORT_TRY(ins->bind_all(pipeline_id, to_string(spec.kind), spec.commit_sha, spec.target, spec.arch, spec.gpu_model,
                          spec.depends_on, spec.max_attempts, *payload, now, to_string(spec.purpose), spec.driver)
                .run());
  return c.last_insert_rowid();
}

Result<std::vector<std::int64_t>> insert_jobs(Connection& c, std::int64_t pipeline_id, const std::vector<JobSpec>& jobs,
                                              std::int64_t now) {
  std::vector<std::int64_t> ids;
  for (const JobSpec& spec : jobs) {
    JobSpec resolved = spec;
    // The caller cannot know the ids of jobs it creates in the same call.
    if (spec.depends_on && *spec.depends_on < 0) {
      const auto index = static_cast<std::size_t>(-(*spec.depends_on + 1));
      if (index >= ids.size())
        return bad("depends_on " + std::to_string(*spec.depends_on) + " must name an earlier job of the same request");
      resolved.depends_on = ids[index];
    }
    auto id = insert_job(c, pipeline_id, resolved, now);
    if (!id) return std::move(id).error();
    ids.push_back(*id);
  }
  return ids;
}

std::string already_validated(const std::string& commit_sha, std::int64_t pipeline_id) {
  return "commit " + commit_sha.substr(0, 12) + " is already validated by pipeline " + std::to_string(pipeline_id);
}

Result<InsertedPipeline> insert_pipeline(Connection& c, const NewPipeline& p, std::int64_t now) {
  if (p.commit_sha.empty()) return bad("a pipeline needs a commit_sha");
  if (p.once_per_commit) {
    // One writer runs every transaction, so no other pipeline can appear between this
    // read and the insert below.
    auto seen = c.prepare("SELECT max(id) FROM pipelines WHERE commit_sha = ?1");
    if (!seen) return std::move(seen).error();
    auto row = seen->bind(1, p.commit_sha).step();
    if (!row) return std::move(row).error();
    if (*row && !seen->is_null(0)) return InsertedPipeline{seen->int64(0), false};
  }
  auto ins = c.prepare(
      "INSERT INTO pipelines(reason, repo, ref, commit_sha, note, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!ins) return std::move(ins).error();
  KPORT_TRY(ins->bind_all(to_string(p.reason), p.repo, p.ref, p.commit_sha, p.note, now).run());
  const std::int64_t id = c.last_insert_rowid();
  auto jobs = insert_jobs(c, id, p.jobs, now);
  if (!jobs) return std::move(jobs).error();
  // A push is reported where it came from (forge, webhooks); the report starts with the
  // pipeline so that no pipeline escapes it, whenever the coordinator stops.
  if (p.reason == PipelineReason::push) {
    auto report =
        c.prepare("INSERT INTO forge_reports(pipeline_id, repo, state, updated_ms) VALUES (?1, ?2, 'new', ?3)");
    if (!report) return std::move(report).error();
    KPORT_TRY(report->bind_all(id, p.repo, now).run());
  }
  return InsertedPipeline{id, true};
}

Result<std::optional<Pipeline>> load_pipeline(Connection& c, std::int64_t id) {
  auto s = c.prepare(std::string(k_pipeline_select) + " WHERE p.id = ?1 GROUP BY p.id");
  if (!s) return std::move(s).error();
  s->bind(1, id);
  return collect_one<Pipeline>(*s, read_pipeline);
}

Result<std::optional<Job>> load_job(Connection& c, std::int64_t id, std::optional<std::int64_t> online_since) {
  auto s = c.prepare(std::string(k_job_select) + " WHERE j.id = ?2");
  if (!s) return std::move(s).error();
  s->bind_all(online_since.value_or(0), id);
  auto job = collect_one<Job>(*s, read_job);
  if (job && *job && !online_since) **job = stored(std::move(**job));
  return job;
}

Result<std::int64_t> repository_id(Connection& c, const std::string& name) {
  auto repo = c.prepare("SELECT id FROM repositories WHERE name = ?1");
  if (!repo) return std::move(repo).error();
  auto row = repo->bind(1, name).step();
  if (!row) return std::move(row).error();
  if (!*row) return make_error(Errc::not_found, "no repository named \"" + name + "\"; register it first");
  return repo->int64(0);
}

Result<std::optional<Runner>> load_runner(Connection& c, std::int64_t id) {
  auto s = c.prepare(std::string(k_runner_select) + " WHERE id = ?1");
  if (!s) return std::move(s).error();
  s->bind(1, id);
  auto runner = collect_one<Runner>(*s, read_runner);
  if (!runner || !*runner) return runner;
  auto t = c.prepare("SELECT target FROM runner_targets WHERE runner_id = ?1 ORDER BY target");
  if (!t) return std::move(t).error();
  t->bind(1, id);
  auto targets = collect<std::string>(*t, [](const Stmt& st) { return st.text(0); });
  if (!targets) return std::move(targets).error();
  (*runner)->caps.targets = std::move(*targets);
  return runner;
}

Result<std::vector<std::int64_t>> dependents(Connection& c, std::int64_t job_id) {
  auto s = c.prepare("SELECT id FROM jobs WHERE depends_on = ?1 ORDER BY id");
  if (!s) return std::move(s).error();
  s->bind(1, job_id);
  return collect<std::int64_t>(*s, [](const Stmt& st) { return st.int64(0); });
}

Status check_holder(const Job& j, std::int64_t runner_id, int attempt, std::int64_t now) {
  const std::string job = "job " + std::to_string(j.id);
  const std::string rule = "; only the runner holding a job's live lease writes to it, for its current attempt";
  if (j.attempt != attempt) {
    if (attempt > j.attempt)
      return make_error(Errc::conflict, job + " has no attempt " + std::to_string(attempt) + " (it was claimed " +
                                            std::to_string(j.attempt) + " time" + (j.attempt == 1 ? "" : "s") + ")" +
                                            rule);
    return make_error(Errc::conflict, job + " attempt " + std::to_string(attempt) +
                                          " is stale; the current attempt is " + std::to_string(j.attempt) + rule);
  }
  if (j.runner_id && *j.runner_id != runner_id)
    return make_error(Errc::forbidden, job + " attempt " + std::to_string(attempt) + " is leased to runner " +
                                           std::to_string(*j.runner_id) + ", not runner " + std::to_string(runner_id) +
                                           rule);
  if (j.status != JobStatus::running) {
    const std::string status(to_string(j.status));
    if (j.status == JobStatus::queued)
      return make_error(Errc::conflict, job + " attempt " + std::to_string(attempt) +
                                            " ended: its lease was released and the job is queued again" + rule);
    return make_error(Errc::conflict, job + " attempt " + std::to_string(attempt) + " ended (" + status +
                                          "); it takes no more uploads");
  }
  if (!j.runner_id || (j.lease_expires_ms && *j.lease_expires_ms <= now))
    return make_error(Errc::conflict, job + " attempt " + std::to_string(attempt) +
                                          ": the lease expired; the job goes back to the queue" + rule);
  return {};
}

Result<Job> holder_job(Connection& c, std::int64_t job_id, std::int64_t runner_id, int attempt, std::int64_t now) {
  auto job = load_job(c, job_id);
  if (!job) return std::move(job).error();
  if (!*job) return make_error(Errc::not_found, "job " + std::to_string(job_id) + " does not exist");
  KPORT_TRY(check_holder(**job, runner_id, attempt, now));
  return std::move(**job);
}

Status from_job(std::string& value, const std::string& expected, std::string_view field, const std::string& what,
                std::int64_t job_id) {
  if (value.empty() || expected.empty()) {
    if (value.empty()) value = expected;
    return {};
  }
  if (value == expected) return {};
  return make_error(Errc::conflict, what + " names " + std::string(field) + " '" + value + "' but job " +
                                        std::to_string(job_id) + " is for " + std::string(field) + " '" + expected +
                                        "'; a job's uploads take its " + std::string(field) + " (leave '" +
                                        std::string(field) + "' out)");
}

Status finish_job(Connection& c, const Job& job, JobStatus status, const std::optional<std::string>& reason,
                  std::int64_t now) {
  auto up = c.prepare(
      "UPDATE jobs SET status = ?2, failure_reason = coalesce(?3, failure_reason), finished_ms = ?4,"
      " lease_expires_ms = NULL WHERE id = ?1");
  if (!up) return std::move(up).error();
  KPORT_TRY(up->bind_all(job.id, to_string(status), reason, now).run());
  auto free_runner = c.prepare("UPDATE runners SET current_job = NULL WHERE current_job = ?1");
  if (!free_runner) return std::move(free_runner).error();
  KPORT_TRY(free_runner->bind(1, job.id).run());
  if (status == JobStatus::succeeded) return {};
  // A check job waiting on a build that will never succeed would wait forever.
  auto deps = c.prepare("SELECT id FROM jobs WHERE depends_on = ?1 AND status = 'queued'");
  if (!deps) return std::move(deps).error();
  deps->bind(1, job.id);
  auto ids = collect<std::int64_t>(*deps, [](const Stmt& st) { return st.int64(0); });
  if (!ids) return std::move(ids).error();
  for (std::int64_t id : *ids) {
    Job dep;
    dep.id = id;
    KPORT_TRY(finish_job(c, dep, JobStatus::cancelled,
                         "job " + std::to_string(job.id) + " it depends on ended " + std::string(to_string(status)),
                         now));
  }
  return {};
}

Result<JobStatus> release_lease(Connection& c, const Job& job, std::int64_t now, const std::string& why,
                                const RetryDelay& backoff) {
  if (job.cancel_requested) {
    KPORT_TRY(finish_job(c, job, JobStatus::cancelled, std::string("cancelled"), now));
    return JobStatus::cancelled;
  }
  const std::string reason = why + " after " + std::to_string(job.attempt) + " attempt" + (job.attempt == 1 ? "" : "s");
  if (job.attempt >= job.max_attempts) {
    KPORT_TRY(finish_job(c, job, JobStatus::failed, reason, now));
    return JobStatus::failed;
  }
  KPORT_TRY(requeue_job(c, job, reason, now, backoff));
  return JobStatus::queued;
}

Status requeue_job(Connection& c, const Job& job, const std::string& reason, std::int64_t now,
                   const RetryDelay& backoff) {
  auto up = c.prepare(
      "UPDATE jobs SET status = 'queued', runner_id = NULL, lease_expires_ms = NULL, failure_reason = ?2,"
      " not_before_ms = ?3, retry_runner_id = ?4, retry_runner_after_ms = ?5 WHERE id = ?1");
  if (!up) return std::move(up).error();
  KPORT_TRY(up->bind_all(job.id, reason, now + backoff.others_ms, job.runner_id, now + backoff.same_ms).run());
  auto free_runner = c.prepare("UPDATE runners SET current_job = NULL WHERE current_job = ?1");
  if (!free_runner) return std::move(free_runner).error();
  return free_runner->bind(1, job.id).run();
}

namespace {

// How many GPU workers could take a check of `arch` now: the online GPU runners of that
// arch when they are all one GPU model (or, for a check that names its model, of that
// model); one when there are none or several models (a pipeline's figures then come from
// whichever model takes its one job, as before).
Result<std::int64_t> check_workers(Connection& c, const std::string& arch, const std::optional<std::string>& model,
                                   std::int64_t online_since) {
  auto s = c.prepare(
      "SELECT gpu_model, count(*) FROM runners WHERE role = 'gpu' AND arch = ?1 AND deregistered_ms IS NULL"
      " AND last_heartbeat_ms >= ?2 AND (?3 IS NULL OR gpu_model = ?3) GROUP BY gpu_model");
  if (!s) return std::move(s).error();
  s->bind_all(arch, online_since, model);
  auto models = collect<std::int64_t>(*s, [](const Stmt& st) { return st.int64(1); });
  if (!models) return std::move(models).error();
  return models->size() == 1 ? models->front() : std::int64_t{1};
}

// What each family of the build costs to check on `arch`: the results the library's
// latest pipeline other than `excluded` stored for it there (its plain checks of this
// target and arch; a bisection's probe, which checks a few cases, says nothing of the
// whole), else, where that pipeline misses a family the build made, the family's built
// variants.
Result<std::vector<porting::FamilyWeight>> family_weights(Connection& c, const Job& build, const std::string& arch,
                                                          std::int64_t excluded) {
  auto built = c.prepare(
      "SELECT family, count(*) FROM build_records WHERE job_id = ?1 AND attempt = ?2 AND status = 'ok'"
      " GROUP BY family");
  if (!built) return std::move(built).error();
  built->bind_all(build.id, build.attempt);
  using Count = std::pair<std::string, std::int64_t>;
  auto variants = collect<Count>(*built, [](const Stmt& st) { return Count{st.text(0), st.int64(1)}; });
  if (!variants) return std::move(variants).error();
  auto measured = c.prepare(
      "SELECT r.family, count(*) FROM results r WHERE r.job_id IN (SELECT j.id FROM jobs j WHERE j.kind = 'check'"
      " AND j.target = ?1 AND j.arch = ?2 AND j.pipeline_id = (SELECT j2.pipeline_id FROM jobs j2"
      " JOIN pipelines p ON p.id = j2.pipeline_id WHERE j2.kind = 'check' AND j2.purpose = 'check'"
      " AND j2.status IN ('succeeded', 'failed') AND j2.target = ?1 AND j2.arch = ?2 AND j2.pipeline_id <> ?4"
      " AND NOT EXISTS (SELECT 1 FROM bisection_probes bp WHERE bp.pipeline_id = j2.pipeline_id)"
      " AND p.repo = (SELECT repo FROM pipelines WHERE id = ?3) ORDER BY j2.id DESC LIMIT 1))"
      " GROUP BY r.family");
  if (!measured) return std::move(measured).error();
  measured->bind_all(build.target, arch, build.pipeline_id, excluded);
  auto cases = collect<Count>(*measured, [](const Stmt& st) { return Count{st.text(0), st.int64(1)}; });
  if (!cases) return std::move(cases).error();
  const std::map<std::string, std::int64_t> by_cases(cases->begin(), cases->end());
  const bool all_measured =
      std::all_of(variants->begin(), variants->end(), [&](const Count& v) { return by_cases.count(v.first) > 0; });
  std::vector<porting::FamilyWeight> out;
  for (const auto& [family, n] : *variants)
    out.push_back({family, static_cast<double>(all_measured ? by_cases.at(family) : n)});
  return out;
}

}  // namespace

Result<std::vector<JobSpec>> split_check(Connection& c, const JobSpec& check, const Job& build,
                                         std::int64_t online_since, std::int64_t weigh_excluding) {
  // A payload that already chooses families is not split again; one that cannot be read
  // goes to its one job as it is, where the runner names what is wrong with it.
  auto payload = api::parse_job_payload(std::string_view(check.payload_json));
  const bool splittable =
      payload.ok() && payload->families.empty() && payload->families_except.empty() && !payload->shard;
  if (!splittable || !check.arch) return std::vector<JobSpec>{check};
  auto workers = check_workers(c, *check.arch, check.gpu_model, online_since);
  if (!workers) return std::move(workers).error();
  if (*workers <= 1) return std::vector<JobSpec>{check};
  auto weights = family_weights(c, build, *check.arch, weigh_excluding);
  if (!weights) return std::move(weights).error();
  const std::vector<porting::CheckShard> shards = porting::plan_check_shards(*weights, *workers);
  if (shards.size() <= 1) return std::vector<JobSpec>{check};
  // Each shard names its families; the last, the rest, names those it leaves.
  std::vector<std::string> named;
  for (const auto& s : shards)
    if (!s.rest) named.insert(named.end(), s.families.begin(), s.families.end());
  std::vector<JobSpec> out;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    api::JobPayload part = *payload;
    if (shards[i].rest)
      part.families_except = named;
    else
      part.families = shards[i].families;
    part.shard = api::CheckShardRef{static_cast<std::int64_t>(i), static_cast<std::int64_t>(shards.size())};
    JobSpec shard = check;
    shard.payload_json = boost::json::serialize(api::to_json(part));
    out.push_back(std::move(shard));
  }
  return out;
}

Result<std::vector<std::int64_t>> spawn_checks(Connection& c, const Job& build, std::int64_t now,
                                               std::int64_t online_since) {
  auto t = c.prepare("SELECT arch FROM targets WHERE name = ?1");
  if (!t) return std::move(t).error();
  auto row = t->bind(1, build.target).step();
  if (!row) return std::move(row).error();
  if (!*row) return std::vector<std::int64_t>{};
  const std::string target_arch = t->text(0);
  auto r = c.prepare("SELECT arch FROM target_check_arches WHERE target = ?1");
  if (!r) return std::move(r).error();
  r->bind(1, build.target);
  auto registered = collect<std::string>(*r, [](const Stmt& st) { return st.text(0); });
  if (!registered) return std::move(registered).error();
  // A bisection's probe (migration 0015) checks on the GPU model that saw the reason
  // only, with the bisection's driver when it has one (migration 0024), and a build
  // failure's probe checks nothing.
  auto probe = c.prepare(
      "SELECT b.kind, b.gpu_model, b.arch, b.driver FROM bisection_probes p JOIN bisections b ON b.id = p.bisection_id"
      " WHERE p.pipeline_id = ?1");
  if (!probe) return std::move(probe).error();
  auto probe_row = probe->bind(1, build.pipeline_id).step();
  if (!probe_row) return std::move(probe_row).error();
  if (*probe_row) {
    if (probe->text(0) == "build_failure") return std::vector<std::int64_t>{};
    JobSpec spec;
    spec.kind = JobKind::check;
    spec.commit_sha = build.commit_sha;
    spec.target = build.target;
    spec.arch = probe->text(2);
    spec.gpu_model = probe->text(1);
    if (!probe->text(3).empty()) spec.driver = probe->text(3);
    spec.depends_on = build.id;
    spec.max_attempts = build.max_attempts;
    spec.payload_json = build.payload_json;
    spec.purpose = build.purpose;
    return insert_jobs(c, build.pipeline_id, {spec}, now);
  }
  std::vector<JobSpec> specs;
  for (auto& arch : porting::check_arches(target_arch, std::move(*registered))) {
    JobSpec spec;
    spec.kind = JobKind::check;
    spec.commit_sha = build.commit_sha;
    spec.target = build.target;
    spec.arch = arch;
    spec.depends_on = build.id;
    spec.max_attempts = build.max_attempts;
    spec.payload_json = build.payload_json;
    spec.purpose = build.purpose;
    auto parts = split_check(c, spec, build, online_since, build.pipeline_id);
    if (!parts) return std::move(parts).error();
    specs.insert(specs.end(), parts->begin(), parts->end());
  }
  return insert_jobs(c, build.pipeline_id, specs, now);
}

}  // namespace kport::db::detail
