#include "rows.h"

#include <cctype>

#include "json_text.h"

namespace kport::db::detail {

// Deriving awaiting_runner keeps the stored state machine small and always current:
// a runner coming online or going silent changes it without a write.
const char* const k_job_select =
    "SELECT j.id, j.pipeline_id, j.kind, " KPORT_JOB_STATUS_EXPR
    ","
    " j.commit_sha, j.target, j.arch, j.gpu_model, j.depends_on, j.attempt, j.max_attempts,"
    " j.runner_id, j.lease_expires_ms, j.cancel_requested, j.payload_json, j.failure_reason,"
    " j.created_ms, j.started_ms, j.finished_ms, j.not_before_ms, j.purpose, j.driver FROM jobs j";

const char* const k_pipeline_select =
    "SELECT p.id, p.reason, p.repo, p.ref, p.commit_sha, p.note, p.created_ms,"
    " count(j.id),"
    " coalesce(sum(j.status IN ('succeeded','failed','cancelled')), 0),"
    " coalesce(sum(j.status = 'queued'), 0),"
    " coalesce(sum(j.status = 'failed'), 0),"
    " coalesce(sum(j.status = 'cancelled'), 0)"
    " FROM pipelines p LEFT JOIN jobs j ON j.pipeline_id = p.id";

const char* const k_runner_select =
    "SELECT id, name, role, toolkit, cores, gpu_model, gpu_uuid, arch, driver, extra_json,"
    " registered_ms, last_heartbeat_ms, deregistered_ms, current_job FROM runners";

const char* const k_result_select =
    "SELECT id, job_id, attempt, commit_sha, target, family, variant, instance, dtype, shape,"
    " toolkit, runner_id, gpu_model, gpu_uuid, arch, driver, sm_clock_mhz, env_json, status,"
    " message, max_abs_err, max_rel_err, normwise_rel_err, nan_inf_count, tolerance, seed,"
    " median_us, stddev_us, samples, tflops, gbps, baseline_name, baseline_median_us, ratio,"
    " created_ms, unstable, samples_dropped, metrics_json, repo FROM results";

const char* const k_build_select =
    "SELECT id, job_id, attempt, commit_sha, target, family, variant, status, message,"
    " registers, spill_stores_bytes, spill_loads_bytes, shared_mem_bytes, stack_frame_bytes,"
    " constant_mem_bytes, instruction_audit_json, artifact_sha256, created_ms, source_path, source_line,"
    " harness_env_json FROM build_records";

const char* const k_target_select = "SELECT name, arch, features_json, toolkit, first_seen_ms, is_new FROM targets";

const char* const k_artifact_select = "SELECT sha256, size, name, kind, path, created_ms FROM artifacts";

Job read_job(const Stmt& s) {
  Job j;
  j.id = s.int64(0);
  j.pipeline_id = s.int64(1);
  j.kind = parse_job_kind(s.text(2)).value_or(JobKind::build);
  j.status = parse_job_status(s.text(3)).value_or(JobStatus::queued);
  j.commit_sha = s.text(4);
  j.target = s.text(5);
  j.arch = s.opt_text(6);
  j.gpu_model = s.opt_text(7);
  j.depends_on = s.opt_int64(8);
  j.attempt = s.int32(9);
  j.max_attempts = s.int32(10);
  j.runner_id = s.opt_int64(11);
  j.lease_expires_ms = s.opt_int64(12);
  j.cancel_requested = s.int64(13) != 0;
  j.payload_json = s.text(14);
  j.failure_reason = s.opt_text(15);
  j.created_ms = s.int64(16);
  j.started_ms = s.opt_int64(17);
  j.finished_ms = s.opt_int64(18);
  j.not_before_ms = s.opt_int64(19);
  j.purpose = parse_job_purpose(s.text(20)).value_or(JobPurpose::check);
  j.driver = s.opt_text(21);
  return j;
}

Pipeline read_pipeline(const Stmt& s) {
  Pipeline p;
  p.id = s.int64(0);
  p.reason = parse_pipeline_reason(s.text(1)).value_or(PipelineReason::manual);
  p.repo = s.text(2);
  p.ref = s.text(3);
  p.commit_sha = s.text(4);
  p.note = s.text(5);
  p.created_ms = s.int64(6);
  p.jobs_total = s.int64(7);
  p.jobs_done = s.int64(8);
  const std::int64_t queued = s.int64(9), failed = s.int64(10), cancelled = s.int64(11);
  if (p.jobs_done == p.jobs_total) {
    p.status = failed ? PipelineStatus::failed : cancelled ? PipelineStatus::cancelled : PipelineStatus::succeeded;
  } else if (queued == p.jobs_total) {
    p.status = PipelineStatus::queued;
  } else {
    p.status = PipelineStatus::running;
  }
  return p;
}

Runner read_runner(const Stmt& s) {
  Runner r;
  r.id = s.int64(0);
  r.name = s.text(1);
  r.role = parse_runner_role(s.text(2)).value_or(RunnerRole::build);
  r.caps.toolkit = s.text(3);
  r.caps.cores = s.int32(4);
  r.caps.gpu_model = s.text(5);
  r.caps.gpu_uuid = s.text(6);
  r.caps.arch = s.text(7);
  r.caps.driver = s.text(8);
  r.caps.extra_json = s.text(9);
  r.registered_ms = s.int64(10);
  r.last_heartbeat_ms = s.int64(11);
  r.deregistered_ms = s.opt_int64(12);
  r.current_job = s.opt_int64(13);
  return r;
}

ResultRecord read_result(const Stmt& s) {
  ResultRecord r;
  int c = 0;
  r.id = s.int64(c++);
  r.job_id = s.opt_int64(c++);
  r.attempt = s.int32(c++);
  r.commit_sha = s.text(c++);
  r.target = s.text(c++);
  r.family = s.text(c++);
  r.variant = s.text(c++);
  r.instance = s.text(c++);
  r.dtype = s.text(c++);
  r.shape = s.text(c++);
  r.toolkit = s.text(c++);
  r.runner_id = s.opt_int64(c++);
  r.gpu_model = s.text(c++);
  r.gpu_uuid = s.text(c++);
  r.arch = s.text(c++);
  r.driver = s.text(c++);
  r.sm_clock_mhz = s.opt_real(c++);
  r.env_json = s.text(c++);
  r.status = parse_result_status(s.text(c++)).value_or(ResultStatus::failed);
  r.message = s.text(c++);
  r.max_abs_err = s.opt_real(c++);
  r.max_rel_err = s.opt_real(c++);
  r.normwise_rel_err = s.opt_real(c++);
  r.nan_inf_count = s.opt_int64(c++);
  r.tolerance = s.opt_real(c++);
  r.seed = s.opt_int64(c++);
  r.median_us = s.opt_real(c++);
  r.stddev_us = s.opt_real(c++);
  r.samples = s.opt_int64(c++);
  r.tflops = s.opt_real(c++);
  r.gbps = s.opt_real(c++);
  r.baseline_name = s.text(c++);
  r.baseline_median_us = s.opt_real(c++);
  r.ratio = s.opt_real(c++);
  r.created_ms = s.int64(c++);
  r.unstable = s.int64(c++) != 0;
  r.samples_dropped = s.opt_int64(c++);
  r.metrics_json = s.text(c++);
  r.repo = s.text(c++);
  return r;
}

// The same columns as k_result_select and read_result, kept beside them: a result field is
// one column here, one in the select and one in the reader.
Status insert_result(Connection& c, const ResultRecord& r, std::int64_t now) {
  auto metrics = json_text("metrics_json", r.metrics_json);
  if (!metrics) return std::move(metrics).error();
  auto s = c.prepare(
      "INSERT INTO results(job_id, attempt, commit_sha, target, family, variant, instance, dtype, shape, toolkit,"
      " runner_id, gpu_model, gpu_uuid, arch, driver, sm_clock_mhz, env_json, status, message, max_abs_err,"
      " max_rel_err, normwise_rel_err, nan_inf_count, tolerance, seed, median_us, stddev_us, samples, tflops,"
      " gbps, baseline_name, baseline_median_us, ratio, created_ms, unstable, samples_dropped, metrics_json, repo)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,"
      " ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, " KPORT_ROW_REPO_EXPR ")");
  if (!s) return std::move(s).error();
  s->bind_all(r.job_id, r.attempt, r.commit_sha, r.target, r.family, r.variant, r.instance, r.dtype, r.shape, r.toolkit,
              r.runner_id, r.gpu_model, r.gpu_uuid, r.arch, r.driver, r.sm_clock_mhz,
              r.env_json.empty() ? std::string("{}") : r.env_json, to_string(r.status), r.message, r.max_abs_err,
              r.max_rel_err, r.normwise_rel_err, r.nan_inf_count, r.tolerance, r.seed, r.median_us, r.stddev_us,
              r.samples, r.tflops, r.gbps, r.baseline_name, r.baseline_median_us, r.ratio, now,
              static_cast<std::int64_t>(r.unstable), r.samples_dropped, *metrics);
  return s->run();
}

BuildRecord read_build(const Stmt& s) {
  BuildRecord b;
  b.id = s.int64(0);
  b.job_id = s.opt_int64(1);
  b.attempt = s.int32(2);
  b.commit_sha = s.text(3);
  b.target = s.text(4);
  b.family = s.text(5);
  b.variant = s.text(6);
  b.status = parse_build_status(s.text(7)).value_or(BuildStatus::compile_error);
  b.message = s.text(8);
  if (auto v = s.opt_int64(9)) b.registers = static_cast<int>(*v);
  b.spill_stores_bytes = s.opt_int64(10);
  b.spill_loads_bytes = s.opt_int64(11);
  b.shared_mem_bytes = s.opt_int64(12);
  b.stack_frame_bytes = s.opt_int64(13);
  b.constant_mem_bytes = s.opt_int64(14);
  b.instruction_audit_json = s.text(15);
  b.artifact_sha256 = s.opt_text(16);
  b.created_ms = s.int64(17);
  b.source_path = s.opt_text(18);
  if (auto line = s.opt_int64(19)) b.source_line = static_cast<int>(*line);
  b.harness_env_json = s.text(20);
  return b;
}

Target read_target(const Stmt& s) {
  return Target{s.text(0), s.text(1), s.text(2), s.text(3), s.int64(4), s.int64(5) != 0};
}

Artifact read_artifact(const Stmt& s) {
  return Artifact{s.text(0), s.int64(1), s.text(2), s.text(3), s.text(4), s.int64(5)};
}

void Where::add_value(const std::string& cond, Value value) {
  if (!m_sql.empty()) m_sql += " AND ";
  // The placeholder is the bare "?"; numbered ones ("?1") inside cond stay as they are.
  std::size_t q = cond.find('?');
  while (q != std::string::npos && q + 1 < cond.size() && std::isdigit(static_cast<unsigned char>(cond[q + 1])))
    q = cond.find('?', q + 1);
  m_sql += cond.substr(0, q + 1) + std::to_string(m_next) + cond.substr(q + 1);
  m_values.emplace_back(m_next++, std::move(value));
}

void Where::bind(Stmt& stmt) const {
  for (const auto& [index, value] : m_values) std::visit([&, i = index](const auto& v) { stmt.bind(i, v); }, value);
}

Status check_limit(int limit) {
  if (limit < 1 || limit > k_max_page_limit)
    return make_error(Errc::invalid_argument, "limit " + std::to_string(limit) + " is out of range; use 1.." +
                                                  std::to_string(k_max_page_limit));
  return {};
}

const char* const k_candidate_select =
    "SELECT b.gpu_model, b.arch, b.family, b.dtype, b.shape, s.dims_json, b.instance, b.variant, b.target,"
    " b.commit_sha, b.commit_ms, b.status, b.driver, b.median_us, b.stddev_us, b.samples, b.tflops, b.gbps,"
    " b.ratio, b.baseline_median_us, b.unstable, b.result_id, b.passed_count, b.results_count, b.measured_ms,"
    " b.repo, r.gpu_uuid, r.sm_clock_mhz FROM best_candidates b JOIN shapes s ON s.shape = b.shape"
    " LEFT JOIN results r ON r.id = b.result_id";

BestCandidate read_candidate(const Stmt& s) {
  BestCandidate b;
  int c = 0;
  b.gpu_model = s.text(c++);
  b.arch = s.text(c++);
  b.family = s.text(c++);
  b.dtype = s.text(c++);
  b.shape = s.text(c++);
  b.dims = dims_from_json(s.text(c++));
  b.instance = s.text(c++);
  b.variant = s.text(c++);
  b.target = s.text(c++);
  b.commit_sha = s.text(c++);
  b.commit_ms = s.int64(c++);
  // The column is copied from results, whose CHECK admits only known statuses.
  b.status = parse_result_status(s.text(c++)).value_or(ResultStatus::failed);
  b.driver = s.text(c++);
  b.median_us = s.opt_real(c++);
  b.stddev_us = s.opt_real(c++);
  b.samples = s.opt_int64(c++);
  b.tflops = s.opt_real(c++);
  b.gbps = s.opt_real(c++);
  b.ratio = s.opt_real(c++);
  b.baseline_median_us = s.opt_real(c++);
  b.unstable = s.int64(c++) != 0;
  b.result_id = s.int64(c++);
  b.passed_count = s.int64(c++);
  b.results_count = s.int64(c++);
  b.measured_ms = s.int64(c++);
  b.repo = s.text(c++);
  b.gpu_uuid = s.text(c++);
  b.sm_clock_mhz = s.opt_real(c++);
  return b;
}

}  // namespace kport::db::detail
