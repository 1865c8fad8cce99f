#include "codec.h"

#include "kport/api/build_record.h"
#include "kport/common/clock.h"

namespace kport::coordinator {
namespace json = boost::json;
namespace {

template <typename T>
json::value opt(const std::optional<T>& v) {
  return v ? json::value(*v) : json::value(nullptr);
}

// Stored JSON text back to a value; text the store accepted always parses.
json::value raw(const std::string& text) {
  if (text.empty()) return json::object{};
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  return ec ? json::value(text) : v;
}

// Seeds are unsigned 64-bit; the store keeps their bit pattern in a signed INTEGER.
json::value seed_json(const std::optional<std::int64_t>& bits) {
  return bits ? json::value(static_cast<std::uint64_t>(*bits)) : json::value(nullptr);
}

json::value time_json(std::int64_t ms) { return ms > 0 ? json::value(iso8601_utc(ms)) : json::value(nullptr); }
// The text form of a time the typed answers carry: none for unset (or 0).
std::optional<std::string> time_text(const std::optional<std::int64_t>& ms) {
  return ms && *ms > 0 ? std::optional<std::string>(iso8601_utc(*ms)) : std::nullopt;
}

template <typename K>
json::object count_map(const std::map<K, std::int64_t>& m) {
  json::object o;
  for (const auto& [k, v] : m) o[db::to_string(k)] = v;
  return o;
}

}  // namespace

api::TargetInfo to_target_info(const db::Target& t) {
  return api::TargetInfo{t.name, t.arch, raw(t.features_json), t.toolkit, time_text(t.first_seen_ms), t.is_new};
}

json::value to_json(const db::Target& t) { return api::to_json(to_target_info(t)); }

api::GpuModelInfo to_gpu_model_info(const db::GpuModel& g) {
  return api::GpuModelInfo{g.name, g.arch, g.drivers, time_text(g.first_seen_ms), time_text(g.last_seen_ms)};
}

json::value to_json(const db::GpuModel& g) { return api::to_json(to_gpu_model_info(g)); }

json::value to_json(const db::KernelInstance& k) {
  json::value dtypes = nullptr;
  if (k.dtypes) {
    json::array a;
    for (const auto& d : *k.dtypes) a.emplace_back(d);
    dtypes = std::move(a);
  }
  return json::object{{"name", k.name},
                      {"repo", k.repo},
                      {"family", k.family},
                      {"variant", k.variant},
                      {"features", raw(k.features_json)},
                      {"config", raw(k.config_json)},
                      {"dtypes", std::move(dtypes)}};
}

api::RepositoryInfo to_repository_info(const db::Repository& r) {
  return api::RepositoryInfo{r.id, r.name, r.url, time_text(r.created_ms)};
}

json::value to_json(const db::Repository& r) { return api::to_json(to_repository_info(r)); }

json::value to_json(const db::Commit& c) {
  return json::object{{"sha", c.sha},         {"repo", c.repo},     {"parent", opt(c.parent_sha)},
                      {"message", c.message}, {"author", c.author}, {"time", time_json(c.time_ms)}};
}

api::PipelineInfo to_pipeline_info(const db::Pipeline& p) {
  api::PipelineInfo out;
  out.id = p.id;
  // The store's reasons and the wire's are the same five names.
  out.reason = api::parse_pipeline_reason(db::to_string(p.reason)).value_or(api::PipelineReason::manual);
  out.repo = p.repo;
  out.ref = p.ref;
  out.commit = p.commit_sha;
  out.note = p.note;
  out.created = time_text(p.created_ms);
  out.status = std::string(db::to_string(p.status));
  out.jobs_total = p.jobs_total;
  out.jobs_done = p.jobs_done;
  return out;
}

json::value to_json(const db::Pipeline& p) { return api::to_json(to_pipeline_info(p)); }

api::JobInfo to_job_info(const db::Job& j) {
  api::JobInfo out;
  out.id = j.id;
  out.pipeline = j.pipeline_id;
  out.kind = std::string(db::to_string(j.kind));
  out.status = std::string(db::to_string(j.status));
  out.commit = j.commit_sha;
  out.target = j.target;
  out.arch = j.arch;
  out.gpu_model = j.gpu_model;
  out.driver = j.driver;
  out.depends_on = j.depends_on;
  out.attempt = j.attempt;
  out.max_attempts = j.max_attempts;
  out.runner = j.runner_id;
  out.lease_expires = time_text(j.lease_expires_ms);
  out.cancel_requested = j.cancel_requested;
  out.payload = raw(j.payload_json);
  out.failure_reason = j.failure_reason;
  out.created = time_text(j.created_ms);
  out.started = time_text(j.started_ms);
  out.finished = time_text(j.finished_ms);
  out.not_before = time_text(j.not_before_ms);
  return out;
}

json::value to_json(const db::Job& j) { return api::to_json(to_job_info(j)); }

api::RunnerInfo to_runner_info(const db::Runner& r) {
  api::RunnerInfo out;
  out.id = r.id;
  out.name = r.name;
  out.role = r.role == db::RunnerRole::gpu ? api::RunnerRole::gpu : api::RunnerRole::build;
  out.capabilities.toolkit = r.caps.toolkit;
  out.capabilities.targets = r.caps.targets;
  out.capabilities.cores = r.caps.cores;
  out.capabilities.gpu_model = r.caps.gpu_model;
  out.capabilities.gpu_uuid = r.caps.gpu_uuid;
  out.capabilities.arch = r.caps.arch;
  out.capabilities.driver = r.caps.driver;
  out.capabilities.extra = raw(r.caps.extra_json);
  out.online = r.online;
  out.registered = time_text(r.registered_ms);
  out.last_heartbeat = time_text(r.last_heartbeat_ms);
  out.deregistered = time_text(r.deregistered_ms);
  out.current_job = r.current_job;
  return out;
}

json::value to_json(const db::Runner& r) { return api::to_json(to_runner_info(r)); }

json::value to_json(const db::Artifact& a) {
  return json::object{{"sha256", a.sha256},
                      {"size", a.size},
                      {"name", a.name},
                      {"kind", a.kind},
                      {"created", time_json(a.created_ms)},
                      {"url", "/api/v1/artifacts/" + a.sha256}};
}

api::BuildRecordInfo to_build_record_info(const db::BuildRecord& b) {
  api::BuildRecordInfo out;
  out.id = b.id;
  out.job = b.job_id;
  out.attempt = b.attempt;
  out.commit = b.commit_sha;
  out.target = b.target;
  out.family = b.family;
  out.variant = b.variant;
  // The store's build statuses and the wire's are the same four names.
  out.status = api::parse_build_outcome(db::to_string(b.status)).value_or(api::BuildOutcome::compile_error);
  out.message = b.message;
  out.registers = b.registers;
  out.spill_stores_bytes = b.spill_stores_bytes;
  out.spill_loads_bytes = b.spill_loads_bytes;
  out.shared_mem_bytes = b.shared_mem_bytes;
  out.stack_frame_bytes = b.stack_frame_bytes;
  out.constant_mem_bytes = b.constant_mem_bytes;
  out.instruction_audit = raw(b.instruction_audit_json);
  out.artifact = b.artifact_sha256;
  out.source_path = b.source_path;
  out.source_line = b.source_line;
  {
    boost::system::error_code ec;
    auto env = json::parse(b.harness_env_json, ec);
    if (!ec && env.is_object())
      for (const auto& [name, value] : env.as_object())
        if (value.is_string()) out.harness_env[std::string(name)] = std::string(value.as_string());
  }
  out.created = time_text(b.created_ms);
  return out;
}

json::value to_json(const db::BuildRecord& b) { return api::to_json(to_build_record_info(b)); }

json::value to_json(const db::ResultRecord& r) {
  json::object numerics{{"max_abs_err", opt(r.max_abs_err)},           {"max_rel_err", opt(r.max_rel_err)},
                        {"normwise_rel_err", opt(r.normwise_rel_err)}, {"tolerance", opt(r.tolerance)},
                        {"nan_inf_count", opt(r.nan_inf_count)},       {"seed", seed_json(r.seed)}};
  json::object timing{{"median_us", opt(r.median_us)}, {"stddev_us", opt(r.stddev_us)},
                      {"samples", opt(r.samples)},     {"samples_dropped", opt(r.samples_dropped)},
                      {"tflops", opt(r.tflops)},       {"gbps", opt(r.gbps)},
                      {"baseline", r.baseline_name},   {"baseline_median_us", opt(r.baseline_median_us)},
                      {"ratio", opt(r.ratio)},         {"unstable", r.unstable}};
  // The table's metrics, each under its group; null where the result has none.
  const json::value stored = raw(r.metrics_json);
  const json::object* metrics = stored.is_object() ? &stored.as_object() : nullptr;
  for (const api::ResultMetric& m : api::k_result_metrics) {
    const json::value* v = metrics ? metrics->if_contains(m.name) : nullptr;
    (m.group == api::MetricGroup::timing ? timing : numerics)[m.name] = v ? *v : json::value(nullptr);
  }
  return json::object{{"id", r.id},
                      {"job", opt(r.job_id)},
                      {"attempt", r.attempt},
                      {"commit", r.commit_sha},
                      {"target", r.target},
                      {"family", r.family},
                      {"variant", r.variant},
                      {"instance", r.instance},
                      {"dtype", r.dtype},
                      {"shape", r.shape},
                      {"toolkit", r.toolkit},
                      {"runner", opt(r.runner_id)},
                      {"gpu_model", r.gpu_model},
                      {"gpu_uuid", r.gpu_uuid},
                      {"arch", r.arch},
                      {"driver", r.driver},
                      {"sm_clock_mhz", opt(r.sm_clock_mhz)},
                      {"env", raw(r.env_json)},
                      {"status", db::to_string(r.status)},
                      {"message", r.message},
                      {"numerics", std::move(numerics)},
                      {"timing", std::move(timing)},
                      {"created", time_json(r.created_ms)},
                      {"repo", r.repo}};
}

json::value to_json(const db::CommitSummary& s) {
  json::array pipelines, targets;
  for (auto id : s.pipeline_ids) pipelines.emplace_back(id);
  for (const auto& t : s.targets) targets.emplace_back(t);
  return json::object{{"commit", to_json(s.commit)},
                      {"pipelines", std::move(pipelines)},
                      {"jobs", count_map(s.jobs_by_status)},
                      {"builds", count_map(s.builds_by_status)},
                      {"results", count_map(s.results_by_status)},
                      {"targets", std::move(targets)}};
}

json::value to_json(const db::QueueStats& q) {
  json::object roles;
  for (const auto& [role, n] : q.runners_online_by_role) roles[db::to_string(role)] = n;
  return json::object{{"jobs", count_map(q.jobs_by_status)},
                      {"runners_online", q.runners_online},
                      {"runners_online_by_role", std::move(roles)}};
}

db::RunnerCapabilities to_caps(const api::RunnerCapabilities& c) {
  db::RunnerCapabilities out;
  out.toolkit = c.toolkit;
  out.targets = c.targets;
  out.cores = c.cores;
  out.gpu_model = c.gpu_model;
  out.gpu_uuid = c.gpu_uuid;
  out.arch = c.arch;
  out.driver = c.driver;
  out.extra_json = json::serialize(c.extra);
  return out;
}

db::ResultRecord to_record(const api::ResultUpload& u) {
  db::ResultRecord r;
  r.commit_sha = u.commit;
  r.target = u.target;
  r.family = u.family;
  r.variant = u.variant;
  r.instance = u.instance;
  r.dtype = u.dtype;
  r.shape = u.shape;
  r.toolkit = u.toolkit;
  r.gpu_model = u.gpu_model;
  r.gpu_uuid = u.gpu_uuid;
  r.arch = u.arch;
  r.driver = u.driver;
  r.sm_clock_mhz = u.sm_clock_mhz;
  r.env_json = json::serialize(u.env);
  // Both spell the statuses alike (db/include/kport/db/types.h, kport/api/result_upload.h).
  r.status = db::parse_result_status(api::to_string(u.status)).value_or(db::ResultStatus::crashed);
  r.message = u.message;
  r.max_abs_err = u.max_abs_err;
  r.max_rel_err = u.max_rel_err;
  r.normwise_rel_err = u.normwise_rel_err;
  r.tolerance = u.tolerance;
  r.nan_inf_count = u.nan_inf_count;
  if (u.seed) r.seed = static_cast<std::int64_t>(*u.seed);  // the bit pattern
  r.median_us = u.median_us;
  r.stddev_us = u.stddev_us;
  r.samples = u.samples;
  r.samples_dropped = u.samples_dropped;
  r.metrics_json = json::serialize(u.metrics);
  r.tflops = u.tflops;
  r.gbps = u.gbps;
  r.baseline_name = u.baseline;
  r.baseline_median_us = u.baseline_median_us;
  r.ratio = u.ratio;
  r.unstable = u.unstable;
  return r;
}

db::ResultRecord result_from_json(Fields& f) { return to_record(api::read_result_upload(f)); }

db::BuildRecord to_build_record(const api::BuildRecordUpload& u) {
  db::BuildRecord b;
  b.commit_sha = u.commit;
  b.target = u.target;
  b.family = u.family;
  b.variant = u.variant;
  // The wire's outcomes and the store's statuses are the same four names.
  b.status = db::parse_build_status(api::to_string(u.status)).value_or(db::BuildStatus::compile_error);
  b.message = u.message;
  b.registers = u.registers;
  b.spill_stores_bytes = u.spill_stores_bytes;
  b.spill_loads_bytes = u.spill_loads_bytes;
  b.shared_mem_bytes = u.shared_mem_bytes;
  b.stack_frame_bytes = u.stack_frame_bytes;
  b.constant_mem_bytes = u.constant_mem_bytes;
  b.instruction_audit_json = u.instruction_audit ? json::serialize(*u.instruction_audit) : std::string("{}");
  b.artifact_sha256 = u.artifact;
  b.source_path = u.source_path;
  b.source_line = u.source_line;
  b.harness_env_json = json::serialize(api::detail::env_to_json(u.harness_env));
  return b;
}

db::KernelInstance to_kernel_instance(const api::KernelInstanceUpload& u) {
  db::KernelInstance k;
  k.name = u.name;
  k.family = u.family;
  k.variant = u.variant;
  k.features_json = u.features ? json::serialize(*u.features) : std::string("{}");
  k.config_json = u.config ? json::serialize(*u.config) : std::string("{}");
  if (u.dtypes) k.dtypes = *u.dtypes;
  return k;
}

db::KernelVariant to_kernel_variant(const api::KernelVariantUpload& u) {
  db::KernelVariant v;
  v.family = u.family;
  v.variant = u.variant;
  if (u.features) {
    json::array names;
    for (const auto& f : *u.features) names.emplace_back(f);
    v.features_json = json::serialize(names);
  } else {
    v.features_json = "{}";
  }
  return v;
}

}  // namespace kport::coordinator
