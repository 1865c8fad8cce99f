// JSON views of the dashboard pages, built from the store's dashboard read models
// (kport/db/dashboard.h) and the decisions of porting's rules. Pure functions: no I/O,
// thread-safe, the routes in routes_dashboard.cpp gather the inputs.
//
// Stages are not decided here: the target page and the overview show porting's
// decide_stages (bringup_stages.h), the commit page porting's verdict and its classify, so
// each page says what the API and the CLI say. Each cell of the matrix is "ok" (reached),
// "fail" (tried and failed), "pending" (not tried yet) or "na" (a feature is missing).
#pragma once

#include <boost/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kport/db/dashboard.h"
#include "kport/porting/bringup.h"
#include "kport/porting/verdict.h"

namespace kport::coordinator {

// The target page: matrix rows with cells, figures, evidence and reproduce commands, the
// stage commit, plus the burndown series. `stages` is stages_of(board); `evidence` maps
// result ids to their records.
boost::json::object target_board_json(const db::TargetBoard& board, const porting::BringupStages& stages,
                                      const std::map<std::int64_t, db::ResultRecord>& evidence);

// A commit's results against its verdict's baseline, per (target, GPU model), each
// classified by porting::classify under `policy` and, when given, the series' noise
// models (as the verdict is): new_failure, regressed, fixed, improved, still_failing,
// unstable, insufficient_data (plus counts of unchanged, added, dropped keys).
boost::json::object commit_diff_json(const std::vector<porting::ResultFact>& after,
                                     const std::vector<porting::ResultFact>& before,
                                     const porting::VerdictPolicy& policy, std::size_t max_changes,
                                     const porting::NoiseBook* noise = nullptr);

// The kernel page: one series per GPU model with its noise band, share of the GPU's
// measured peak and ratio to the vendor baseline. Points are columns:
// points: {commit:[...], time_ms:[...], median_us:[...], share:[...], ...}, one entry per
// commit in commit time order.
boost::json::array kernel_series_json(const std::vector<db::KernelPoint>& points, const std::vector<db::GpuPeak>& peaks,
                                      bool memory_bound);

}  // namespace kport::coordinator
