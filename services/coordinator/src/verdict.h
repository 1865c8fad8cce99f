// A commit's verdict: what it broke compared with a baseline commit (its parent, or the
// closest validated ancestor) on the same targets and GPU models.
//
// Reasons, each naming the variant, target, GPU and figures:
//   build_failure        a variant that built at the baseline no longer compiles
//   job_failure          a build or check job failed without records to show for it
//   numerics_failure     a check that passed at the baseline fails, crashes or times out
//   perf_regression      median slower by >= the threshold (3%) and by more than the
//                        measured noise; counted only after one re-measure
//   resource_regression  new register spills, or more shared memory per block
// Status: fail when any reason counts; else pending while a job of the commit is
// unfinished or a suspected regression awaits its re-measure; else pass.
//
// decide() is pure: the caller loads the inputs and acts on `remeasure`. Thread-safe.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "kport/db/hooks.h"

namespace kport::coordinator {

struct VerdictPolicy {
  double slowdown = 0.03;  // relative median increase that can count as a regression
  double noise_sigmas = 2.0;  // ... when also beyond this many combined standard deviations
};

struct VerdictReason {
  std::string kind;     // build_failure, job_failure, numerics_failure, perf_regression, resource_regression
  std::string variant;  // family.variant, or family.variant instance for results
  std::string target, gpu_model;
  std::string message;  // one line naming everything above and the figures
  boost::json::object figures;
};

// Suspected regressions of one (target, GPU model) that need their re-measure.
struct RemeasureRequest {
  std::string target, gpu_model, arch;
  std::vector<std::string> instances;
};

struct Verdict {
  std::string commit;
  std::optional<std::string> baseline;  // the commit compared with
  std::string status = "pending";       // pending, pass or fail
  std::vector<VerdictReason> reasons;
  std::vector<std::string> waiting;     // why it is not final: unfinished jobs, re-measures
  std::vector<RemeasureRequest> remeasure;
  int builds = 0, results = 0;          // records looked at
};

Verdict decide(const std::string& commit, const db::VerdictInputs& mine, const std::optional<std::string>& baseline_sha,
               const db::VerdictInputs& baseline, const VerdictPolicy& policy = {});

// Compares results measured with a new driver with the same configurations measured
// with the previous driver on the same GPU model (numerics and performance reasons).
std::vector<VerdictReason> compare_drivers(const std::vector<db::ResultRecord>& now,
                                           const std::vector<db::ResultRecord>& before,
                                           const std::string& driver, const std::string& previous_driver,
                                           const VerdictPolicy& policy = {});

boost::json::value to_json(const Verdict& v);
boost::json::value to_json(const VerdictReason& r);

}  // namespace kport::coordinator
