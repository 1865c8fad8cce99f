// Flakiness is decided per code, not per commit: two commits may build different
// binaries for a case, and a pass on one with a failure on the other is a change, not a
// flake. A failure and a pass of one binary is the only evidence that needs no model of
// the GPU. Infrastructure runs are left out before anything is counted, so a GPU that
// fell over neither makes a case flaky nor resets a release.
#include "kport/porting/flake.h"

#include <algorithm>
#include <map>

namespace kport::porting {

namespace {

bool failing(CheckOutcome s) {
  return s == CheckOutcome::failed || s == CheckOutcome::crashed || s == CheckOutcome::timeout;
}

}  // namespace

FlakeState decide_flake(const CaseKey& key, std::vector<CaseRun> runs, const FlakePolicy& policy) {
  std::stable_sort(runs.begin(), runs.end(), [](const CaseRun& a, const CaseRun& b) {
    return a.time_ms != b.time_ms ? a.time_ms < b.time_ms : a.result < b.result;
  });
  FlakeState st;
  st.key = key;
  std::map<std::string, std::pair<bool, bool>> seen;  // code -> (passed, failed)
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const CaseRun& r = runs[i];
    if (r.infrastructure || r.status == CheckOutcome::unsupported) continue;
    ++st.runs;
    const bool fails = failing(r.status);
    auto& [passed, failed] = seen[r.code];
    (fails ? failed : passed) = true;
    if (fails) {
      ++st.failures;
      st.clean_runs = 0;
    } else {
      ++st.clean_runs;
    }
    if (!st.flaky && passed && failed) {
      // Flaky from the run that completed the evidence; its earlier failures on this code
      // are listed too, they are what made it flaky.
      st.flaky = true;
      st.released = false;
      st.since_ms = r.time_ms;
      st.first_commit = r.commit;
      st.failed.clear();
      for (std::size_t j = 0; j < i; ++j)
        if (!runs[j].infrastructure && runs[j].code == r.code && failing(runs[j].status))
          st.failed.push_back({runs[j].result, runs[j].seed, runs[j].commit, runs[j].status});
      if (fails) st.failed.push_back({r.result, r.seed, r.commit, r.status});
      continue;
    }
    if (st.flaky && fails) st.failed.push_back({r.result, r.seed, r.commit, r.status});
    if (st.flaky && st.clean_runs >= policy.release_after) {
      st.flaky = false;
      st.released = true;
      // A release forgets which codes flaked: the next flake must show itself again.
      seen.clear();
    }
  }
  st.to_release = st.flaky ? std::max(0, policy.release_after - st.clean_runs) : 0;
  return st;
}

bool infrastructure_failure(const std::string& reason) {
  for (const char* sign : {"lease expired", "runner deregistered", "failed its health check"})
    if (reason.find(sign) != std::string::npos) return true;
  return false;
}

bool mass_failure(int results, int broken, const FlakePolicy& policy) {
  return results >= policy.mass_failure_min && broken > policy.mass_failure_share * static_cast<double>(results);
}

std::vector<std::int64_t> mass_failure_jobs(const std::vector<ResultFact>& results, const FlakePolicy& policy) {
  std::map<std::int64_t, std::pair<int, int>> per_job;  // job -> (results, crashed or timed out)
  for (const auto& r : results) {
    if (!r.job_id) continue;
    auto& [n, bad] = per_job[*r.job_id];
    ++n;
    if (r.status == CheckOutcome::crashed || r.status == CheckOutcome::timeout) ++bad;
  }
  std::vector<std::int64_t> out;
  for (const auto& [job, counts] : per_job)
    if (mass_failure(counts.first, counts.second, policy)) out.push_back(job);
  return out;
}

}  // namespace kport::porting
