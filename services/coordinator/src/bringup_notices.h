// Bring-up milestones and regressions, told to the notification webhooks (--notify-urls,
// signed like every webhook): when a target's stage counts (porting/bringup.h: builds,
// resources clean, numerics passed, measured, selected best) first leave zero (level
// `first`) or first reach every applicable variant (level `all`), each milestone once
// per target; and when a count drops below what was last told (a regression of the
// bring-up, event `bringup.regression`).
//
// A target is looked at when a job of its stage commit ends and none of that commit's
// jobs for the target is left unfinished: counts of a commit half validated (built, not
// yet checked) are not a drop. The pure parts decide; notify_bringup reads the store,
// decides and writes the new mark with its deliveries in one transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "context.h"
#include "kport/db/forge.h"
#include "kport/porting/bringup.h"

namespace kport::coordinator {

struct StageDrop {
  std::string stage;
  std::int64_t before = 0, after = 0;
};

struct BringupChange {
  std::vector<std::string> milestones;  // "stage/level" reached since the mark
  std::vector<StageDrop> regressions;   // counts below the mark's
  bool empty() const { return milestones.empty() && regressions.empty(); }
};

// The stage names and their counts, in stage order.
std::vector<std::pair<std::string, std::int64_t>> stage_counts(const porting::StageCounts& c);
// The counts a mark stored (counts_json of bringup_stages.h); nullopt when unreadable.
std::optional<porting::StageCounts> parse_stage_counts(const std::string& json);

BringupChange bringup_change(const std::optional<porting::StageCounts>& told, const std::vector<std::string>& announced,
                             const porting::StageCounts& now);

struct BringupNotice {
  std::string target;
  std::string repo;  // the library whose board it is; "" for none
  bool is_new = false;
  std::optional<std::string> commit;
  porting::StageCounts counts;
  BringupChange change;
  std::string public_url;
  std::vector<std::string> notify_urls;
  int max_attempts = 10;
};

// One `bringup.milestone` webhook per URL when milestones were reached, one
// `bringup.regression` when counts dropped.
std::vector<db::NewDelivery> bringup_deliveries(const BringupNotice& notice);

// After job `job_id` ended: looks at its target as described above. Never fails the
// caller; problems are logged.
void notify_bringup(Context& ctx, std::int64_t job_id);

}  // namespace kport::coordinator
