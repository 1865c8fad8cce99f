// The coordinator's side of a commit's verdict: it loads what the rule needs from the
// store, converts the records into porting's plain facts, and serializes the answer. The
// rule itself (what counts, the thresholds, the baseline's role) is porting's
// decide_verdict (kport/porting/verdict.h), the same for the verdict route, the commit
// page and the forge reports.
//
// The baseline is chosen here, once: the closest validated ancestor (through
// commits.parent_sha; a commit with build records or results).
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "kport/api/verdict.h"
#include "kport/db/hooks.h"
#include "kport/db/store.h"
#include "kport/porting/flake.h"
#include "kport/porting/verdict.h"

namespace kport::coordinator {

using porting::RemeasureRequest;
using porting::Verdict;
using porting::VerdictPolicy;
using porting::VerdictReason;

// Record -> fact conversions (the only place db statuses meet porting's).
porting::ResultFact fact_of(const db::ResultRecord& r);
porting::BuildFact fact_of(const db::BuildRecord& b);
porting::CommitFacts facts_of(const db::VerdictInputs& in);

// The noise model of every series `figures` hold (Store::commit_series_history).
porting::NoiseBook noise_book(const std::vector<db::SeriesFigure>& figures, const porting::NoisePolicy& policy = {});

// The flake state of every case `runs` hold (Store::case_runs); a run of a check job that
// failed en masse (porting::mass_failure) is infrastructure.
porting::FlakeBook flake_book(const std::vector<db::CaseRunRecord>& runs, const porting::FlakePolicy& policy = {});

// Everything one commit is judged from.
struct VerdictCase {
  std::string commit;
  std::optional<std::string> baseline;  // closest validated ancestor
  porting::CommitFacts mine, base;
  porting::NoiseBook noise;   // the series of mine's results, from their A/A history
  porting::FlakeBook flakes;  // the cases mine failed on, from all their runs
};

// Finds the baseline of `sha` and loads its inputs and its series' noise; `mine` were
// read by the caller.
Result<VerdictCase> verdict_case(db::Store& store, const std::string& sha, const db::VerdictInputs& mine,
                                 const porting::FlakePolicy& flakes = {});
Verdict decide(const VerdictCase& c, const VerdictPolicy& policy = {});  // calibrated by c.noise

// Same inputs, as records (the rule's pure entry point, for callers holding records).
Verdict decide(const std::string& commit, const db::VerdictInputs& mine, const std::optional<std::string>& baseline_sha,
               const db::VerdictInputs& baseline, const VerdictPolicy& policy = {});

// Results measured with a new driver against the previous driver's (porting::compare_drivers).
std::vector<VerdictReason> compare_drivers(const std::vector<db::ResultRecord>& now,
                                           const std::vector<db::ResultRecord>& before, const std::string& driver,
                                           const std::string& previous_driver, const VerdictPolicy& policy = {});

// The answers, as kport::api's types (their one JSON mapping is there).
api::CommitVerdict to_api(const Verdict& v);
// A series' noise as the API answers it: status "calibrated" or "insufficient_data",
// sigma and mde only once calibrated, summary in words.
api::SeriesNoise to_api(const porting::NoiseModel& m, const porting::NoisePolicy& policy = {});
// A case's flake state as GET /api/v1/flakes answers it.
api::FlakeCase to_api(const porting::FlakeState& f);
api::VerdictReason to_api(const VerdictReason& r);

// The same, as JSON (api::to_json of the above).
boost::json::value to_json(const Verdict& v);
boost::json::object to_json(const porting::NoiseModel& m, const porting::NoisePolicy& policy = {});
boost::json::object to_json(const porting::FlakeState& f);
boost::json::value to_json(const VerdictReason& r);

}  // namespace kport::coordinator
