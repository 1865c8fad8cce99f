// Pushes: deliveries (deduplicated by id), the commits they carry, branch heads, and
// what a force push or a branch delete does to the ref's queued work.
#include "impl.h"
#include "queue_ops.h"
#include "rows.h"

namespace kport::db {

using detail::Connection;

namespace {

Status put_commits(Connection& c, const std::vector<Commit>& commits, std::int64_t now) {
  for (const Commit& commit : commits) {
    auto repo_id = detail::repository_id(c, commit.repo);
    if (!repo_id) return std::move(repo_id).error();
    auto ins = c.prepare(
        "INSERT INTO commits(sha, repo_id, parent_sha, message, author, time_ms, created_ms)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
        // A row recorded without its parent (by an API call) learns it from the push.
        " ON CONFLICT(sha) DO UPDATE SET parent_sha = coalesce(commits.parent_sha, excluded.parent_sha)");
    if (!ins) return std::move(ins).error();
    KPORT_TRY(ins->bind_all(commit.sha, *repo_id, commit.parent_sha, commit.message, commit.author, commit.time_ms, now)
                  .run());
  }
  return {};
}

// Cancels the queued jobs of the ref's pipelines for commits other than `keep`.
Result<std::int64_t> cancel_superseded(Connection& c, const PushDelivery& d, const std::string& keep,
                                       std::int64_t now) {
  auto s = c.prepare(std::string(detail::k_job_select) +
                     " JOIN pipelines p ON p.id = j.pipeline_id"
                     " WHERE p.repo = ?2 AND p.ref = ?3 AND j.commit_sha <> ?4 AND j.status = 'queued' ORDER BY j.id");
  if (!s) return std::move(s).error();
  s->bind_all(std::int64_t{0}, d.repo, d.ref, keep);
  auto jobs = detail::collect<Job>(*s, [](const detail::Stmt& st) { return detail::stored(detail::read_job(st)); });
  if (!jobs) return std::move(jobs).error();
  const std::string why = d.deleted ? "branch " + d.ref + " was deleted"
                                    : "force push of " + d.ref + " replaced this commit with " + keep.substr(0, 12);
  std::int64_t n = 0;
  for (const Job& j : *jobs) {
    // Cancelling a build also ends the checks that depended on it; skip those.
    auto fresh = detail::load_job(c, j.id);
    if (!fresh) return std::move(fresh).error();
    if (!*fresh || (*fresh)->status != JobStatus::queued) continue;
    KPORT_TRY(detail::finish_job(c, j, JobStatus::cancelled, why, now));
    ++n;
  }
  return n;
}

bool zero_sha(const std::string& sha) { return sha.find_first_not_of('0') == std::string::npos; }

// Cancels every unfinished job of the ref's pipelines: a closed request's work is wanted
// by no one. Queued jobs end now; running ones are flagged and end at their runner's
// next heartbeat (the state machine's cancel).
Result<std::int64_t> cancel_closed(Connection& c, const PushDelivery& d, std::int64_t now) {
  auto s = c.prepare(std::string(detail::k_job_select) +
                     " JOIN pipelines p ON p.id = j.pipeline_id"
                     " WHERE p.repo = ?2 AND p.ref = ?3 AND j.status IN ('queued', 'running') ORDER BY j.id");
  if (!s) return std::move(s).error();
  s->bind_all(std::int64_t{0}, d.repo, d.ref);
  auto jobs = detail::collect<Job>(*s, [](const detail::Stmt& st) { return detail::stored(detail::read_job(st)); });
  if (!jobs) return std::move(jobs).error();
  const std::string why = d.ref + " was closed without being merged";
  std::int64_t n = 0;
  for (const Job& j : *jobs) {
    if (j.status == JobStatus::running) {
      auto up = c.prepare("UPDATE jobs SET cancel_requested = 1 WHERE id = ?1");
      if (!up) return std::move(up).error();
      KPORT_TRY(up->bind(1, j.id).run());
      ++n;
      continue;
    }
    auto fresh = detail::load_job(c, j.id);
    if (!fresh) return std::move(fresh).error();
    if (!*fresh || (*fresh)->status != JobStatus::queued) continue;
    KPORT_TRY(detail::finish_job(c, j, JobStatus::cancelled, why, now));
    ++n;
  }
  return n;
}

// Whether `sha` is `head` or one of its ancestors, through the parents pushes recorded.
Result<bool> reached_from(Connection& c, const std::string& head, const std::string& sha) {
  auto s = c.prepare(
      "WITH RECURSIVE anc(sha, depth) AS (SELECT ?1, 0 UNION ALL"
      " SELECT c.parent_sha, anc.depth + 1 FROM commits c JOIN anc ON c.sha = anc.sha"
      " WHERE c.parent_sha IS NOT NULL AND anc.depth < 100000)"
      " SELECT 1 FROM anc WHERE sha = ?2 LIMIT 1");
  if (!s) return std::move(s).error();
  auto row = s->bind_all(head, sha).step();
  if (!row) return std::move(row).error();
  return *row;
}

// A push is stale when it is older than what kport already knows of its ref: a delete
// or a force push whose `before` is not the head kport recorded (a replay with a fresh
// delivery id, which the signature does not cover, or a delivery overtaken by a later
// one), or any other push that would move the ref back to its head or an ancestor of
// it. A ref kport never saw has no record to contradict. A stale push is acted on
// not at all; the next real push moves the head on, as its `before` cannot be judged
// against an ancestor rule that only ever looks backwards.
Result<bool> stale_push(Connection& c, const PushDelivery& d) {
  auto s = c.prepare("SELECT sha FROM branch_heads WHERE repo = ?1 AND ref = ?2");
  if (!s) return std::move(s).error();
  auto row = s->bind_all(d.repo, d.ref).step();
  if (!row) return std::move(row).error();
  if (!*row) return false;
  const std::string head = s->text(0);  // '' once deleted
  // A close names the head it closed at: one kport did not record is another state.
  if (d.closed) return head != d.after_sha;
  const std::string before = zero_sha(d.before_sha) ? std::string() : d.before_sha;
  if (d.deleted || d.forced) return before != head;
  // A push of the head itself (another delivery of the same commit) is not older than the
  // record: the once-per-commit rule answers it with the pipeline that validates it.
  if (head.empty() || zero_sha(d.after_sha) || d.after_sha == head) return false;
  return reached_from(c, head, d.after_sha);
}

}  // namespace

Result<PushOutcome> Store::record_push(const PushDelivery& d, const std::optional<NewPipeline>& pipeline) {
  if (d.delivery_id.empty() || d.delivery_id.size() > 256)
    return make_error(Errc::invalid_argument, "a push needs a delivery id of 1..256 characters");
  const std::int64_t now = m_impl->now();
  return m_impl->write<PushOutcome>([&](Connection& c) -> Result<PushOutcome> {
    PushOutcome out;
    auto seen = c.prepare("SELECT outcome, pipeline_id FROM hook_deliveries WHERE delivery_id = ?1");
    if (!seen) return std::move(seen).error();
    auto row = seen->bind(1, d.delivery_id).step();
    if (!row) return std::move(row).error();
    if (*row) {
      out.duplicate = true;
      out.outcome = seen->text(0);
      if (auto id = seen->opt_int64(1)) {
        auto p = detail::load_pipeline(c, *id);
        if (!p) return std::move(p).error();
        out.pipeline = std::move(*p);
      }
      return out;
    }
    auto stale = stale_push(c, d);
    if (!stale) return std::move(stale).error();
    out.stale = *stale;
    std::optional<std::int64_t> pipeline_id;
    out.note = d.note;
    if (out.stale) {
      out.outcome = "ignored";
      out.note = "older than the recorded state of " + d.ref + "; nothing changed";
      auto rec = c.prepare(
          "INSERT INTO hook_deliveries(delivery_id, source, repo, ref, before_sha, after_sha, outcome, note,"
          " received_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'ignored', ?7, ?8)");
      if (!rec) return std::move(rec).error();
      KPORT_TRY(rec->bind_all(d.delivery_id, d.source, d.repo, d.ref, d.before_sha, d.after_sha, out.note, now).run());
      return out;
    }
    KPORT_TRY(put_commits(c, d.commits, now));
    if (pipeline) {
      auto ins = detail::insert_pipeline(c, *pipeline, now);
      if (!ins) return std::move(ins).error();
      if (ins->created)
        pipeline_id = ins->id;
      else
        out.note = detail::already_validated(pipeline->commit_sha, ins->id);
    }
    if (d.closed) {
      auto n = cancel_closed(c, d, now);
      if (!n) return std::move(n).error();
      out.superseded_jobs = *n;
    } else if (d.forced || d.deleted) {
      auto n = cancel_superseded(c, d, d.deleted ? std::string() : d.after_sha, now);
      if (!n) return std::move(n).error();
      out.superseded_jobs = *n;
    }
    auto head = c.prepare(
        "INSERT INTO branch_heads(repo, ref, sha, forced, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5)"
        " ON CONFLICT(repo, ref) DO UPDATE SET sha = excluded.sha, forced = excluded.forced,"
        " updated_ms = excluded.updated_ms");
    if (!head) return std::move(head).error();
    const bool gone = d.deleted || d.closed;
    KPORT_TRY(head->bind_all(d.repo, d.ref, gone ? std::string() : d.after_sha, d.forced, now).run());
    out.outcome = pipeline_id ? "pipeline" : gone ? "deleted" : "ignored";
    auto rec = c.prepare(
        "INSERT INTO hook_deliveries(delivery_id, source, repo, ref, before_sha, after_sha, outcome, pipeline_id,"
        " note, received_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    if (!rec) return std::move(rec).error();
    KPORT_TRY(rec->bind_all(d.delivery_id, d.source, d.repo, d.ref, d.before_sha, d.after_sha, out.outcome, pipeline_id,
                            out.note, now)
                  .run());
    if (pipeline_id) {
      auto p = detail::load_pipeline(c, *pipeline_id);
      if (!p) return std::move(p).error();
      out.pipeline = std::move(*p);
    }
    return out;
  });
}

Result<std::optional<std::string>> Store::ref_head(std::string_view repo, std::string_view ref) {
  return m_impl->read<std::optional<std::string>>([&](Connection& c) -> Result<std::optional<std::string>> {
    auto s = c.prepare("SELECT sha FROM branch_heads WHERE repo = ?1 AND ref = ?2 AND sha <> ''");
    if (!s) return std::move(s).error();
    s->bind_all(repo, ref);
    return detail::collect_one<std::string>(*s, [](const detail::Stmt& st) { return st.text(0); });
  });
}

Result<std::optional<std::string>> Store::resolve_commit(std::string_view rev) {
  const bool hex =
      rev.size() >= 7 && rev.size() <= 64 && rev.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  if (!hex && (rev.empty() || rev.size() > 255 || rev.find_first_of(" \t\n~^:?*[\\") != std::string_view::npos))
    return make_error(Errc::invalid_argument,
                      "'" + std::string(rev) + "' is neither a commit sha (7 to 64 hex digits) nor a branch name");
  return m_impl->read<std::optional<std::string>>([&](Connection& c) -> Result<std::optional<std::string>> {
    // A sha prefix is a range scan on the primary key / index: prefix <= sha < prefix + 'g'.
    // Anything else is a branch whose head a push reported (main or refs/heads/main).
    auto s =
        hex ? c.prepare(
                  "SELECT sha FROM (SELECT sha FROM commits WHERE sha >= ?1 AND sha < ?2"
                  " UNION SELECT commit_sha FROM pipelines WHERE commit_sha >= ?1 AND commit_sha < ?2) LIMIT 2")
            : c.prepare(
                  "SELECT DISTINCT sha FROM branch_heads WHERE (ref = ?1 OR ref = 'refs/heads/' || ?1) AND sha <> ''"
                  " LIMIT 2");
    if (!s) return std::move(s).error();
    std::string lo(rev), hi = std::string(rev) + "g";
    if (hex)
      s->bind_all(lo, hi);
    else
      s->bind(1, lo);
    auto rows = detail::collect<std::string>(*s, [](const detail::Stmt& st) { return st.text(0); });
    if (!rows) return std::move(rows).error();
    if (rows->size() > 1)
      return make_error(Errc::conflict,
                        hex ? "commit prefix '" + lo + "' is ambiguous; give more digits"
                            : "branch '" + lo + "' has different heads in several repositories; give the sha");
    if (rows->empty()) return std::optional<std::string>{};
    return std::optional<std::string>(rows->front());
  });
}

}  // namespace kport::db
