// Uploading a finished build: the harness as a content-addressed artifact, one build
// record per (variant, target), and the instances and variants the harness lists. Internal to the
// runner library.
#pragma once

#include <functional>
#include <string>

#include "kport/api/build_record.h"
#include "kport/porting/build_driver.h"
#include "kport/runner/coordinator_api.h"

namespace kport::runner {

// The build record the coordinator stores for one variant (the artifact only for a
// variant that built: the harness holds it).
api::BuildRecordUpload build_record(const porting::VariantRecord& r, const std::string& commit,
                                    const std::string& artifact_sha256);

// From `kport-harness list` output, every variant the harness knows (built or left out)
// as {family, variant, features}: what PUT /api/v1/kernels records as "variants", so a
// target never built can be planned. Entries without an id or features are skipped.
boost::json::array harness_variants(const boost::json::object& list);

// `env` starts the harness's `list`.
Status publish_build(CoordinatorApi& api, const ClaimedJob& job, const std::string& commit,
                     const porting::BuildReport& report, const std::function<void(const std::string&)>& log, Env& env);

}  // namespace kport::runner
