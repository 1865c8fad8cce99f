// Column lists and row mappers shared by the store's queries, plus small helpers to
// collect rows and to build filtered statements with bound parameters only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kport/db/queries.h"
#include "kport/db/records.h"
#include "sqlite.h"

namespace kport::db::detail {

// The reported status of job row j: awaiting_runner for a queued check job that no
// online gpu runner can take (derived, never stored). ?1 = "online since" time.
#define KPORT_JOB_STATUS_EXPR                                           \
  "CASE WHEN j.status = 'queued' AND j.kind = 'check' AND NOT EXISTS (" \
  " SELECT 1 FROM runners r WHERE r.role = 'gpu' AND r.arch = j.arch"   \
  " AND r.deregistered_ms IS NULL AND r.last_heartbeat_ms >= ?1"        \
  " AND (j.gpu_model IS NULL OR r.gpu_model = j.gpu_model)"             \
  " AND (j.driver IS NULL OR r.driver = j.driver))"                     \
  " THEN 'awaiting_runner' ELSE j.status END"

// The library (repository) a job's row belongs to, in an INSERT whose ?1 is the job id
// and ?3 the commit: the job's pipeline's repository, else that of the pipeline of the
// build it depends on (a revalidation's pipeline checks several libraries' builds), else
// the commit's, else ''.
#define KPORT_ROW_REPO_EXPR                                                                                    \
  "coalesce((SELECT nullif(p.repo, '') FROM jobs j JOIN pipelines p ON p.id = j.pipeline_id WHERE j.id = ?1)," \
  " (SELECT nullif(p.repo, '') FROM jobs j JOIN jobs b ON b.id = j.depends_on"                                 \
  "  JOIN pipelines p ON p.id = b.pipeline_id WHERE j.id = ?1),"                                               \
  " (SELECT r.name FROM commits c JOIN repositories r ON r.id = c.repo_id WHERE c.sha = ?3), '')"

// The library (repository) job row j belongs to, as KPORT_ROW_REPO_EXPR decides for the
// rows it makes: its pipeline's repository, else its build's pipeline's, else its
// commit's, else ''.
#define KPORT_JOB_REPO_EXPR                                                                                      \
  "coalesce((SELECT nullif(p.repo, '') FROM pipelines p WHERE p.id = j.pipeline_id),"                            \
  " (SELECT nullif(p.repo, '') FROM jobs b JOIN pipelines p ON p.id = b.pipeline_id WHERE b.id = j.depends_on)," \
  " (SELECT r.name FROM commits c JOIN repositories r ON r.id = c.repo_id WHERE c.sha = j.commit_sha), '')"

// Job rows: ?1 must be bound to the "online since" time (now - runner_online_ms), which
// the derived awaiting_runner status needs.
extern const char* const k_job_select;
extern const char* const k_pipeline_select;  // ... FROM pipelines p LEFT JOIN jobs j; GROUP BY added by caller
extern const char* const k_runner_select;
extern const char* const k_result_select;
extern const char* const k_build_select;
extern const char* const k_target_select;
extern const char* const k_artifact_select;
// best_candidates b joined with shapes s (for dims): the columns read_candidate reads.
extern const char* const k_candidate_select;

Job read_job(const Stmt& s);
Pipeline read_pipeline(const Stmt& s);
Runner read_runner(const Stmt& s);  // without targets and online
ResultRecord read_result(const Stmt& s);
// Inserts one result row (created_ms = now); the store has validated it and bound it to its job.
Status insert_result(Connection& c, const ResultRecord& r, std::int64_t now);
BuildRecord read_build(const Stmt& s);
Target read_target(const Stmt& s);
Artifact read_artifact(const Stmt& s);
BestCandidate read_candidate(const Stmt& s);

template <typename T, typename Map>
Result<std::vector<T>> collect(Stmt& stmt, Map map) {
  std::vector<T> out;
  for (;;) {
    auto row = stmt.step();
    if (!row) return std::move(row).error();
    if (!*row) return out;
    out.push_back(map(stmt));
  }
}

template <typename T, typename Map>
Result<std::optional<T>> collect_one(Stmt& stmt, Map map) {
  auto row = stmt.step();
  if (!row) return std::move(row).error();
  if (!*row) return std::optional<T>{};
  return std::optional<T>(map(stmt));
}

// A WHERE clause assembled from optional filters; every value is a bound parameter.
class Where {
 public:
  using Value = std::variant<std::int64_t, double, std::string>;
  explicit Where(int first_param = 1) : m_next(first_param) {}
  // cond uses a bare "?" once for the value, e.g. "r.commit_sha = ?"; numbered
  // parameters in it ("?1") are left alone.
  template <typename T>
  void add(const std::string& cond, const std::optional<T>& value) {
    if (value) add_value(cond, Value(*value));
  }
  void add_value(const std::string& cond, Value value);
  std::string sql() const { return m_sql.empty() ? std::string() : " WHERE " + m_sql; }
  void bind(Stmt& stmt) const;
  int next_param() const { return m_next; }

 private:
  std::string m_sql;
  std::vector<std::pair<int, Value>> m_values;
  int m_next;
};

// Checks a page limit (1..k_max_page_limit).
Status check_limit(int limit);

// Fills next_cursor when the page is full.
template <typename T, typename Id>
Page<T> make_page(std::vector<T> items, int limit, Id id_of) {
  Page<T> page;
  if (static_cast<int>(items.size()) == limit && !items.empty()) page.next_cursor = id_of(items.back());
  page.items = std::move(items);
  return page;
}

}  // namespace kport::db::detail
