// A job as the coordinator answers it (`JobInfo`: GET /api/v1/jobs, a pipeline's jobs, a
// claim) and the answer to a runner's long-poll claim (`ClaimAnswer`: POST
// /api/v1/runners/claim). The coordinator writes both from its store's records; the runner
// reads the claim. The wire forms are the contracts the OpenAPI document describes
// (`Job`, `ClaimedJob`, `NoJob`): every JobInfo field is always present, null when unset.
//
// Reading is strict where the runner acts on a field, lenient where it does not: a claimed
// job needs its id (>= 1), attempt, kind, commit (7..64 hex digits: it goes into a
// checkout) and target (an nvcc target: it goes into file names); the other fields are
// read when present. A problem is an invalid_argument Error naming the field
// ("field 'job.attempt' must be an integer in 0..2147483647"). Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kport/api/fields.h"

namespace kport::api {

struct JobInfo {
  std::int64_t id = 0;
  std::int64_t pipeline = 0;
  std::string kind;    // build, check
  std::string status;  // queued, awaiting_runner, running, succeeded, failed, cancelled
  std::string commit, target;
  std::optional<std::string> arch, gpu_model;  // a check's GPU class, and the model it is pinned to
  std::optional<std::string> driver;           // and the driver, when pinned to one (a bisection's probes)
  std::optional<std::int64_t> depends_on;      // a check's build
  int attempt = 0, max_attempts = 0;
  std::optional<std::int64_t> runner;        // the lease holder while running
  std::optional<std::string> lease_expires;  // times are ISO 8601 UTC
  bool cancel_requested = false;
  boost::json::value payload = boost::json::object{};  // what to run (job_payload.h); a claimed job's is an object
  std::optional<std::string> failure_reason;
  std::optional<std::string> created, started, finished, not_before;
};

struct ClaimAnswer {
  std::optional<JobInfo> job;              // none: nothing came within the wait
  std::int64_t lease_expires_ms = 0;       // with a job: when its lease ends unless heartbeats extend it
  std::int64_t heartbeat_interval_ms = 0;  // with a job
  std::int64_t retry_after_ms = 0;         // without a job: when to ask again
};

namespace detail {
inline boost::json::value or_null(const std::optional<std::string>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}
inline boost::json::value or_null(const std::optional<std::int64_t>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}
// A git object id, any case: it goes into a checkout and a query string.
inline bool is_git_id(std::string_view s) noexcept {
  if (s.size() < 7 || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}
// An nvcc target (sm_90a, compute_120f): it goes into file names and a query string.
inline bool is_target_name(std::string_view s) noexcept {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
          c == '-'))
      return false;
  return true;
}
}  // namespace detail

inline boost::json::object to_json(const JobInfo& j) {
  using detail::or_null;
  return boost::json::object{{"id", j.id},
                             {"pipeline", j.pipeline},
                             {"kind", j.kind},
                             {"status", j.status},
                             {"commit", j.commit},
                             {"target", j.target},
                             {"arch", or_null(j.arch)},
                             {"gpu_model", or_null(j.gpu_model)},
                             {"driver", or_null(j.driver)},
                             {"depends_on", or_null(j.depends_on)},
                             {"attempt", j.attempt},
                             {"max_attempts", j.max_attempts},
                             {"runner", or_null(j.runner)},
                             {"lease_expires", or_null(j.lease_expires)},
                             {"cancel_requested", j.cancel_requested},
                             {"payload", j.payload},
                             {"failure_reason", or_null(j.failure_reason)},
                             {"created", or_null(j.created)},
                             {"started", or_null(j.started)},
                             {"finished", or_null(j.finished)},
                             {"not_before", or_null(j.not_before)}};
}

inline boost::json::object to_json(const ClaimAnswer& c) {
  if (!c.job) return boost::json::object{{"job", nullptr}, {"retry_after_ms", c.retry_after_ms}};
  return boost::json::object{{"job", to_json(*c.job)},
                             {"lease_expires_ms", c.lease_expires_ms},
                             {"heartbeat_interval_ms", c.heartbeat_interval_ms}};
}

// Reads a job; problems go into `f` in the order the runner needs them (id and attempt
// first: with those a caller can give a job back whose other fields it cannot read).
inline JobInfo read_job_info(Fields& f) {
  JobInfo j;
  auto id = f.opt_int("id", 1, INT64_MAX);
  if (!id && f.ok()) f.fail("id", "is required (an integer)");
  j.id = id.value_or(0);
  auto attempt = f.opt_int("attempt", 0, INT_MAX);
  if (!attempt && f.ok()) f.fail("attempt", "is required (an integer)");
  j.attempt = static_cast<int>(attempt.value_or(0));
  j.kind = f.str("kind", 16);
  if (f.ok() && j.kind.empty()) f.fail("kind", "must not be empty");
  j.commit = f.str("commit", 64);
  if (f.ok() && !detail::is_git_id(j.commit)) f.fail("commit", "must be a git commit id (7 to 64 hex digits)");
  j.target = f.str("target", 64);
  if (f.ok() && !detail::is_target_name(j.target)) f.fail("target", "must be an nvcc target such as sm_90a");
  j.pipeline = f.opt_int("pipeline", 0, INT64_MAX).value_or(0);
  j.depends_on = f.opt_int("depends_on", 1, INT64_MAX);
  if (const auto* p = f.object("payload")) j.payload = *p;
  j.status = f.opt_str("status", 32).value_or("");
  j.arch = f.opt_str("arch", 16);
  j.gpu_model = f.opt_str("gpu_model", 256);
  j.driver = f.opt_str("driver", 64);
  j.max_attempts = static_cast<int>(f.opt_int("max_attempts", 0, INT_MAX).value_or(0));
  j.runner = f.opt_int("runner");
  j.lease_expires = f.opt_str("lease_expires", 64);
  j.cancel_requested = f.boolean("cancel_requested", false);
  j.failure_reason = f.opt_str("failure_reason", 1 << 20);
  j.created = f.opt_str("created", 64);
  j.started = f.opt_str("started", 64);
  j.finished = f.opt_str("finished", 64);
  j.not_before = f.opt_str("not_before", 64);
  return j;
}

// A claim's answer; a job that is absent or null is "no job".
inline ClaimAnswer read_claim_answer(Fields& f) {
  ClaimAnswer c;
  if (const auto* job = f.object("job")) {
    Fields jf(*job, f.path("job"));
    c.job = read_job_info(jf);
    if (!jf.ok()) f.fail_with(jf.error());
  }
  c.lease_expires_ms = f.opt_int("lease_expires_ms").value_or(0);
  c.heartbeat_interval_ms = f.opt_int("heartbeat_interval_ms").value_or(0);
  c.retry_after_ms = f.opt_int("retry_after_ms").value_or(0);
  return c;
}

}  // namespace kport::api
