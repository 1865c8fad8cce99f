// JSON views of the dashboard pages, built from the store's dashboard read models
// (kport/db/dashboard.h). Pure functions: no I/O, thread-safe, the routes in
// routes_dashboard.cpp gather the inputs.
//
// Stages of a variant on a target (DESIGN.md, "bring-up stage") are decided here, once,
// so every page and the overview agree: each cell of the matrix is "ok" (reached),
// "fail" (tried and failed), "pending" (not tried yet) or "na" (a feature is missing).
#pragma once

#include <boost/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kport/db/dashboard.h"

namespace kport::coordinator {

// The stage flags of one variant, as the bring-up counts them.
struct StageFlags {
  bool not_applicable = false, built = false, resources_clean = false;
  bool numerics_passed = false, measured = false, selected = false;
};
StageFlags stage_flags(const db::VariantBoard& v);

// {variants, applicable, builds, resources_clean, numerics_passed, measured, selected_best}
boost::json::object progress_json(const std::vector<db::VariantBoard>& variants);
// The same counts per family: [{family, progress...}], by family name.
boost::json::array family_progress_json(const std::vector<db::VariantBoard>& variants);

// The target page: matrix rows with cells, figures, evidence and reproduce commands,
// plus the burndown series. `evidence` maps result ids to their records.
boost::json::object target_board_json(const db::TargetBoard& board,
                                      const std::map<std::int64_t, db::ResultRecord>& evidence);

// A commit against its parent, per (target, GPU model): fixed, new_failure,
// still_failing, regressed, improved (plus counts of unchanged, added, dropped keys).
// A time change counts when it exceeds both 5% and three combined standard deviations.
boost::json::object commit_diff_json(const std::vector<db::ResultBrief>& after,
                                     const std::vector<db::ResultBrief>& before, std::size_t max_changes);

// The kernel page: one series per GPU model with its noise band, share of the GPU's
// measured peak and ratio to the vendor baseline. Points are columns:
// points: {commit:[...], time_ms:[...], median_us:[...], share:[...], ...}, one entry per
// commit in commit time order.
boost::json::array kernel_series_json(const std::vector<db::KernelPoint>& points,
                                      const std::vector<db::GpuPeak>& peaks, bool memory_bound);

}  // namespace kport::coordinator
