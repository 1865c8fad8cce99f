// A target's bring-up as every reader shows it: the store's facts (db::TargetBoard)
// converted into porting's plain facts and decided by porting::decide_stages, once per
// answer. GET /api/v1/targets/{t}/bringup (and so `kport bringup`), the dashboard's target
// page and the overview's counts all come through here.
#pragma once

#include <boost/json.hpp>

#include "kport/api/bringup.h"
#include "kport/db/dashboard.h"
#include "kport/porting/bringup.h"

namespace kport::coordinator {

// Target features are stored as {"wgmma": true, ...} (the watcher's form) or as an array.
porting::TargetFacts target_facts(const db::TargetBoard& board);
// One entry per board variant, in the board's order.
std::vector<porting::VariantFacts> variant_facts(const db::TargetBoard& board);
porting::BringupStages stages_of(const db::TargetBoard& board);

api::StageCounts to_api(const porting::StageCounts& c);
// {variants, applicable, builds, resources_clean, numerics_passed, measured, selected_best}
boost::json::object counts_json(const porting::StageCounts& c);
// [{family, counts...}], by family name.
boost::json::array families_json(const porting::BringupStages& s);

// GET /api/v1/targets/{t}/bringup (kport::api::BringupAnswer): {target, commit, progress,
// families, variants: [...]}, the variants in the board's order.
api::BringupAnswer bringup_answer(const db::TargetBoard& board, const porting::BringupStages& stages);
boost::json::object bringup_json(const db::TargetBoard& board, const porting::BringupStages& stages);

}  // namespace kport::coordinator
