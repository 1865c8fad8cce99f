// The coordinator's answers as the runner reads them: each 2xx body is validated into a
// typed value before anything acts on it, so that an answer of the wrong shape (a proxy's
// HTML page sent with 200, a number where a string belongs, an attempt of 1.5, a missing
// commit) is an Error naming what was wrong instead of an exception.
//
// Every function is pure, never throws and takes any bytes (the fuzz target in
// tests/fuzz/runner_answers_fuzz.cpp holds them to that). Errors carry Errc::unavailable:
// a malformed answer says the path to the coordinator is not right now, and the runner
// retries with backoff, as it does when the coordinator cannot be reached. Messages start
// with the answer's name ("claim answer: job.attempt must be ..."); a body that is not
// JSON is quoted (its first 80 bytes, control bytes escaped).
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/api/build_record.h"
#include "kport/common/result.h"
#include "kport/runner/coordinator_api.h"

namespace kport::runner {

// A JSON document of any kind; `what` names the answer in the message ("GET /api/v1/builds").
Result<boost::json::value> parse_document(std::string_view body, std::string_view what);

// POST /api/v1/runners/register: {"token": non-empty string, "runner": {"id": integer}?,
// "heartbeat_interval_ms": integer in 100..3600000?}.
Result<Registration> parse_registration(std::string_view body);

// POST /api/v1/runners/claim: {"job": null | {"id", "kind", "commit", "target", "attempt",
// "pipeline"?, "depends_on"?, "payload"?}}. nullopt: no job came. On an Error, `unreadable`
// (when given) receives the job's lease if its id and attempt could be read, so the
// caller can give the job back instead of holding it until its lease expires.
Result<std::optional<ClaimedJob>> parse_claim(std::string_view body, std::optional<Lease>* unreadable = nullptr);

// POST /api/v1/runners/heartbeat: {"cancel_requested": bool?}.
Result<Heartbeat> parse_heartbeat(std::string_view body);

// Answers whose content the runner does not use (complete, uploads, deregister): empty,
// or a JSON object. Anything else did not come from the coordinator.
Status parse_ack(std::string_view body, std::string_view what);

// GET /api/v1/builds?...: the page of records (kport::api::BuildPage); `what` names it.
Result<api::BuildPage> parse_builds(std::string_view body, std::string_view what);

// GET /api/v1/builds?...: {"items": [{"artifact": sha256 | null, ...}]}: the artifacts the
// records name, in order. A name that is not 64 lowercase hex digits is an Error (it
// becomes a path on disk and in a URL).
Result<std::vector<std::string>> parse_build_artifacts(std::string_view body);

// The same, each harness with the environment its library's manifest gives it
// (`harness_env`, placeholders unexpanded).
struct BuildHarness {
  std::string sha256;
  std::map<std::string, std::string> env;
};
Result<std::vector<BuildHarness>> parse_build_harnesses(std::string_view body);

// GET /api/v1/repositories: {"items": [{"name", "url"}]} (or the bare array), each entry a
// kport::api::RepositoryInfo: the URL of `name`; nullopt when it is not listed.
Result<std::optional<std::string>> parse_repository_url(std::string_view body, std::string_view name);

// GET /api/v1/pipelines/{id} (kport::api::PipelineAnswer): the repository it names ("" for
// none).
Result<std::string> parse_pipeline_repo(std::string_view body);

}  // namespace kport::runner
