// Uploading a finished build: the harness as a content-addressed artifact, one build
// record per (variant, target), and the instances and variants the harness lists. Internal to the
// runner library.
#pragma once

#include <filesystem>
#include <map>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kport/api/build_record.h"
#include "kport/api/job_report.h"
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
std::vector<api::KernelVariantUpload> harness_variants(const boost::json::object& list);

// The checkout a build was made from: the repository root and its kernels tree.
struct SourceTree {
  std::filesystem::path repo_dir, kernels_dir;
};

// Each record's source_path (relative to the repository root) and source_line (the line
// of the first __global__ in the variant's first source, else 1), read from the kernels
// tree's variant declarations; records of variants the tree does not declare keep none.
void locate_sources(std::vector<api::BuildRecordUpload>& records, const SourceTree& tree);

// The families the library's manifest (kport.json in `tree.kernels_dir`) declares, as
// PUT /api/v1/kernels carries them for the build job `job`; nullopt when the tree has no
// manifest or it declares none.
std::optional<api::LibraryFamilies> library_families(const SourceTree& tree, std::int64_t job);

// The environment the library's manifest (kport.json in `kernels_dir`) gives its harness
// (`env`, placeholders unexpanded); empty without a manifest or when it names none.
std::map<std::string, std::string> manifest_env(const std::filesystem::path& kernels_dir);

// `env` starts the harness's `list` (with the manifest's env, as the build ran it);
// `tree`, when given, locates each variant's source and names the manifest whose env
// every record carries (harness_env) for the GPU runner.
Status publish_build(CoordinatorApi& api, const ClaimedJob& job, const std::string& commit,
                     const porting::BuildReport& report, const std::function<void(const std::string&)>& log, Env& env,
                     const SourceTree& tree = {});

}  // namespace kport::runner
