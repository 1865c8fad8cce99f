// A best_candidates row (db::BestCandidate) as the selection rule reads it
// (porting::Measurement): the one conversion behind /api/v1/best, measure requests, the
// dispatch snapshot and the bring-up's selected-best stage.
#pragma once

#include "kport/db/queries.h"
#include "kport/porting/selection.h"

namespace kport::db {

porting::Measurement to_measurement(const BestCandidate& c);

}  // namespace kport::db
