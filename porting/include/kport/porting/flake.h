// Flaky cases and infrastructure failures: what must never be blamed on a commit.
//
// A case is (GPU model, instance, dtype, shape). It is flaky once the same code (the same
// harness binary) both passed and failed on it, a failure being failed numerics, a crash
// or a timeout: nothing the commit changed can explain that. A flaky case keeps running
// and stays listed with when it became flaky, how often it fails and the seeds that
// failed (so each can be replayed); its failures no longer fail a verdict. It is
// released after FlakePolicy::release_after passing runs in a row, and a failure after
// that is a failure again until the same code passes once more.
//
// An infrastructure failure is the machine's, not the code's: a job that failed because
// its lease expired, its runner went away or its GPU failed a health check, and the
// crashes and timeouts of a check job in which most cases crashed or timed out at once.
//
// Pure functions over plain values; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kport/porting/verdict.h"

namespace kport::porting {

struct FlakePolicy {
  int release_after = 5;            // passing runs in a row that release a flaky case
  int mass_failure_min = 4;         // a check job needs at least this many results ...
  double mass_failure_share = 0.5;  // ... more than this share crashed or timed out to be the machine's
};

struct CaseKey {
  std::string gpu_model, instance, dtype, shape;
  friend bool operator<(const CaseKey& a, const CaseKey& b) {
    return std::tie(a.gpu_model, a.instance, a.dtype, a.shape) < std::tie(b.gpu_model, b.instance, b.dtype, b.shape);
  }
};

// One check of a case, in the order they happened.
struct CaseRun {
  std::string code;  // harness sha256, else commit and target
  std::string commit;
  CheckOutcome status = CheckOutcome::passed;
  std::optional<std::int64_t> seed;
  std::int64_t result = 0;
  std::int64_t time_ms = 0;
  bool infrastructure = false;  // part of a mass failure: left out of the rule
};

struct FailedSeed {
  std::int64_t result = 0;
  std::optional<std::int64_t> seed;
  std::string commit;
  CheckOutcome status = CheckOutcome::failed;
};

struct FlakeState {
  CaseKey key;
  bool flaky = false;              // quarantined now
  bool released = false;           // was flaky, then passed release_after times in a row
  std::int64_t since_ms = 0;       // when the same code first both passed and failed (0: never)
  std::string first_commit;        // the commit it was seen flaking on
  int runs = 0, failures = 0;      // over the history given, infrastructure left out
  int clean_runs = 0;              // passing runs in a row since the last failure
  int to_release = 0;              // passing runs in a row still needed (flaky only)
  std::vector<FailedSeed> failed;  // every failure since it became flaky, oldest first
};

// Decides one case from its runs (any order; sorted by time, then result id).
FlakeState decide_flake(const CaseKey& key, std::vector<CaseRun> runs, const FlakePolicy& policy = {});

// A job's failure reason that names the machine, not the code (lease expired, runner
// deregistered, GPU health check).
bool infrastructure_failure(const std::string& reason);

// Whether a check job with `results` results, `broken` of them crashed or timed out, is a
// mass failure: the machine's, not its cases'.
bool mass_failure(int results, int broken, const FlakePolicy& policy = {});

// The check jobs among `results` in which most cases crashed or timed out at once.
std::vector<std::int64_t> mass_failure_jobs(const std::vector<ResultFact>& results, const FlakePolicy& policy = {});

}  // namespace kport::porting
