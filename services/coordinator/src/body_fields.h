// Reading request bodies: the coordinator reads every body with kport::api's strict field
// reader (kport/api/fields.h), so a route's messages name fields as the typed messages do
// ("field 'results[3].median_us' must be a number").
#pragma once

#include "kport/api/fields.h"

namespace kport::coordinator {

using api::Fields;
using api::is_commit_sha;
using api::parse_object;

}  // namespace kport::coordinator
