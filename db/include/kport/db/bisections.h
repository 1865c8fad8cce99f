// Records of bisections and their probes (migrations 0015, 0018). The store keeps what the
// search needs (the commits, the cases and their figures at each end) as JSON text it
// never reads, and what it found; the search rule is porting/bisect.h. Conventions as
// in records.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kport/db/records.h"

namespace kport::db {

// A probe pipeline of a bisection, with the state its jobs give it.
struct BisectionProbe {
  std::int64_t pipeline_id = 0;
  std::int64_t bisection_id = 0;
  std::string commit_sha;
  std::int64_t created_ms = 0;
  PipelineStatus status = PipelineStatus::queued;  // derived from its jobs
};

struct Bisection {
  std::int64_t id = 0;
  std::string kind;    // perf_regression, numerics_failure, build_failure
  std::string origin;  // auto (a verdict started it) or manual
  std::string repo, target, gpu_model, arch;
  std::string driver;  // the probes' checks are pinned to it; '' any (migration 0024)
  std::string good_sha, bad_sha;
  std::string commits_json;  // ["good", ..., "bad"]
  std::string cases_json;    // the cases followed, as the coordinator wrote them
  std::string good_env_json = "{}";
  std::string bad_env_json = "{}";  // where the bad end's evidence came from (migration 0018)
  std::string state = "running";    // running, done, failed, cancelled
  std::optional<std::string> cause, first_bad_sha;
  std::optional<double> effect, uncertainty;
  std::string summary;
  std::string outcome_json = "{}";
  std::int64_t created_ms = 0, updated_ms = 0;
  std::optional<std::int64_t> finished_ms;
  std::vector<BisectionProbe> probes;  // oldest first
};

// What a finished bisection found.
struct BisectionEnd {
  std::string state = "done";  // done, failed or cancelled
  std::optional<std::string> cause, first_bad_sha;
  std::optional<double> effect, uncertainty;
  std::string summary;
  std::string outcome_json = "{}";
};

struct BisectionFilter {
  std::optional<std::string> commit;  // good, bad or first bad commit, or a probed one
  std::optional<std::string> state;
  int limit = 100;
  std::optional<std::int64_t> before_id;  // newest first
};

}  // namespace kport::db
