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

json::value to_json(const db::Target& t) {
  return json::object{{"name", t.name},
                      {"arch", t.arch},
                      {"features", raw(t.features_json)},
                      {"toolkit", t.toolkit},
                      {"first_seen", time_json(t.first_seen_ms)},
                      {"is_new", t.is_new}};
}

json::value to_json(const db::GpuModel& g) {
  json::array drivers;
  for (const auto& d : g.drivers) drivers.emplace_back(d);
  return json::object{{"name", g.name},
                      {"arch", g.arch},
                      {"drivers", std::move(drivers)},
                      {"first_seen", time_json(g.first_seen_ms)},
                      {"last_seen", time_json(g.last_seen_ms)}};
}

json::value to_json(const db::KernelInstance& k) {
  json::value dtypes = nullptr;
  if (k.dtypes) {
    json::array a;
    for (const auto& d : *k.dtypes) a.emplace_back(d);
    dtypes = std::move(a);
  }
  return json::object{{"name", k.name},
                      {"family", k.family},
                      {"variant", k.variant},
                      {"features", raw(k.features_json)},
                      {"config", raw(k.config_json)},
                      {"dtypes", std::move(dtypes)}};
}

json::value to_json(const db::Repository& r) {
  return json::object{{"id", r.id}, {"name", r.name}, {"url", r.url}, {"created", time_json(r.created_ms)}};
}

json::value to_json(const db::Commit& c) {
  return json::object{{"sha", c.sha},         {"repo", c.repo},     {"parent", opt(c.parent_sha)},
                      {"message", c.message}, {"author", c.author}, {"time", time_json(c.time_ms)}};
}

json::value to_json(const db::Pipeline& p) {
  return json::object{{"id", p.id},
                      {"reason", db::to_string(p.reason)},
                      {"repo", p.repo},
                      {"ref", p.ref},
                      {"commit", p.commit_sha},
                      {"note", p.note},
                      {"created", time_json(p.created_ms)},
                      {"status", db::to_string(p.status)},
                      {"jobs_total", p.jobs_total},
                      {"jobs_done", p.jobs_done}};
}

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

json::value to_json(const db::BuildRecord& b) {
  return json::object{{"id", b.id},
                      {"job", opt(b.job_id)},
                      {"attempt", b.attempt},
                      {"commit", b.commit_sha},
                      {"target", b.target},
                      {"family", b.family},
                      {"variant", b.variant},
                      {"status", db::to_string(b.status)},
                      {"message", b.message},
                      {"registers", opt(b.registers)},
                      {"spill_stores_bytes", opt(b.spill_stores_bytes)},
                      {"spill_loads_bytes", opt(b.spill_loads_bytes)},
                      {"shared_mem_bytes", opt(b.shared_mem_bytes)},
                      {"stack_frame_bytes", opt(b.stack_frame_bytes)},
                      {"constant_mem_bytes", opt(b.constant_mem_bytes)},
                      {"instruction_audit", raw(b.instruction_audit_json)},
                      {"artifact", opt(b.artifact_sha256)},
                      {"source_path", opt(b.source_path)},
                      {"source_line", opt(b.source_line)},
                      {"created", time_json(b.created_ms)}};
}

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
                      {"created", time_json(r.created_ms)}};
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

namespace {

json::array strings(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

json::object evidence_json(const porting::Measurement& m) {
  // Built member by member: every answer of /api/v1/best writes one per ranked figure.
  json::object o;
  o.reserve(16);
  o.emplace("result", m.result_id);
  o.emplace("gpu_model", m.gpu_model);
  o.emplace("arch", m.arch);
  o.emplace("target", m.target);
  o.emplace("commit", m.commit);
  o.emplace("driver", m.driver);
  o.emplace("shape", m.shape.canonical());
  o.emplace("status", m.status);
  o.emplace("median_us", m.median_us > 0 ? json::value(m.median_us) : json::value(nullptr));
  o.emplace("stddev_us", m.stddev_us);
  o.emplace("samples", m.samples);
  o.emplace("ratio", m.ratio ? json::value(*m.ratio) : json::value(nullptr));
  o.emplace("unstable", m.unstable);
  o.emplace("runs", m.runs);
  o.emplace("measured", time_json(m.measured_at_ms));
  std::string url = "/api/v1/results/";
  url += std::to_string(m.result_id);
  o.emplace("url", std::move(url));
  return o;
}

}  // namespace

json::value selection_member(const porting::Selection& s, std::string_view name) {
  const porting::Ranked* best = s.best();
  if (name == "kind") return json::value(porting::kind_name(s.kind));
  if (name == "provisional") return json::value(s.kind != porting::Selection::Kind::measured);
  if (name == "confidence") {
    // How sure a measured answer is: exact, or from the nearest measured shape with how
    // such answers fared on this GPU model (porting::NeighbourRegret).
    if (s.kind != porting::Selection::Kind::measured) return nullptr;
    json::object c{{"basis", s.exact_shape ? "measured at this shape" : "nearest measured shape"},
                   {"method", s.method},
                   {"shape_distance", s.shape_distance}};
    if (const auto& r = s.nearest_shape_regret)
      c["nearest_shape_regret"] =
          json::object{{"shapes", r->shapes}, {"median", r->median}, {"p90", r->p90}, {"max", r->max}};
    return c;
  }
  if (name == "best") return best ? json::value(best->instance) : json::value(nullptr);
  if (name == "tied") {
    json::array tied;
    if (best)
      for (const auto& r : s.ranking)
        if (r.tie_with_best) tied.emplace_back(r.instance);
    return tied;
  }
  if (name == "reason") return json::value(s.reason);
  if (name == "notes") return strings(s.notes);
  if (name == "ranked_by") return json::value(s.ranked_by);
  if (name == "candidates_from") return json::value(s.candidates_basis);
  if (name == "matched_shape")
    return s.matched_shape ? json::value(s.matched_shape->canonical()) : json::value(nullptr);
  if (name == "exact_shape") return json::value(s.exact_shape);
  if (name == "evidence_gpu_model") return json::value(s.evidence_gpu_model);
  if (name == "evidence_arch") return json::value(s.evidence_arch);
  if (name == "evidence") {
    const auto& e = s.evidence;
    if (e.result_ids.empty()) return nullptr;
    json::array ids;
    for (auto id : e.result_ids) ids.emplace_back(id);
    return json::object{{"gpu_model", s.evidence_gpu_model},
                        {"arch", s.evidence_arch},
                        {"commit", e.commits.front()},
                        {"commits", strings(e.commits)},
                        {"driver", e.drivers.front()},
                        {"drivers", strings(e.drivers)},
                        {"other_drivers", strings(e.other_drivers)},
                        {"results", std::move(ids)},
                        {"samples", e.samples},
                        {"measured", time_json(e.newest_ms)},
                        {"oldest", time_json(e.oldest_ms)}};
  }
  if (name == "ranking") {
    json::array ranking;
    ranking.reserve(s.ranking.size());
    for (const auto& r : s.ranking) {
      json::object item;
      item.reserve(7);
      item.emplace("instance", r.instance);
      item.emplace("variant", r.variant);
      item.emplace("tie_with_best", r.tie_with_best);
      item.emplace("slowdown", r.slowdown);
      item.emplace("ranked", r.ranked);
      item.emplace("evidence", r.evidence ? json::value(evidence_json(*r.evidence)) : json::value(nullptr));
      if (r.estimate_us) item.emplace("estimate_us", *r.estimate_us);
      ranking.emplace_back(std::move(item));
    }
    return ranking;
  }
  if (name == "excluded") {
    json::array excluded;
    for (const auto& x : s.excluded)
      excluded.push_back(json::object{{"instance", x.instance},
                                      {"variant", x.variant},
                                      {"reason", x.reason},
                                      {"evidence", evidence_json(x.evidence)}});
    return excluded;
  }
  return nullptr;
}

json::value to_json(const porting::Selection& s) {
  json::object out;
  out.reserve(std::size(k_selection_members));
  for (std::string_view name : k_selection_members) out.emplace(name, selection_member(s, name));
  return out;
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

db::BuildRecord build_record_from_json(Fields& f) {
  const api::BuildRecordUpload u = api::read_build_record(f);
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
  return b;
}

db::KernelInstance instance_from_json(Fields& f) {
  db::KernelInstance k;
  k.name = f.str("name", 256);
  k.family = f.str("family", 64);
  k.variant = f.str("variant", 128);
  k.features_json = f.json_text("features");
  k.config_json = f.json_text("config");
  // Absent, null or empty: the publisher did not say which dtypes it runs.
  if (auto it = f.str_list("dtypes", 16); !it.empty()) k.dtypes = std::move(it);
  return k;
}

}  // namespace kport::coordinator
