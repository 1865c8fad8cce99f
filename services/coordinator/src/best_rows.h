// The store's current figures (db::BestCandidate) as the selection rule reads them
// (porting::Measurement): one conversion for /api/v1/best and the dispatch snapshot,
// so both hand the rule the same rows.
#pragma once

#include "kport/db/queries.h"
#include "kport/porting/selection.h"

namespace kport::coordinator {

porting::Measurement to_measurement(const db::BestCandidate& c);

}  // namespace kport::coordinator
