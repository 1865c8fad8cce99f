// One entry per route, in the order of the route files; each lists what its handler
// reads and every status it answers (the document test fails on an answer whose status
// is not listed).
#include "openapi_operations.h"

#include <string>
#include <utility>

namespace kport::coordinator::openapi {
namespace json = boost::json;
namespace {

using V = json::value;

V ref(const std::string& name) { return json::object{{"$ref", "#/components/schemas/" + name}}; }
V typed(const char* type) { return json::object{{"type", type}}; }
V str() { return typed("string"); }
V integer(std::int64_t min) { return json::object{{"type", "integer"}, {"minimum", min}}; }
V integer(std::int64_t min, std::int64_t max) {
  return json::object{{"type", "integer"}, {"minimum", min}, {"maximum", max}};
}
V enm(std::initializer_list<const char*> values) {
  json::array a;
  for (const char* v : values) a.emplace_back(v);
  return json::object{{"type", "string"}, {"enum", std::move(a)}};
}

json::object param(const char* in, const char* name, V schema, const char* description, bool required) {
  json::object p{{"name", name}, {"in", in}, {"required", required}, {"schema", std::move(schema)}};
  if (*description) p["description"] = description;
  return p;
}
json::object q(const char* name, V schema, const char* description = "") {
  return param("query", name, std::move(schema), description, false);
}
json::object q_required(const char* name, V schema, const char* description = "") {
  return param("query", name, std::move(schema), description, true);
}
std::vector<json::object> paging() {
  return {q("limit", integer(1, 1000), "page size (default 100)"),
          q("before", integer(1), "the next_cursor of the previous page")};
}

// The path parameters by name: ids are positive integers, artifact addresses SHA-256s.
json::object path_param(const std::string& name) {
  V schema = str();
  const char* description = "";
  if (name == "id") {
    schema = integer(1);
  } else if (name == "sha256") {
    schema = json::object{{"type", "string"}, {"pattern", "^[0-9a-f]{64}$"}};
    description = "SHA-256 of the blob, 64 lowercase hex digits";
  } else if (name == "sha") {
    description = "a commit sha (7..64 lowercase hex digits; the verdict also takes a ref kport recorded)";
  } else if (name == "target") {
    schema = json::object{{"type", "string"}, {"pattern", "^sm_[0-9][0-9a-z]*$"}};
    description = "a compile target such as sm_90a";
  }
  json::object p{{"name", name}, {"in", "path"}, {"required", true}, {"schema", std::move(schema)}};
  if (*description) p["description"] = description;
  return p;
}

json::object content(const char* media_type, V schema) {
  return json::object{{media_type, json::object{{"schema", std::move(schema)}}}};
}
json::object json_content(const std::string& schema) { return content("application/json", ref(schema)); }

Answer ok(int status, const std::string& schema, const char* description = "success") {
  return Answer{status, description, json_content(schema)};
}
Answer err(int status, const char* description) { return Answer{status, description, json_content("Error")}; }

json::object json_request(const std::string& schema) { return json_content(schema); }

// The answers every holder-bound write shares: only the runner holding a job's live
// lease writes into it, for its current attempt (db queue_ops check_holder).
std::vector<Answer> lease_bound(std::vector<Answer> answers) {
  answers.push_back(err(403,
                        "forbidden: another runner holds this job attempt's lease (an artifact upload: a runner "
                        "token named no job), or the admin token was used for a runner's write"));
  answers.push_back(err(404, "not_found: no such job"));
  answers.push_back(err(409,
                        "conflict: the attempt is not the job's current one, it ended (the job finished or went "
                        "back to the queue) or its lease expired; or a row names another commit, target or GPU "
                        "than its job"));
  return answers;
}

}  // namespace

Answer error_answer(int status, const char* description) { return err(status, description); }

json::object path_parameter(const std::string& name) { return path_param(name); }

std::vector<Op> operations() {
  const auto read = Auth::read;
  std::vector<Op> ops;
  auto add = [&ops](Op op) { ops.push_back(std::move(op)); };
  // ---- probes and the document (coordinator.cpp) ----
  add({"get",
       "/healthz",
       "getHealth",
       "Liveness, from memory: the process serves HTTP (never touches the database)",
       Auth::none,
       {},
       {},
       {ok(200, "Health")}});
  add({"get",
       "/readyz",
       "getReadiness",
       "Readiness: the database answers within the deadline (--ready-timeout-ms); 503 with the reason otherwise",
       Auth::none,
       {},
       {},
       {ok(200, "Ready"), err(503, "unavailable: the database did not answer within the deadline, with the reason")}});
  add({"get",
       "/metrics",
       "getMetrics",
       "Prometheus metrics: HTTP per route, connections, queue gauges the reaper refreshes",
       Auth::none,
       {},
       {},
       {Answer{200, "Prometheus text exposition format 0.0.4", content("text/plain", str())}}});
  add({"get",
       "/api/v1/openapi.json",
       "getOpenApi",
       "This document",
       Auth::none,
       {},
       {},
       {Answer{200, "the OpenAPI 3.0 document", content("application/json", typed("object"))}}});
  add({"get",
       "/api/v1/events",
       "streamEvents",
       "Server-sent events: pipelines, jobs, results, runners, verdicts. The stream opens with a hello event",
       Auth::none,
       {json::object{
           {"name", "topics"},
           {"in", "query"},
           {"required", false},
           {"style", "form"},
           {"explode", false},
           {"description", "comma-separated topics to receive (all when absent)"},
           {"schema",
            json::object{{"type", "array"}, {"items", enm({"pipelines", "jobs", "results", "runners", "verdicts"})}}}}},
       {},
       {Answer{200, "an event stream (event: NAME, data: JSON)", content("text/event-stream", str())}}});
  add({"get",
       "/api/v1/queue",
       "getQueue",
       "Queue depth by status, runners online, claims waiting, Slurm dispatch state",
       Auth::none,
       {},
       {},
       {ok(200, "Queue")}});
  // ---- routes_catalog.cpp ----
  add({"get",
       "/api/v1/targets",
       "listTargets",
       "List compile targets with their features",
       read,
       {},
       {},
       {ok(200, "TargetList")}});
  add({"get",
       "/api/v1/targets/{target}",
       "getTarget",
       "One target and the arches that check its builds",
       read,
       {},
       {},
       {ok(200, "TargetDetail"), err(404, "not_found: no such target")}});
  add({"put",
       "/api/v1/targets/{target}",
       "putTarget",
       "Add or update a target (arch, features, toolkit, check_arches)",
       Auth::admin,
       {},
       json_request("TargetInput"),
       {ok(200, "Target", "updated"), ok(201, "Target", "added")}});
  add({"get",
       "/api/v1/kernels",
       "listKernels",
       "Kernel instances (family, variant, features, config)",
       read,
       {q("family", str(), "only this op family")},
       {},
       {ok(200, "KernelInstanceList")}});
  add({"put",
       "/api/v1/kernels",
       "putKernels",
       "Publish kernel instances and variants {instances:[...], variants:[{family, variant, features}]}, and the op "
       "families the library declares {library:{library, job, families:[...]}}",
       Auth::admin_runner,
       {},
       json_request("KernelsInput"),
       {ok(200, "KernelsPublished")}});
  add({"get",
       "/api/v1/families",
       "listFamilies",
       "The op families known: kport's own library's and every library's a build reported (its kport.json)",
       read,
       {},
       {},
       {ok(200, "FamilyList")}});
  add({"get",
       "/api/v1/gpus",
       "listGpus",
       "GPU models seen, with their arch and drivers",
       read,
       {},
       {},
       {ok(200, "GpuModelList")}});
  add({"get",
       "/api/v1/gpus/agreement",
       "gpuAgreement",
       "Whether the GPUs of one model time the same cases alike: per pair of GPUs, the cases both timed at one "
       "commit, their median difference against the noise of the family's kind (compute-bound 1 %, memory-bound "
       "2 %) and their SM clocks",
       read,
       {q_required("gpu", str(), "the GPU model")},
       {},
       {ok(200, "GpuAgreement"), err(400, "invalid_argument: no gpu given")}});
  add({"get",
       "/api/v1/repositories",
       "listRepositories",
       "Watched repositories",
       read,
       {},
       {},
       {ok(200, "RepositoryList")}});
  add({"post",
       "/api/v1/repositories",
       "addRepository",
       "Add a repository {name,url}",
       Auth::admin,
       {},
       json_request("RepositoryInput"),
       {ok(201, "Repository")}});
  add({"post",
       "/api/v1/commits",
       "recordCommit",
       "Record a commit {sha,repo,parent,message,author,time_ms}",
       Auth::admin_runner,
       {},
       json_request("CommitInput"),
       {ok(201, "Commit"), err(404, "not_found: the repository is not registered")}});
  add({"get",
       "/api/v1/commits/{sha}",
       "getCommit",
       "What ran for a commit and what came of it",
       read,
       {},
       {},
       {ok(200, "CommitSummary"), err(404, "not_found: commit not known to kport")}});
  // ---- routes_verdicts.cpp, routes_hooks.cpp ----
  add({"get",
       "/api/v1/commits/{sha}/verdict",
       "getVerdict",
       "The commit against its closest validated ancestor: pass, fail, pending or insufficient_data (a series without "
       "enough A/A history, or a failure of the machine: a forge check's neutral), with reasons, and the flaky cases "
       "and infrastructure failures it did not count",
       read,
       {},
       {},
       {ok(200, "Verdict"), err(404, "not_found: no pipeline or record for the commit")}});
  add({"post",
       "/api/v1/hooks/push",
       "receivePush",
       "Push webhook of GitHub, Gitea or GitLab (or the post-receive hook), signed with the hook secret; the "
       "signature is checked before the body is read. Pull request (GitHub, Gitea) and merge request (GitLab) events "
       "validate the request's head as a push to refs/pull/N/head (refs/merge-requests/N/head) with the base as its "
       "parent; a new head cancels the queued jobs of the previous one",
       Auth::signature,
       {},
       content("application/json", typed("object")),
       {ok(200, "PushAccepted", "a redelivery: the recorded outcome, nothing new"),
        ok(201, "PushAccepted", "a pipeline was started for the pushed commit"),
        ok(202, "PushAnswer",
           "accepted without a pipeline: another event, a tag, a branch delete, or a push older than the recorded "
           "state of its ref"),
        err(404, "not_found: the repository is not registered"),
        err(409,
            "conflict: a delete or force push the repository does not confirm (the ref still exists, or points "
            "elsewhere); nothing changed"),
        err(503,
            "unavailable: the repository could not be asked to confirm a delete or force push; deliver it again "
            "later")}});
  add({"get",
       "/api/v1/revalidations",
       "listRevalidations",
       "GPU models and drivers revalidated, compared with the previous driver",
       read,
       {},
       {},
       {ok(200, "RevalidationList")}});
  add({"post",
       "/api/v1/revalidations",
       "openRevalidation",
       "Revalidate a GPU model and driver a runner reported {gpu_model,driver}; the same pair again answers 200",
       Auth::admin,
       {},
       json_request("RevalidationInput"),
       {ok(200, "RevalidationKnown", "already revalidated: nothing opened"), ok(201, "RevalidationOpened"),
        err(404, "not_found: no runner has reported that GPU model with that driver")}});
  add({"get",
       "/api/v1/series",
       "listSeries",
       "The noise of each timed series (GPU model, driver, instance, dtype, shape) learned from its A/A history "
       "(figures "
       "of the same harness binary), and the minimum detectable effect a change must reach to count",
       read,
       {q_required("gpu", str(), "GPU model, e.g. NVIDIA H200"), q("driver", str()), q("instance", str()),
        q("dtype", str(), "e.g. bf16"), q("shape", str(), "canonical, e.g. m=4096,n=4096,k=4096")},
       {},
       {ok(200, "SeriesList"), err(400, "invalid_argument: no gpu given")}});
  add({"get",
       "/api/v1/flakes",
       "listFlakes",
       "Flaky cases (GPU model, instance, dtype, shape): the same harness binary both passed and failed on them; "
       "their failures no longer fail a verdict until they pass release_after runs in a row. Each lists when it "
       "became flaky, how often it fails and the seeds that failed",
       read,
       {q("gpu", str(), "only this GPU model"),
        q("state", enm({"flaky", "released", "all"}), "flaky (default): quarantined now; released: were, then passed")},
       {},
       {ok(200, "FlakeList"), err(400, "invalid_argument: an unknown state")}});
  // ---- routes_pipelines.cpp ----
  auto pipeline_reason = enm({"push", "new_target", "new_driver", "new_gpu", "manual"});
  auto with_paging = [](std::vector<json::object> qs) {
    for (auto& p : paging()) qs.push_back(std::move(p));
    return qs;
  };
  add({"get",
       "/api/v1/pipelines",
       "listPipelines",
       "Pipelines, newest first",
       read,
       with_paging({q("commit", str()), q("repo", str()), q("reason", pipeline_reason)}),
       {},
       {ok(200, "PipelinePage")}});
  add({"post",
       "/api/v1/pipelines",
       "startPipeline",
       "Start a pipeline {commit,repo,ref,reason,targets,note,payload}: one build per target (all when none named); "
       "a pushed commit that has a pipeline answers it (200)",
       Auth::admin,
       {},
       json_request("PipelineInput"),
       {ok(200, "PipelineWithJobs", "the commit's existing pipeline, with a note"), ok(201, "PipelineWithJobs"),
        err(404, "not_found: a named target or the repository is not registered"),
        err(422,
            "unprocessable: a new_driver or new_gpu reason (POST /api/v1/revalidations opens those), or no "
            "target named and none registered")}});
  add({"get",
       "/api/v1/pipelines/{id}",
       "getPipeline",
       "A pipeline with its jobs",
       read,
       {},
       {},
       {ok(200, "PipelineWithJobs"), err(404, "not_found: no such pipeline")}});
  add({"post",
       "/api/v1/pipelines/{id}/cancel",
       "cancelPipeline",
       "Cancel every unfinished job of a pipeline",
       Auth::admin,
       {},
       {},
       {ok(200, "PipelineCancelled"), err(404, "not_found: no such pipeline")}});
  add({"post",
       "/api/v1/pipelines/{id}/rerun",
       "rerunPipeline",
       "Run every failed and cancelled job of a pipeline again",
       Auth::admin,
       {},
       {},
       {ok(200, "PipelineRerun"), err(404, "not_found: no such pipeline"),
        err(409, "conflict: no job of the pipeline failed or was cancelled")}});
  add({"post",
       "/api/v1/jobs/{id}/rerun",
       "rerunJob",
       "Run a failed or cancelled job again (queued, with a fresh allowance of attempts)",
       Auth::admin,
       {},
       {},
       {ok(200, "Job"), err(404, "not_found: no such job"),
        err(409, "conflict: the job is queued, running or succeeded")}});
  add({"get",
       "/api/v1/jobs",
       "listJobs",
       "Jobs, newest first",
       read,
       with_paging({q("status", enm({"queued", "awaiting_runner", "running", "succeeded", "failed", "cancelled"})),
                    q("kind", enm({"build", "check"})), q("commit", str()), q("target", str())}),
       {},
       {ok(200, "JobPage")}});
  add({"get",
       "/api/v1/jobs/{id}",
       "getJob",
       "One job",
       read,
       {},
       {},
       {ok(200, "Job"), err(404, "not_found: no such job")}});
  add({"post",
       "/api/v1/jobs/{id}/cancel",
       "cancelJob",
       "Cancel a job",
       Auth::admin,
       {},
       {},
       {ok(200, "JobCancelled"), err(404, "not_found: no such job")}});
  {
    json::object log_content = json_content("JobLog");
    log_content["text/plain"] = json::object{{"schema", str()}};
    add({"get",
         "/api/v1/jobs/{id}/log",
         "getJobLog",
         "A job's log: its chunks as JSON, or the text (format=text)",
         read,
         {q("after", integer(0), "only chunks after this seq"),
          q("format", enm({"json", "text"}), "text: the log as text/plain")},
         {},
         {Answer{200, "the log", std::move(log_content)}}});
  }
  // ---- routes_runners.cpp ----
  add({"post",
       "/api/v1/jobs/{id}/log",
       "appendJobLog",
       "Append to a job's log {attempt,text}",
       Auth::runner,
       {},
       json_request("JobLogInput"),
       lease_bound({ok(200, "JobLogAppended")})});
  add({"post",
       "/api/v1/jobs/{id}/complete",
       "completeJob",
       "End an attempt {attempt,status:succeeded|failed,reason,retryable}",
       Auth::runner,
       {},
       json_request("JobCompleteInput"),
       lease_bound({ok(200, "JobCompleted")})});
  add({"post",
       "/api/v1/jobs/{id}/results",
       "uploadResults",
       "Upload results of an attempt {attempt,results:[...]}, idempotent",
       Auth::runner,
       {},
       json_request("ResultsInput"),
       lease_bound({ok(200, "Stored")})});
  add({"post",
       "/api/v1/jobs/{id}/builds",
       "uploadBuildRecords",
       "Upload build records of an attempt {attempt,records:[...]}, idempotent",
       Auth::runner,
       {},
       json_request("BuildRecordsInput"),
       lease_bound({ok(200, "Stored")})});
  add({"get",
       "/api/v1/runners",
       "listRunners",
       "Runners (online state, capabilities, current job)",
       read,
       {q("all", typed("boolean"), "true (or 1): deregistered runners too")},
       {},
       {ok(200, "RunnerList")}});
  add({"get",
       "/api/v1/runners/{id}",
       "getRunner",
       "One runner",
       read,
       {},
       {},
       {ok(200, "Runner"), err(404, "not_found: no such runner")}});
  {
    Answer limited = err(429, "too_many_requests: registrations are rate limited; retry after Retry-After seconds");
    Answer registered = ok(201, "Registered");
    add({"post",
         "/api/v1/runners/register",
         "registerRunner",
         "Register {name,role,capabilities}; answers the runner token once",
         Auth::registration,
         {},
         json_request("RegisterInput"),
         {registered, err(403, "forbidden: the registration token is not the current one (rotated) or it expired"),
          limited}});
  }
  add({"post",
       "/api/v1/runners/heartbeat",
       "heartbeat",
       "Heartbeat {job,attempt}; extends the lease, tells of cancellation",
       Auth::runner,
       {},
       json_request("HeartbeatInput"),
       lease_bound({ok(200, "Heartbeat"),
                    err(410,
                        "gone: the job is no longer running (it finished, was cancelled or went back to the "
                        "queue), so stop working on it; or the runner was deregistered meanwhile")}),
       true});
  add({"post",
       "/api/v1/runners/claim",
       "claimJob",
       "Long-poll for a job matching the runner; answers {job:null} when none came within the wait",
       Auth::runner,
       {q("wait", integer(0), "seconds to wait for a job (capped by --max-claim-wait)")},
       {},
       {ok(200, "Claim"), err(410, "gone: the runner was deregistered meanwhile; register again")}});
  add({"post",
       "/api/v1/runners/deregister",
       "deregisterRunner",
       "Leave; a held job returns to the queue",
       Auth::runner,
       {},
       {},
       {ok(200, "Deregistered")}});
  // ---- routes_admin.cpp ----
  add({"post",
       "/api/v1/admin/registration-token",
       "rotateRegistrationToken",
       "Rotate the registration token {expires_in_s}: a new token (optionally expiring); the old one stops working "
       "at once",
       Auth::admin,
       {},
       json_request("RegistrationTokenInput"),
       {ok(201, "RegistrationToken")},
       true});
  add({"delete",
       "/api/v1/runners/{id}/token",
       "revokeRunnerToken",
       "Revoke a runner's token: the runner is deregistered and its held job returns to the queue",
       Auth::admin,
       {},
       {},
       {ok(200, "TokenRevoked"), err(404, "not_found: no such runner")}});
  // ---- routes_results.cpp ----
  add({"get",
       "/api/v1/results",
       "listResults",
       "Results, filtered, newest first",
       read,
       with_paging({q("commit", str()), q("target", str()), q("gpu", str(), "GPU model"),
                    q("op", str(), "op family (the same filter as family)"), q("family", str()), q("variant", str()),
                    q("instance", str()), q("dtype", str()), q("shape", str(), "e.g. m=4096,n=4096,k=4096"),
                    q("status", enm({"passed", "failed", "crashed", "timeout", "unsupported"})),
                    q("since_ms", integer(0), "created at or after, Unix ms")}),
       {},
       {ok(200, "ResultPage")}});
  add({"get",
       "/api/v1/results/{id}",
       "getResult",
       "One result with provenance, numerics, timing and the commands that reproduce it (reproduce)",
       read,
       {},
       {},
       {ok(200, "ResultDetail"), err(404, "not_found: no such result")}});
  add({"get",
       "/api/v1/builds",
       "listBuildRecords",
       "Build records, filtered",
       read,
       with_paging({q("commit", str()), q("target", str()), q("family", str()), q("variant", str()),
                    q("job", integer(1)), q("status", enm({"ok", "not_applicable", "compile_error", "timeout"}))}),
       {},
       {ok(200, "BuildRecordPage")}});
  add({"get",
       "/api/v1/builds/{id}",
       "getBuildRecord",
       "One build record: status, diagnostics, resources, PTX/SASS audits and the kernel source line",
       read,
       {},
       {},
       {ok(200, "BuildRecord"), err(404, "not_found: no such build record")}});
  add({"get",
       "/api/v1/targets/{target}/bringup",
       "getBringup",
       "Bring-up stage of every variant of one library on a target, at its latest commit with a build (or "
       "?commit=); the library asked for with ?repo=, else the commit's, else the one built last",
       read,
       {q("commit", str(), "a commit sha or ref kport recorded"),
        q("repo", str(), "the library's repository, one of GET /api/v1/repositories")},
       {},
       {ok(200, "Bringup"), err(404, "not_found: no such target or repository, or nothing recorded for the commit")}});
  add({"get",
       "/api/v1/best",
       "getBest",
       "The best kernel for a GPU, op, dtype and shape, from the current (newest commit's) results on that GPU model, "
       "with evidence; provisional (ranked by ratio to the vendor baseline on the nearest measured arch) or unranked "
       "(candidates, no best) where that GPU model has no comparable measurement",
       read,
       {q_required("gpu", str(), "GPU model, e.g. NVIDIA H200"),
        q_required("op", str(), "an op family, one of GET /api/v1/families"), q_required("dtype", str(), "e.g. bf16"),
        q_required("shape", str(), "e.g. m=4096,n=4096,k=4096"),
        q("arch", str(), "for a GPU kport has not seen: its arch, e.g. 10.0"),
        q("target", str(), "for a GPU kport has not seen: the target its builds use, e.g. sm_100a"),
        q("repo", str(),
          "the library (repository) to answer from; needed where instances of several libraries run the op")},
       {},
       {ok(200, "BestAnswer"),
        err(400,
            "invalid_argument: a parameter missing or malformed, an unknown op, or a shape its family cannot take (a "
            "key it lacks, a value out of range, a dimension with no default left out)"),
        err(404, "not_found: unknown GPU without arch/target, unregistered target, no instance of the family known"),
        err(422,
            "unprocessable: no instance of the family (or none for the target) runs the dtype, or the family's "
            "requirements rule the shape out (a value that must be a multiple of another)")}});
  // ---- routes_best_requests.cpp ----
  add({"post",
       "/api/v1/best/requests",
       "requestMeasurement",
       "Ask kport to measure a shape {gpu,op,dtype,shape} of one library ({repo}, needed where several libraries run "
       "the op): one check job pinned to the GPU model, on that library's latest successful build of a target its "
       "arch checks, timing every instance of the family on that case only",
       Auth::admin,
       {},
       json_request("MeasureRequestInput"),
       {ok(200, "MeasureRequestAnswer",
           "an open request of the same GPU, op, dtype, canonical shape and library (coalesced, nothing queued), or "
           "the shape is already measured exactly by that library's instances (already_measured, job null)"),
        ok(201, "MeasureRequestOpened", "queued"),
        err(400,
            "invalid_argument: a malformed field, or no repo where instances of several libraries run the op "
            "(the message names them)"),
        err(404, "not_found: GPU model never seen, or repo neither registered nor a library with instances of the op"),
        err(409, "conflict: nothing the GPU's arch checks was built (of that library)"),
        err(422, "unprocessable: no instance of the family runs the dtype")}});
  add({"get",
       "/api/v1/best/requests",
       "listMeasureRequests",
       "Measure requests, newest first, and the questions most often answered without a measurement",
       read,
       with_paging(
           {q("gpu", str(), "only this GPU model"),
            q("repo", str(), "only this library's requests and unmeasured asks, one of GET /api/v1/repositories")}),
       {},
       {ok(200, "MeasureRequestPage"), err(400, "invalid_argument: a malformed limit, cursor, gpu or repo"),
        err(404, "not_found: repo is not a registered repository (the message names it)")}});
  add({"get",
       "/api/v1/best/requests/{id}",
       "getMeasureRequest",
       "One measure request with its state, job and answer URL",
       read,
       {},
       {},
       {ok(200, "MeasureRequest"), err(404, "not_found: no such measure request")}});
  // ---- routes_forge.cpp ----
  add({"put",
       "/api/v1/repositories/{name}/forge",
       "putForgeConnection",
       "Report the repository's push pipelines to its forge {kind,api_url,project,token_file,mode}, on GitHub "
       "optionally as a GitHub App {app_id,installation_id,private_key_file} instead of token_file: a GitHub check run "
       "or commit status, a Gitea or GitLab commit status; putting it again repairs a broken connection",
       Auth::admin,
       {},
       json_request("ForgeConnectionInput"),
       {ok(200, "ForgeConnection"), err(404, "not_found: the repository is not registered"),
        err(422,
            "unprocessable: the coordinator cannot read the token file, or the private key file is missing, "
            "readable by other users or not an RSA private key")}});
  add({"get",
       "/api/v1/forges",
       "listForgeConnections",
       "Forge connections, with the reason of a broken one",
       read,
       {},
       {},
       {ok(200, "ForgeConnectionList")}});
  add({"get",
       "/api/v1/deliveries",
       "listDeliveries",
       "Outgoing calls (forge check runs and statuses, notification webhooks), newest first, with their attempts and "
       "why the last one did not deliver",
       read,
       with_paging({q("state", enm({"pending", "delivered", "failed"})),
                    q("kind", enm({"check_run", "commit_status", "webhook"})), q("repo", str()),
                    q("pipeline", integer(1))}),
       {},
       {ok(200, "DeliveryPage")}});
  // ---- routes_dispatch.cpp ----
  add({"get",
       "/api/v1/dispatch/snapshot",
       "getDispatchSnapshot",
       "Every current figure on one GPU model (the rows /api/v1/best ranks), per op and dtype, with the commits and "
       "drivers they come from: the versioned, checksummed document kport-dispatch loads to answer offline by the "
       "same rule",
       read,
       {q_required("gpu", str(), "GPU model, e.g. NVIDIA H200"),
        q("repo", str(), "the library (repository) whose instances to hand out; needed where several run an op")},
       {},
       {ok(200, "DispatchSnapshot"), err(404, "not_found: a GPU model kport has never seen, an unknown repository")}});
  // ---- routes_artifacts.cpp ----
  add({"put",
       "/api/v1/artifacts/{sha256}",
       "uploadArtifact",
       "Upload a blob at the address of its SHA-256 (verified). A runner uploads into the job it holds (job, "
       "attempt: its live lease); the admin token uploads without them",
       Auth::admin_runner,
       {q("name", str(), "file name (default: the sha256)"), q("kind", str(), "e.g. harness (default blob)"),
        q("job", integer(1), "a runner's held job"), q("attempt", integer(1, 1000), "that job's current attempt")},
       content("application/octet-stream", json::object{{"type", "string"}, {"format", "binary"}}),
       lease_bound({ok(201, "Artifact"), err(422, "unprocessable: the bytes do not hash to the address")})});
  {
    json::object blob = content("application/octet-stream", json::object{{"type", "string"}, {"format", "binary"}});
    blob["application/json"] = json::object{{"schema", ref("Artifact")}};
    Answer download{200, "the blob (X-Kport-Sha256 names it), or with meta=1 its record as JSON", std::move(blob)};
    add({"get",
         "/api/v1/artifacts/{sha256}",
         "downloadArtifact",
         "Download a blob (meta=1: its record)",
         read,
         {q("meta", json::object{{"type", "integer"}, {"enum", json::array{0, 1}}}, "1: the record, not the bytes")},
         {},
         {std::move(download), err(404, "not_found: not stored")}});
  }
  // ---- routes_dashboard.cpp ----
  add({"get",
       "/api/v1/dashboard/overview",
       "getDashboardOverview",
       "Dashboard: every target's progress per family, runners, recent pipelines and results",
       read,
       {},
       {},
       {ok(200, "DashboardOverview")}});
  add({"get",
       "/api/v1/dashboard/targets/{target}",
       "getDashboardTarget",
       "Dashboard: one library's variants x stages with figures, evidence, commands, burndown",
       read,
       {q("repo", str(), "the library's repository; default: the one built last for the target")},
       {},
       {ok(200, "DashboardTarget"), err(404, "not_found: no such target or repository")}});
  add({"get",
       "/api/v1/dashboard/commits/{sha}",
       "getDashboardCommit",
       "Dashboard: the commit's verdict and, per target and GPU, what changed against its baseline",
       read,
       {},
       {},
       {ok(200, "DashboardCommit"), err(404, "not_found: commit not known and without results")}});
  add({"get",
       "/api/v1/dashboard/kernels/{instance}",
       "getDashboardKernel",
       "Dashboard: one library's instance, one configuration over commits per GPU model",
       read,
       {q("dtype", str(), "default: the first measured"), q("shape", str(), "default: the first measured"),
        q("repo", str(),
          "the library (repository) whose instance of the name to show; default: the first by name that publishes it")},
       {},
       {ok(200, "DashboardKernel"),
        err(404, "not_found: no such kernel instance (in that library), or repo is not a registered repository")}});
  add({"get",
       "/api/v1/dashboard/pipelines/{id}",
       "getDashboardPipeline",
       "Dashboard: a pipeline's jobs with state, attempts, runner, timings and why each waits; the commit's verdict",
       read,
       {},
       {},
       {ok(200, "DashboardPipeline"), err(404, "not_found: no such pipeline")}});
  add({"get",
       "/api/v1/dashboard/jobs/{id}",
       "getDashboardJob",
       "Dashboard: one job as its page shows it, with its pipeline",
       read,
       {},
       {},
       {ok(200, "DashboardJob"), err(404, "not_found: no such job")}});
  add({"get",
       "/api/v1/dashboard/runners",
       "getDashboardRunners",
       "Dashboard: runners with their current job",
       read,
       {q("all", json::object{{"type", "integer"}, {"enum", json::array{0, 1}}}, "1: deregistered runners too")},
       {},
       {ok(200, "DashboardRunnerList")}});
  // ---- routes_bisections.cpp ----
  add({"get",
       "/api/v1/bisections",
       "listBisections",
       "Bisections, newest first: searches for the first bad commit of a confirmed slowdown, a new numerics failure "
       "or a new build failure, started by a verdict or by hand",
       read,
       {q("commit", str(), "a good, bad, first bad or probed commit (sha, short sha or branch)"),
        q("state", enm({"running", "done", "failed", "cancelled"})),
        q("limit", integer(1, 1000), "page size (default 100)"),
        q("before", integer(1), "the next_cursor of the previous page")},
       {},
       {ok(200, "BisectionPage"), err(400, "invalid_argument: an unknown state, a malformed commit")}});
  add({"get",
       "/api/v1/bisections/{id}",
       "getBisection",
       "One bisection: its commits, cases, probes, and once done the first bad commit, the effect +- its uncertainty "
       "and the cause class",
       read,
       {},
       {},
       {ok(200, "Bisection"), err(404, "not_found: no such bisection")}});
  add({"post",
       "/api/v1/bisections",
       "startBisection",
       "Start a bisection by hand {kind,target,gpu_model,bad,good,cases}: probes (builds of the affected variants, "
       "checks of the affected cases on that GPU model) search the commits from good (default: the bad commit's "
       "validated ancestor) to bad",
       Auth::admin,
       {},
       json_request("BisectionInput"),
       {ok(200, "BisectionOpened", "the same reason is bisected already (opened false)"),
        ok(201, "BisectionOpened", "started"),
        err(400, "invalid_argument: a missing or malformed field, a case the commits do not have"),
        err(404, "not_found: a commit kport never saw, or good is not a first-parent ancestor of bad"),
        err(409, "conflict: the reason is bisected already and its bisection cannot be read"),
        err(422, "unprocessable: nothing to search (no counted reason, no validated ancestor, no repository)"),
        err(503, "unavailable: the repository cannot be read now")}});
  add({"post",
       "/api/v1/bisections/{id}/cancel",
       "cancelBisection",
       "Cancel a running bisection {reason?}: it ends cancelled (its summary says so, with the reason), its open "
       "probe's jobs are cancelled, and its end is reported to the bad commit's forge report and the "
       "bisection.finished webhooks",
       Auth::admin,
       {},
       json_request("BisectionCancel"),
       {ok(200, "Bisection", "cancelled"),
        err(400, "invalid_argument: a body that is not a JSON object, a reason that is not a string"),
        err(404, "not_found: no such bisection"), err(409, "conflict: the bisection has already ended")},
       true});
  return ops;
}

}  // namespace kport::coordinator::openapi
