// Bisections: the application layer that starts them, probes commits for them and ends
// them. The search rule is porting::next_step (kport/porting/bisect.h); this layer reads
// what it needs from the store and the repository (Context::commit_path, libgit2 through
// services/git), creates each probe as a pipeline with the store's one insert path, and
// writes what the rule found.
//
// A probe pipeline of a commit has one build job of the bisection's target, its payload
// naming only the affected variants ("variants") and, for timing and numerics, the
// affected cases ("cases", "instances", "bench" for timing); the build spawns one check
// job pinned to the GPU model that saw the reason (db: spawn_checks). Probes stay out of
// commit verdicts (the store leaves their records out of verdict_inputs and of what
// makes a commit validated).
//
// Thread-safe: advancing is serialized in-process, so two probes ending at once plan the
// next step once.
//
// A bisection's end (found, stopped, cancelled) is told where the push came from: the
// bad commit's completed forge reports are sent again with it, and a bisection.finished
// webhook goes to every notify URL, enqueued with the end (forge_report.h
// plan_bisection_end).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "context.h"
#include "kport/db/bisections.h"
#include "kport/porting/bisect.h"
#include "kport/porting/verdict.h"

namespace kport::coordinator::app {

// What to search: one kind of reason on one (target, GPU model) between two commits.
struct BisectRequest {
  porting::BisectKind kind = porting::BisectKind::perf_regression;
  std::string target, gpu_model;    // gpu_model empty for a build failure
  std::string bad;                  // full sha
  std::optional<std::string> good;  // nullopt: the bad commit's validated ancestor
  std::vector<std::string> cases;   // "instance dtype shape", or "family.variant" for builds; empty: every
                                    // case of the kind the bad commit's verdict counts there
  std::string origin = "manual";    // auto or manual
};

struct BisectOpened {
  std::optional<db::Bisection> bisection;  // nullopt: that reason is bisected already (see `note`)
  std::string note;
};

// Validates and opens one bisection: not_found for a commit kport never saw or a good
// end that is not a first-parent ancestor, invalid_argument for a case the commits do not
// have, unprocessable when there is nothing to search (no case differs, no repository).
Result<BisectOpened> start_bisection(Context& ctx, const BisectRequest& request);

// Starts a bisection for every reason of `verdict` that can have one (a counted slowdown,
// a new numerics failure, a new build failure against a baseline with commits between),
// grouped by (kind, target, GPU model). Returns how many were opened; failures are
// logged, never returned: the completion that asked has already happened.
std::size_t start_bisections(Context& ctx, const porting::Verdict& verdict);

// When `job` belongs to a bisection's probe: decides the bisection's next step once the
// probe's pipeline has ended (probe more commits, or end it) and returns true; false for
// any other job.
bool advance_probe(Context& ctx, const db::Job& job);
// The same for a pipeline (one cancelled by hand): true when it is a bisection's probe.
// A probe whose jobs were cancelled ends its bisection cancelled; one that failed on the
// machine (porting::infrastructure_failure) is probed again once, then ends it failed.
bool advance_pipeline(Context& ctx, std::int64_t pipeline_id);
// Advances every running bisection none of whose probes is open (what a probe ending
// unseen, a coordinator restart in between, would otherwise leave running); the reaper
// calls it now and then. Returns how many it looked at.
std::size_t sweep_bisections(Context& ctx);
// Cancels a running bisection by hand: it ends cancelled, saying so with `reason`, and
// its open probes' jobs are cancelled. not_found for no such bisection, conflict for one
// that has already ended. Its end is reported like any other.
Result<db::Bisection> cancel_bisection(Context& ctx, std::int64_t id, const std::string& reason);

// The bisection as the API answers it (GET /api/v1/bisections/{id}).
boost::json::object bisection_json(const db::Bisection& b);

// One line for reports: kind, where, state, first bad commit, effect, cause, and the
// bisection's dashboard page under `public_url` (the dashboard's root; empty: a relative
// path).
std::string bisection_line(const db::Bisection& b, const std::string& public_url);

}  // namespace kport::coordinator::app
