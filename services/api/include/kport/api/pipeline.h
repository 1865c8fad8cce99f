// POST /api/v1/pipelines: a request to validate a commit (`TriggerRequest`, the OpenAPI
// document's `PipelineInput`), written by the CLI (`kport trigger`, `kport build`) and the
// watcher (git and toolkit watches), read by the coordinator; empty strings, no targets
// and an empty payload are absent fields. And a pipeline as the coordinator answers it
// (`PipelineInfo`: GET /api/v1/pipelines, with its jobs `PipelineAnswer`: GET
// /api/v1/pipelines/{id} and the trigger's answer), read by `kport status`, `kport
// trigger`, `kport build`, the watcher's git watch and the build runner (its repository):
// every field always present, null when unset, in the order written here (`Pipeline`,
// `PipelineWithJobs`, `PipelinePage`).
//
// Reading is strict: a commit that is not 7..64 lowercase hex digits, a reason or status
// kport does not know or a field of the wrong type is an invalid_argument Error naming
// the field ("field 'items[0].commit' ..."); unknown fields are ignored. Values; no thread
// affinity.
#pragma once

#include <boost/json.hpp>

#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/api/fields.h"
#include "kport/api/job.h"

namespace kport::api {

// Why a pipeline exists (the store's reasons, by the same names).
enum class PipelineReason { push, new_target, new_driver, new_gpu, manual };

inline constexpr std::array<std::string_view, 5> k_pipeline_reasons{"push", "new_target", "new_driver", "new_gpu",
                                                                    "manual"};

inline std::string_view to_string(PipelineReason r) noexcept { return k_pipeline_reasons[static_cast<std::size_t>(r)]; }

inline std::optional<PipelineReason> parse_pipeline_reason(std::string_view s) noexcept {
  for (std::size_t i = 0; i < k_pipeline_reasons.size(); ++i)
    if (k_pipeline_reasons[i] == s) return static_cast<PipelineReason>(i);
  return std::nullopt;
}

struct TriggerRequest {
  std::string commit;  // the sha to validate
  std::string repo;    // a registered repository's name; "" for the default one
  std::string ref;     // "refs/heads/main"; "" when not on a branch
  PipelineReason reason = PipelineReason::manual;
  std::string note;                                    // shown with the pipeline
  std::vector<std::string> targets;                    // empty: every known target
  boost::json::value payload = boost::json::object{};  // a job payload for every build and check (job_payload.h)
};

inline boost::json::object to_json(const TriggerRequest& t) {
  boost::json::object o{{"commit", t.commit}};
  if (!t.repo.empty()) o["repo"] = t.repo;
  if (!t.ref.empty()) o["ref"] = t.ref;
  o["reason"] = to_string(t.reason);
  if (!t.note.empty()) o["note"] = t.note;
  if (!t.targets.empty()) {
    boost::json::array a;
    for (const auto& x : t.targets) a.emplace_back(x);
    o["targets"] = std::move(a);
  }
  const bool empty_payload = t.payload.is_object() && t.payload.as_object().empty();
  if (!empty_payload) o["payload"] = t.payload;
  return o;
}

inline TriggerRequest read_trigger_request(Fields& f) {
  TriggerRequest t;
  t.commit = f.sha("commit");
  t.repo = f.opt_str("repo", 128).value_or("");
  t.ref = f.opt_str("ref", 512).value_or("");
  t.note = f.opt_str("note", 4096).value_or("");
  const auto reason = f.opt_str("reason", 32).value_or("manual");
  t.targets = f.str_list("targets", 64);
  t.payload = f.json_value("payload");
  if (!f.ok()) return t;
  if (auto r = parse_pipeline_reason(reason))
    t.reason = *r;
  else
    f.fail("reason", "must be push, new_target, new_driver, new_gpu or manual");
  return t;
}

inline Result<TriggerRequest> parse_trigger_request(const boost::json::object& o, std::string where = "") {
  Fields f(o, std::move(where));
  TriggerRequest t = read_trigger_request(f);
  if (!f.ok()) return f.error();
  return t;
}

// ---- a pipeline as the coordinator answers it ----------------------------------------

inline constexpr std::array<std::string_view, 5> k_pipeline_statuses{"queued", "running", "succeeded", "failed",
                                                                     "cancelled"};

struct PipelineInfo {
  std::int64_t id = 0;
  PipelineReason reason = PipelineReason::manual;
  std::string repo, ref, commit, note;
  std::optional<std::string> created;  // ISO 8601 UTC
  std::string status;                  // queued, running, succeeded, failed, cancelled
  std::int64_t jobs_total = 0, jobs_done = 0;
};

inline boost::json::object to_json(const PipelineInfo& p) {
  return boost::json::object{{"id", p.id},
                             {"reason", to_string(p.reason)},
                             {"repo", p.repo},
                             {"ref", p.ref},
                             {"commit", p.commit},
                             {"note", p.note},
                             {"created", detail::or_null(p.created)},
                             {"status", p.status},
                             {"jobs_total", p.jobs_total},
                             {"jobs_done", p.jobs_done}};
}

inline PipelineInfo read_pipeline_info(Fields& f) {
  PipelineInfo p;
  auto id = f.opt_int("id", 1, INT64_MAX);
  if (!id && f.ok()) f.fail("id", "is required (an integer)");
  p.id = id.value_or(0);
  const auto reason = f.str("reason", 32);
  if (auto r = parse_pipeline_reason(reason))
    p.reason = *r;
  else if (f.ok())
    f.fail("reason", "must be push, new_target, new_driver, new_gpu or manual");
  p.repo = f.opt_str("repo", 128).value_or("");
  p.ref = f.opt_str("ref", 512).value_or("");
  p.commit = f.sha("commit");
  p.note = f.opt_str("note", 4096).value_or("");
  p.created = f.opt_str("created", 64);
  p.status = f.str("status", 32);
  bool known = false;
  for (auto s : k_pipeline_statuses) known = known || s == p.status;
  if (f.ok() && !known) f.fail("status", "must be queued, running, succeeded, failed or cancelled");
  p.jobs_total = f.opt_int("jobs_total", 0, INT64_MAX).value_or(0);
  p.jobs_done = f.opt_int("jobs_done", 0, INT64_MAX).value_or(0);
  return p;
}

// A pipeline with its jobs (GET /api/v1/pipelines/{id}; POST /api/v1/pipelines, whose
// answer for a commit already queued carries the coordinator's note in `note`).
struct PipelineAnswer {
  PipelineInfo pipeline;
  std::vector<JobInfo> jobs;
};

inline boost::json::object to_json(const PipelineAnswer& a) {
  boost::json::object o = to_json(a.pipeline);
  o["jobs"] = write_list(a.jobs, [](const JobInfo& j) { return to_json(j); });
  return o;
}

inline PipelineAnswer read_pipeline_answer(Fields& f) {
  PipelineAnswer a;
  a.pipeline = read_pipeline_info(f);
  a.jobs = read_list(f, "jobs", read_job_info);
  return a;
}

inline Result<PipelineAnswer> parse_pipeline_answer(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_pipeline_answer);
}

// GET /api/v1/pipelines: a page, newest first; next_cursor is the `before` of the next.
struct PipelinePage {
  std::vector<PipelineInfo> items;
  std::optional<std::int64_t> next_cursor;
};

inline boost::json::object to_json(const PipelinePage& p) {
  return boost::json::object{{"items", write_list(p.items, [](const PipelineInfo& x) { return to_json(x); })},
                             {"next_cursor", detail::or_null(p.next_cursor)}};
}

inline PipelinePage read_pipeline_page(Fields& f) {
  PipelinePage p;
  p.items = read_list(f, "items", read_pipeline_info);
  p.next_cursor = f.opt_int("next_cursor");
  return p;
}

inline Result<PipelinePage> parse_pipeline_page(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_pipeline_page);
}

}  // namespace kport::api
