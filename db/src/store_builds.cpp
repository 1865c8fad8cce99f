// Build records (one per job attempt, target, family and variant) and job logs.
#include <map>

#include "impl.h"
#include "json_text.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

namespace {

// A job's record takes commit and target from its job in the transaction.
Status validate(const BuildRecord& b, std::size_t index, const std::optional<std::int64_t>& runner_id) {
  const std::string what = "build record " + std::to_string(index);
  if (b.family.empty() || b.variant.empty() || (!b.job_id && (b.commit_sha.empty() || b.target.empty())))
    return make_error(Errc::invalid_argument, what + " needs commit_sha, target, family and variant");
  if (b.job_id && !runner_id)
    return make_error(Errc::invalid_argument,
                      what + " belongs to job " + std::to_string(*b.job_id) +
                          " but names no runner; a job's records come from the runner holding its lease");
  auto audit = detail::json_text(what + " instruction_audit_json", b.instruction_audit_json);
  if (!audit) return std::move(audit).error();
  return {};
}

}  // namespace

Result<std::vector<PutOutcome>> Store::put_build_records(const std::vector<BuildRecord>& records,
                                                         std::optional<std::int64_t> runner_id) {
  for (std::size_t i = 0; i < records.size(); ++i) KPORT_TRY(validate(records[i], i, runner_id));
  const std::int64_t now = m_impl->now();
  return m_impl->write<std::vector<PutOutcome>>([&](Connection& c) -> Result<std::vector<PutOutcome>> {
    std::vector<PutOutcome> out;
    std::map<std::int64_t, Job> jobs;
    for (std::size_t i = 0; i < records.size(); ++i) {
      BuildRecord b = records[i];
      if (b.job_id) {
        // The holder rule first (see put_results), then the job's commit and target.
        auto it = jobs.find(*b.job_id);
        if (it == jobs.end()) {
          auto job = detail::holder_job(c, *b.job_id, *runner_id, b.attempt, now);
          if (!job) return std::move(job).error();
          it = jobs.emplace(*b.job_id, std::move(*job)).first;
        }
        KPORT_TRY(detail::check_holder(it->second, *runner_id, b.attempt, now));
        const std::string what = "build record " + std::to_string(i) + " (" + b.family + "." + b.variant + ")";
        KPORT_TRY(detail::from_job(b.commit_sha, it->second.commit_sha, "commit", what, *b.job_id));
        KPORT_TRY(detail::from_job(b.target, it->second.target, "target", what, *b.job_id));
        auto dup = c.prepare(
            "SELECT id FROM build_records WHERE job_id = ?1 AND attempt = ?2 AND target = ?3 AND family = ?4 AND "
            "variant = ?5");
        if (!dup) return std::move(dup).error();
        dup->bind_all(*b.job_id, b.attempt, b.target, b.family, b.variant);
        auto id = detail::collect_one<std::int64_t>(*dup, [](const detail::Stmt& s) { return s.int64(0); });
        if (!id) return std::move(id).error();
        if (*id) {
          out.push_back(PutOutcome{**id, true});
          continue;
        }
      }
      auto env = detail::json_text("harness_env of build record " + std::to_string(i), b.harness_env_json, "{}");
      if (!env) return std::move(env).error();
      auto s = c.prepare(
          "INSERT INTO build_records(job_id, attempt, commit_sha, target, family, variant, status, message,"
          " registers, spill_stores_bytes, spill_loads_bytes, shared_mem_bytes, stack_frame_bytes,"
          " constant_mem_bytes, instruction_audit_json, artifact_sha256, created_ms, source_path, source_line, repo,"
          " harness_env_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
          " ?19, " KPORT_ROW_REPO_EXPR ", ?20)");
      if (!s) return std::move(s).error();
      KPORT_TRY(s->bind_all(b.job_id, b.attempt, b.commit_sha, b.target, b.family, b.variant, to_string(b.status),
                            b.message, b.registers, b.spill_stores_bytes, b.spill_loads_bytes, b.shared_mem_bytes,
                            b.stack_frame_bytes, b.constant_mem_bytes,
                            b.instruction_audit_json.empty() ? std::string("{}") : b.instruction_audit_json,
                            b.artifact_sha256, now, b.source_path, b.source_line, *env)
                    .run());
      out.push_back(PutOutcome{c.last_insert_rowid(), false});
    }
    return out;
  });
}

Result<Page<BuildRecord>> Store::list_build_records(const BuildRecordFilter& f) {
  KPORT_TRY(detail::check_limit(f.limit));
  return m_impl->read<Page<BuildRecord>>([&](Connection& c) -> Result<Page<BuildRecord>> {
    detail::Where where;
    where.add("commit_sha = ?", f.commit_sha);
    where.add("target = ?", f.target);
    where.add("family = ?", f.family);
    where.add("variant = ?", f.variant);
    if (f.status) where.add_value("status = ?", std::string(to_string(*f.status)));
    where.add("job_id = ?", f.job_id);
    where.add("id < ?", f.before_id);
    const int limit_param = where.next_param();
    auto s = c.prepare(std::string(detail::k_build_select) + where.sql() + " ORDER BY id DESC LIMIT ?" +
                       std::to_string(limit_param));
    if (!s) return std::move(s).error();
    where.bind(*s);
    s->bind(limit_param, f.limit);
    auto rows = detail::collect<BuildRecord>(*s, detail::read_build);
    if (!rows) return std::move(rows).error();
    return detail::make_page(std::move(*rows), f.limit, [](const BuildRecord& b) { return b.id; });
  });
}

Result<std::optional<BuildRecord>> Store::get_build_record(std::int64_t id) {
  return m_impl->read<std::optional<BuildRecord>>([&](Connection& c) -> Result<std::optional<BuildRecord>> {
    auto s = c.prepare(std::string(detail::k_build_select) + " WHERE id = ?1");
    if (!s) return std::move(s).error();
    s->bind(1, id);
    return detail::collect_one<BuildRecord>(*s, detail::read_build);
  });
}

Status Store::append_job_log(std::int64_t job_id, std::int64_t runner_id, int attempt, std::string_view text) {
  const std::int64_t now = m_impl->now();
  auto r = m_impl->write<bool>([&](Connection& c) -> Result<bool> {
    // Checked even for empty text: the answer tells a runner whether it still holds the job.
    auto job = detail::holder_job(c, job_id, runner_id, attempt, now);
    if (!job) return std::move(job).error();
    if (text.empty()) return false;
    auto s = c.prepare("INSERT INTO job_logs(job_id, attempt, created_ms, text) VALUES (?1, ?2, ?3, ?4)");
    if (!s) return std::move(s).error();
    KPORT_TRY(s->bind_all(job_id, attempt, now, text).run());
    return true;
  });
  if (!r) return std::move(r).error();
  return {};
}

Result<std::vector<LogChunk>> Store::job_log(std::int64_t job_id, std::int64_t after_seq, int limit) {
  KPORT_TRY(detail::check_limit(limit));
  return m_impl->read<std::vector<LogChunk>>([&](Connection& c) -> Result<std::vector<LogChunk>> {
    auto s = c.prepare(
        "SELECT seq, attempt, created_ms, text FROM job_logs WHERE job_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3");
    if (!s) return std::move(s).error();
    s->bind_all(job_id, after_seq, limit);
    return detail::collect<LogChunk>(*s, [](const detail::Stmt& st) {
      return LogChunk{st.int64(0), st.int32(1), st.int64(2), st.text(3)};
    });
  });
}

}  // namespace kport::db
