// Flags resource changes against the parent commit's build of the same target: each
// changed variant gets a log line and a "resource change since <parent>: ..." line in
// front of its record message, so the coordinator stores and shows it. Internal.
#pragma once

#include <functional>
#include <string>

#include "kport/porting/build_driver.h"
#include "kport/runner/coordinator_api.h"

namespace kport::runner {

// Returns how many variants changed; a parent never built for this target changes none.
int flag_resource_changes(CoordinatorApi& api, const std::string& parent_sha, porting::BuildReport& report,
                          const std::function<void(const std::string&)>& log);

}  // namespace kport::runner
