// The coordinator's application layer for pipelines and jobs: the one path by which a
// request becomes queued work. Each function reads what the rule needs from the store,
// asks job_plan.h which jobs to create, writes them with one store call (one
// transaction), then wakes parked claims and announces new pipelines on the event hub.
// Routes parse, authorize, call one of these and serialize the answer.
//
// Thread-safe as the store is; errors are the store's or invalid input's (Result).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "best_evidence.h"
#include "context.h"
#include "push_event.h"
#include "job_plan.h"

namespace kport::coordinator::app {

// ---- triggered pipelines (POST /api/v1/pipelines: CLI, watchers, operators) ----------
struct TriggerRequest {
  PipelineOrigin origin;             // reason push, new_target or manual
  std::vector<std::string> targets;  // empty: every known target
  std::string payload_json;          // for the runners of its builds and checks
};

struct Triggered {
  db::Pipeline pipeline;
  bool created = true;  // false: a push of a commit that already has a pipeline
  std::string note;     // why nothing was created
};

// Plans and creates the pipeline. unprocessable for new_gpu / new_driver (they come from
// open_revalidation) and when no target is known; not_found naming an unknown target.
// A push of a commit that already has a pipeline creates nothing and answers that one,
// as a webhook does: a commit is validated once, whichever way it arrived (decided in
// the creating transaction).
Result<Triggered> trigger(Context& ctx, const TriggerRequest& request);

// ---- pushes (POST /api/v1/hooks/push) --------------------------------------------------
struct PushReceived {
  db::PushDelivery delivery;  // as recorded (note says why no pipeline, when none)
  db::PushOutcome outcome;
};

// Records a verified push event and, for a branch push of a commit without a pipeline,
// its pipeline, in one transaction with the delivery id: a redelivery changes nothing,
// and of several pushes of one commit racing, one makes the pipeline. not_found when the
// repository is not registered. A delete or a force push is acted on only once the
// repository confirms it (Context::ref_lookup on its registered URL: a deleted ref is
// gone, a rewound one points at `after`): conflict, with nothing recorded, when the
// repository says otherwise; unavailable when it cannot be asked.
Result<PushReceived> receive_push(Context& ctx, const PushEvent& event);

// ---- revalidations (POST /api/v1/revalidations) ---------------------------------------
struct RevalidationOpened {
  std::optional<db::Revalidation> revalidation;  // nullopt: this pair was revalidated before
  std::size_t jobs = 0;
};

// Opens the revalidation of a (GPU model, driver) a registered runner reported: not_found
// when none did. The pipeline (if anything was built that the arch checks) and the
// revalidation record commit together.
Result<RevalidationOpened> open_revalidation(Context& ctx, const std::string& gpu_model, const std::string& driver);

// The newest driver recorded for the model before `driver` (dotted versions compare by
// number: 580.65.06 > 580.9); empty when there is none.
std::string previous_driver(const db::GpuModel& model, const std::string& driver);

// ---- re-measures (when a check job completes) -----------------------------------------
// Queues one re-measure per ask after check job `measured`, each once per (commit,
// target, GPU model). `commit_jobs` are the commit's jobs. Returns how many were queued;
// failures are logged, never returned: the completion that asked has already happened.
std::size_t queue_remeasures(Context& ctx, const db::Job& measured, const std::vector<RemeasureAsk>& asks,
                             const std::vector<db::Job>& commit_jobs);

// ---- measure requests (POST /api/v1/best/requests; best_requests.cpp) -----------------
struct MeasureRequest {  // as the user sent it
  std::string gpu_model, op, dtype, shape;
  std::string repo;  // the library to measure; empty: the one whose instances run the op
};

struct MeasureOpened {
  enum class Outcome { queued, coalesced, already_measured };
  Outcome outcome = Outcome::queued;
  db::BestKey key;                         // shape canonical
  std::string repo;                        // the library measured ("" when no instance names one)
  std::string shape_text;                  // the family's order, as queued
  std::optional<db::BestRequest> request;  // absent when already measured
  ExactAnswer answer;                      // already_measured: what answers it
};

// Validates the request (invalid_argument naming op, dtype, shape or repo; not_found for
// a GPU model no runner registered and no result names, or a repo that is neither a
// registered repository nor a library with instances of the op; unprocessable when no
// instance of the family runs the dtype; conflict when nothing the GPU's arch checks was
// built) and resolves its library: `repo` as given, else the one library whose instances
// and results name the op (several: invalid_argument naming them). Unless the shape
// already has a measured exact answer of that library on that GPU model, queues its
// check job on that library's newest build (plan_measure) or counts one more ask of the
// open request of the same key and library.
Result<MeasureOpened> request_measurement(Context& ctx, const MeasureRequest& request);

// A measure request as users see it: queued or running (its job), measured (its job
// succeeded and the exact shape has a measured answer), or failed (why in `reason`).
struct MeasureState {
  std::string state;
  std::string reason;
  ExactAnswer answer;
};
// The states of `requests`, reading each (GPU model, family, dtype) once; a request's
// state reads its own library's rows only (every library's for a request of none).
Result<std::vector<MeasureState>> measure_states(Context& ctx, const std::vector<db::BestRequest>& requests);

// Every known target with its registered check arches and newest succeeded build
// (revalidations.cpp): of library `repo` when given (a build job's library is its
// pipeline's repository, else its commit's), else of any.
Result<std::vector<TargetState>> target_states(Context& ctx, const std::optional<std::string>& repo = std::nullopt);
// Every library with a succeeded build (builds of no library first, then the registered
// repositories in their order), each with its target states and its instances best on
// `gpu_model`: what a revalidation checks again (revalidations.cpp).
Result<std::vector<LibraryBuilds>> library_builds(Context& ctx, const std::string& gpu_model);

}  // namespace kport::coordinator::app
