// One build job, start to end: find the repository, check the commit out in the cached
// workspace, build the target through the porting driver, upload the harness, one
// build record per (variant, target), the kernel instances and the log.
//
// run_build_job() never throws and always says how the job ended: succeeded, with a
// summary that names any variant that failed to compile or timed out (the harness holds
// the variants that built, the records hold the failures, and the coordinator spawns the
// checks), or failed with a reason a person can act on (unknown repository, missing
// commit, unreachable repository, a target the toolkit cannot build, no variant built,
// the harness did not link, cancelled) and whether a retry could help. Uploads go through `api`; the
// caller heartbeats on another thread and sets `cancel` when the coordinator asks.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "kport/common/env.h"
#include "kport/porting/build_driver.h"
#include "kport/porting/catalog.h"
#include "kport/runner/coordinator_api.h"

namespace kport::runner {

struct BuildSettings {
  std::filesystem::path workdir;  // repos/ (workspaces) and build/ live here
  std::string nvcc = "nvcc";
  std::string cuobjdump;  // the SASS audit's disassembler; empty: beside nvcc, else PATH
  int jobs = 0;           // parallel compiles; 0 = cores
  std::chrono::seconds compile_timeout{900};
  std::string catalog_file;         // fallback when the commit has no porting/catalog/targets.json
  porting::ToolkitListing toolkit;  // probed once at start
  Env* env = nullptr;               // the build's children start through it; null: Env::system()
};

struct JobOutcome {
  bool succeeded = false;
  std::string reason;  // why it failed; a summary when it succeeded
  bool retry = false;  // a transient failure (repository unreachable, upload failed)
};

// The steps a build job and a GPU runner without a harness artifact share: find the
// job's repository, check its commit out in the cached workspace, build its target.
// Errors carry unavailable when a retry could help.
struct CheckoutBuild {
  std::string sha;
  std::optional<std::string> parent;
  porting::BuildReport report;
  std::filesystem::path repo_dir, kernels_dir;  // the checkout and its kernels tree (the variants' sources)
};
Result<CheckoutBuild> checkout_and_build(CoordinatorApi& api, const ClaimedJob& job, const BuildSettings& settings,
                                         const std::atomic<bool>& cancel,
                                         const std::function<void(const std::string&)>& log);

JobOutcome run_build_job(CoordinatorApi& api, const ClaimedJob& job, const BuildSettings& settings,
                         const std::atomic<bool>& cancel, const std::function<void(const std::string&)>& log);

}  // namespace kport::runner
