// The OpenAPI 3.0 description of /api/v1, built once from a compact route table so the
// document and the routes are reviewed side by side.
#include <boost/json.hpp>

#include <utility>

#include "context.h"

namespace kport::coordinator {
namespace json = boost::json;
namespace {

struct Op {
  const char* method;
  const char* path;
  const char* summary;
  const char* auth;   // "read", "admin", "runner", "registration", "admin|runner", "signature", "none"
  const char* query;  // comma-separated query parameters
  int ok_status;
};

constexpr Op k_ops[] = {
    {"get", "/healthz", "Liveness, from memory: the process serves HTTP (never touches the database)", "none", "", 200},
    {"get", "/readyz", "Readiness: the database answers within the deadline (--ready-timeout-ms); 503 with the reason otherwise",
     "none", "", 200},
    {"get", "/metrics", "Prometheus metrics: HTTP per route, connections, queue gauges the reaper refreshes", "none", "", 200},
    {"get", "/api/v1/openapi.json", "This document", "none", "", 200},
    {"get", "/api/v1/targets", "List compile targets with their features", "read", "", 200},
    {"get", "/api/v1/targets/{target}", "One target and the arches that check its builds", "read", "", 200},
    {"put", "/api/v1/targets/{target}", "Add or update a target (arch, features, toolkit, check_arches)", "admin", "", 200},
    {"get", "/api/v1/targets/{target}/bringup", "Bring-up stage of every variant on a target, at its latest commit with a build (or ?commit=)", "read", "commit", 200},
    {"get", "/api/v1/kernels", "Kernel instances (family, variant, features, config)", "read", "family", 200},
    {"put", "/api/v1/kernels", "Publish kernel instances and variants {instances:[...], variants:[{family, variant, features}]}", "admin|runner", "", 200},
    {"get", "/api/v1/gpus", "GPU models seen, with their arch and drivers", "read", "", 200},
    {"get", "/api/v1/repositories", "Watched repositories", "read", "", 200},
    {"post", "/api/v1/repositories", "Add a repository {name,url}", "admin", "", 201},
    {"post", "/api/v1/commits", "Record a commit {sha,repo,parent,message,author,time_ms}", "admin|runner", "", 201},
    {"get", "/api/v1/commits/{sha}", "What ran for a commit and what came of it", "read", "", 200},
    {"get", "/api/v1/commits/{sha}/verdict", "The commit against its closest validated ancestor: pass, fail or pending, with reasons",
     "read", "", 200},
    {"post", "/api/v1/hooks/push", "Push webhook of GitHub, Gitea or GitLab (or the post-receive hook), signed with the hook secret",
     "signature", "", 201},
    {"get", "/api/v1/revalidations", "GPU models and drivers revalidated, compared with the previous driver", "read", "", 200},
    {"post", "/api/v1/revalidations", "Revalidate a GPU model and driver a runner reported {gpu_model,driver}", "admin", "", 201},
    {"get", "/api/v1/pipelines", "Pipelines, newest first", "read", "commit,repo,reason,limit,before", 200},
    {"post", "/api/v1/pipelines",
     "Start a pipeline {commit,repo,ref,reason:push|new_target|manual,targets,note,payload}: one build per target"
     " (all when none named); a pushed commit that has a pipeline answers it (200)",
     "admin", "", 201},
    {"get", "/api/v1/pipelines/{id}", "A pipeline with its jobs", "read", "", 200},
    {"post", "/api/v1/pipelines/{id}/cancel", "Cancel every unfinished job of a pipeline", "admin", "", 200},
    {"get", "/api/v1/jobs", "Jobs, newest first", "read", "status,kind,commit,target,limit,before", 200},
    {"get", "/api/v1/jobs/{id}", "One job", "read", "", 200},
    {"post", "/api/v1/jobs/{id}/cancel", "Cancel a job", "admin", "", 200},
    {"get", "/api/v1/jobs/{id}/log", "A job's log", "read", "after,format", 200},
    {"post", "/api/v1/jobs/{id}/log", "Append to a job's log {attempt,text}", "runner", "", 200},
    {"post", "/api/v1/jobs/{id}/complete", "End an attempt {attempt,status:succeeded|failed,reason,retry}", "runner", "", 200},
    {"post", "/api/v1/jobs/{id}/results", "Upload results of an attempt {attempt,results:[...]}, idempotent", "runner", "", 200},
    {"post", "/api/v1/jobs/{id}/builds", "Upload build records of an attempt {attempt,records:[...]}, idempotent", "runner", "", 200},
    {"get", "/api/v1/runners", "Runners (online state, capabilities, current job)", "read", "all", 200},
    {"get", "/api/v1/runners/{id}", "One runner", "read", "", 200},
    {"post", "/api/v1/runners/register", "Register {name,role,capabilities}; answers the runner token once", "registration", "", 201},
    {"post", "/api/v1/runners/heartbeat", "Heartbeat {job,attempt}; extends the lease, tells of cancellation", "runner", "", 200},
    {"post", "/api/v1/runners/claim", "Long-poll for a job matching the runner; answers {job:null} when none", "runner", "wait", 200},
    {"post", "/api/v1/admin/registration-token",
     "Rotate the registration token {expires_in_s}: a new token (optionally expiring); the old one stops working at once. "
     "Registrations are rate limited (429 with Retry-After)", "admin", "", 201},
    {"delete", "/api/v1/runners/{id}/token", "Revoke a runner's token: the runner is deregistered and its held job returns to the queue",
     "admin", "", 200},
    {"post", "/api/v1/runners/deregister", "Leave; a held job returns to the queue", "runner", "", 200},
    {"get", "/api/v1/results", "Results, filtered, newest first", "read",
     "commit,target,gpu,op,variant,instance,dtype,shape,status,since_ms,limit,before", 200},
    {"get", "/api/v1/results/{id}", "One result with provenance, numerics, timing and the commands that reproduce it (reproduce)", "read", "", 200},
    {"get", "/api/v1/builds", "Build records, filtered", "read", "commit,target,family,variant,job,status,limit,before", 200},
    {"get", "/api/v1/best",
     "The best kernel for a GPU, op, dtype and shape, from the current (newest commit's) results on that GPU model, "
     "with evidence; provisional (ranked by ratio to the vendor baseline on the nearest measured arch) or unranked "
     "(candidates, no best) where that GPU model has no comparable measurement. 404: unknown GPU without arch/target, "
     "unregistered target, no instance of the family known; 422: no instance of the family (or none for the target) "
     "runs the dtype",
     "read", "gpu,op,dtype,shape,arch,target", 200},
    {"post", "/api/v1/best/requests",
     "Ask kport to measure a shape {gpu,op,dtype,shape}: one check job pinned to the GPU model, on the latest successful "
     "build of a target its arch checks, timing every instance of the family on that case only (201, outcome queued). "
     "An open request of the same GPU, op, dtype and canonical shape queues nothing and answers it (200, coalesced); "
     "a shape already measured exactly answers 200 (already_measured, job null). 400: op, dtype or shape malformed "
     "(the message names the field); 404: GPU model never seen; 422: no instance of the family runs the dtype; "
     "409: nothing the GPU's arch checks was built", "admin", "", 201},
    {"get", "/api/v1/best/requests",
     "Measure requests, newest first: state queued|running|measured|failed, job, requests (times requested while open), "
     "asked (times /api/v1/best answered it unmeasured); unmeasured_asks: the questions most often answered without a "
     "measurement", "read", "gpu,limit,before", 200},
    {"get", "/api/v1/best/requests/{id}", "One measure request with its state, job and answer URL", "read", "", 200},
    {"get", "/api/v1/dispatch/snapshot",
     "Every current figure on one GPU model (the rows /api/v1/best ranks), per op and dtype, with the commits and drivers "
     "they come from: the versioned, checksummed document kport-dispatch loads to answer offline by the same rule. "
     "400: no gpu; 404: a GPU model kport has never seen",
     "read", "gpu", 200},
    {"put", "/api/v1/artifacts/{sha256}",
     "Upload a blob at the address of its SHA-256 (verified). A runner uploads into the job it holds (job, attempt: its "
     "live lease); the admin token uploads without them", "admin|runner", "name,kind,job,attempt", 201},
    {"get", "/api/v1/artifacts/{sha256}", "Download a blob (meta=1: its record)", "read", "meta", 200},
    {"get", "/api/v1/queue", "Queue depth by status and runners online", "read", "", 200},
    {"get", "/api/v1/dashboard/overview", "Dashboard: every target's progress per family, runners, recent pipelines", "read", "", 200},
    {"get", "/api/v1/dashboard/targets/{target}", "Dashboard: variants x stages with figures, evidence, commands, burndown", "read", "", 200},
    {"get", "/api/v1/dashboard/commits/{sha}", "Dashboard: the commit's verdict and, per target and GPU, what changed against its baseline", "read", "", 200},
    {"get", "/api/v1/dashboard/kernels/{instance}", "Dashboard: one configuration over commits per GPU model", "read", "dtype,shape", 200},
    {"get", "/api/v1/dashboard/runners", "Dashboard: runners with their current job", "read", "all", 200},
    {"get", "/api/v1/events", "Server-sent events: pipelines, jobs, results, runners", "read", "topics", 200},
};

json::object build() {
  json::object paths;
  for (const auto& op : k_ops) {
    json::array params;
    std::string path = op.path;
    for (std::size_t p = path.find('{'); p != std::string::npos; p = path.find('{', p + 1)) {
      auto name = path.substr(p + 1, path.find('}', p) - p - 1);
      params.push_back(json::object{{"name", name}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}});
    }
    std::string q = op.query;
    for (std::size_t start = 0; !q.empty() && start <= q.size();) {
      auto comma = q.find(',', start);
      auto name = q.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      params.push_back(json::object{{"name", name}, {"in", "query"}, {"required", false}, {"schema", {{"type", "string"}}}});
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    json::object responses{
        {std::to_string(op.ok_status), {{"description", "success"}, {"content", {{"application/json", {{"schema", {{"type", "object"}}}}}}}}},
        {"default", {{"description", "error"}, {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}}}};
    json::object operation{{"summary", op.summary}, {"parameters", std::move(params)}, {"responses", std::move(responses)},
                           {"x-kport-auth", op.auth}};
    std::string auth = op.auth;
    if (auth != "read" && auth != "signature" && auth != "none")
      operation["security"] = json::array{json::object{{"bearer", json::array{}}}};
    // Several methods share a path: add to its item instead of replacing it.
    auto& item = paths[op.path];
    if (!item.is_object()) item.emplace_object();
    item.as_object()[op.method] = std::move(operation);
  }
  // The answers of the lease-bound writes: only the runner holding a job's live lease
  // writes into it, for its current attempt (db queue_ops check_holder).
  auto error_answer = [](const char* description) {
    return json::object{{"description", description},
                        {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}};
  };
  constexpr std::pair<const char*, const char*> k_lease_bound[] = {
      {"post", "/api/v1/runners/heartbeat"}, {"post", "/api/v1/jobs/{id}/log"},     {"post", "/api/v1/jobs/{id}/complete"},
      {"post", "/api/v1/jobs/{id}/results"}, {"post", "/api/v1/jobs/{id}/builds"}, {"put", "/api/v1/artifacts/{sha256}"}};
  for (const auto& [method, path] : k_lease_bound) {
    auto& responses = paths[path].as_object()[method].as_object()["responses"].as_object();
    responses["403"] = error_answer(
        "forbidden: another runner holds this job attempt's lease (an artifact upload: a runner token named no job), "
        "or the admin token was used for a runner's write");
    responses["404"] = error_answer("not_found: no such job");
    responses["409"] = error_answer(
        "conflict: the attempt is not the job's current one, it ended (the job finished or went back to the queue) or "
        "its lease expired; or a row names another commit, target or GPU than its job");
  }
  // /readyz answers 503 while the database does not answer in time.
  paths["/readyz"].as_object()["get"].as_object()["responses"].as_object()["503"] =
      error_answer("unavailable: the database did not answer within the deadline, with the reason");
  // A delete or force push is acted on only once the repository confirms it.
  auto& push = paths["/api/v1/hooks/push"].as_object()["post"].as_object()["responses"].as_object();
  push["202"] = json::object{{"description", "accepted without a pipeline: another event, a tag, a branch delete, or a push "
                                             "older than the recorded state of its ref"},
                             {"content", {{"application/json", {{"schema", {{"type", "object"}}}}}}}};
  push["409"] = error_answer("conflict: a delete or force push the repository does not confirm (the ref still exists, or "
                             "points elsewhere); nothing changed");
  push["503"] = error_answer("unavailable: the repository could not be asked to confirm a delete or force push; deliver "
                             "it again later");

  // The best-kernel answer is what users act on, so its shape is spelled out.
  auto& best_ok = paths["/api/v1/best"].as_object()["get"].as_object()["responses"].as_object()["200"];
  best_ok.as_object()["content"] = {{"application/json", {{"schema", {{"$ref", "#/components/schemas/BestAnswer"}}}}}};
  json::object evidence{
      {"type", "object"},
      {"description", "One result behind a ranked or excluded instance"},
      {"properties", {{"result", {{"type", "integer"}}}, {"gpu_model", {{"type", "string"}}}, {"arch", {{"type", "string"}}},
                      {"target", {{"type", "string"}}}, {"commit", {{"type", "string"}}}, {"driver", {{"type", "string"}}},
                      {"shape", {{"type", "string"}}},
                      {"status", {{"type", "string"}, {"enum", {"passed", "failed", "crashed", "timeout", "unsupported"}}}},
                      {"median_us", {{"type", "number"}, {"nullable", true}}}, {"stddev_us", {{"type", "number"}}},
                      {"samples", {{"type", "integer"}}},
                      {"ratio", {{"type", "number"}, {"nullable", true}, {"description", "vendor baseline median / median (> 1: faster)"}}},
                      {"unstable", {{"type", "boolean"}, {"description", "bench rounds disagreed beyond noise; never wins a tie"}}},
                      {"runs", {{"type", "integer"}, {"description", "results of its commit behind it (> 1: re-measured)"}}},
                      {"measured", {{"type", "string"}, {"format", "date-time"}}}, {"url", {{"type", "string"}}}}}};
  json::object best_answer{
      {"type", "object"},
      {"required", {"kind", "best", "reason", "ranking", "evidence"}},
      {"properties",
       {{"kind", {{"type", "string"}, {"enum", {"measured", "provisional", "unranked"}},
                  {"description", "measured: timed on this GPU model; provisional: ranked by ratio to the vendor baseline on "
                                  "the nearest measured arch; unranked: candidates only, no best"}}},
        {"provisional", {{"type", "boolean"}}},
        {"best", {{"type", "string"}, {"nullable", true}, {"description", "null when unranked"}}},
        {"tied", {{"type", "array"}, {"items", {{"type", "string"}}}}},
        {"reason", {{"type", "string"}}},
        {"notes", {{"type", "array"}, {"items", {{"type", "string"}}},
                   {"description", "unstable figures demoted, other drivers present, figures from several commits"}}},
        {"ranked_by", {{"type", "string"}, {"enum", {"median_us", "ratio_to_baseline", ""}}}},
        {"candidates_from", {{"type", "string"}, {"description", "provisional/unranked: where the candidates came from"}}},
        {"matched_shape", {{"type", "string"}, {"nullable", true}}},
        {"exact_shape", {{"type", "boolean"}}},
        {"confidence", {{"type", "object"}, {"nullable", true},
                        {"description", "measured answers: the basis (this shape, or the nearest measured one), the "
                                        "distance to it, and for a nearest-shape answer how such answers fared on this GPU "
                                        "model: each measured shape answered from its nearest other one, regret of that "
                                        "answer against the shape's fastest (fractions)"},
                        {"properties", {{"basis", {{"type", "string"}}}, {"shape_distance", {{"type", "number"}}},
                                        {"nearest_shape_regret", {{"type", "object"},
                                                                  {"properties", {{"shapes", {{"type", "integer"}}},
                                                                                  {"median", {{"type", "number"}}},
                                                                                  {"p90", {{"type", "number"}}},
                                                                                  {"max", {{"type", "number"}}}}}}}}}}},
        {"evidence_gpu_model", {{"type", "string"}}},
        {"evidence_arch", {{"type", "string"}}},
        {"evidence", {{"type", "object"}, {"nullable", true},
                      {"properties", {{"gpu_model", {{"type", "string"}}}, {"arch", {{"type", "string"}}},
                                      {"commit", {{"type", "string"}, {"description", "the best's commit"}}},
                                      {"commits", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                                      {"driver", {{"type", "string"}}},
                                      {"drivers", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                                      {"other_drivers", {{"type", "array"}, {"items", {{"type", "string"}}},
                                                         {"description", "drivers of other results on that GPU model, not used"}}},
                                      {"results", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
                                      {"samples", {{"type", "integer"}}},
                                      {"measured", {{"type", "string"}, {"format", "date-time"}}},
                                      {"oldest", {{"type", "string"}, {"format", "date-time"}}}}}}},
        {"ranking", {{"type", "array"},
                     {"items", {{"type", "object"},
                                {"properties", {{"instance", {{"type", "string"}}}, {"variant", {{"type", "string"}}},
                                                {"ranked", {{"type", "boolean"}}}, {"tie_with_best", {{"type", "boolean"}}},
                                                {"slowdown", {{"type", "number"}}},
                                                {"evidence", {{"allOf", {json::object{{"$ref", "#/components/schemas/BestEvidence"}}}},
                                                              {"nullable", true}}}}}}}}},
        {"excluded", {{"type", "array"},
                      {"description", "instances whose newest result on that GPU model failed, crashed, timed out, was unsupported or untimed"},
                      {"items", {{"type", "object"},
                                 {"properties", {{"instance", {{"type", "string"}}}, {"variant", {{"type", "string"}}},
                                                 {"reason", {{"type", "string"}}},
                                                 {"evidence", {{"$ref", "#/components/schemas/BestEvidence"}}}}}}}}},
        {"query", {{"type", "object"}}},
        {"measure", {{"type", "object"},
                     {"description", "present when the answer is not a measurement at the exact shape asked (on a GPU model "
                                     "kport knows): how to have it measured"},
                     {"properties", {{"requests", {{"type", "string"}, {"description", "POST /api/v1/best/requests"}}},
                                     {"body", {{"type", "object"}, {"description", "the body to post: gpu, op, dtype, shape"}}},
                                     {"list", {{"type", "string"}}}}}}}}}};
  // The snapshot is a contract with code outside kport (kport-dispatch in a framework).
  auto& snap_get = paths["/api/v1/dispatch/snapshot"].as_object()["get"].as_object();
  snap_get["responses"].as_object()["200"].as_object()["content"] =
      {{"application/json", {{"schema", {{"$ref", "#/components/schemas/DispatchSnapshot"}}}}}};
  snap_get["responses"].as_object()["404"] = {
      {"description", "GPU model never seen by kport"},
      {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}};
  auto strings = [] { return json::object{{"type", "array"}, {"items", {{"type", "string"}}}}; };
  json::object figure{
      {"type", "object"},
      {"description", "An instance's current figure at a shape: the latest result of the newest commit measured there"},
      {"required", {"shape", "instance", "variant", "target", "status", "median_us", "stddev_us", "samples", "ratio",
                    "unstable", "result_id", "commit", "commit_ms", "driver", "runs", "measured_at_ms"}},
      {"properties", {{"shape", {{"type", "string"}, {"description", "canonical, keys sorted: k=4096,m=4096,n=4096"}}},
                      {"instance", {{"type", "string"}}}, {"variant", {{"type", "string"}}}, {"target", {{"type", "string"}}},
                      {"status", {{"type", "string"}, {"enum", {"passed", "failed", "crashed", "timeout", "unsupported"}}}},
                      {"median_us", {{"type", "number"}, {"nullable", true}, {"description", "null: not timed"}}},
                      {"stddev_us", {{"type", "number"}}}, {"samples", {{"type", "integer"}}},
                      {"ratio", {{"type", "number"}, {"nullable", true}}},
                      {"unstable", {{"type", "boolean"}, {"description", "bench rounds disagreed; never wins a tie"}}},
                      {"result_id", {{"type", "integer"}}}, {"commit", {{"type", "string"}}},
                      {"commit_ms", {{"type", "integer"}}}, {"driver", {{"type", "string"}}},
                      {"runs", {{"type", "integer"}}}, {"measured_at_ms", {{"type", "integer"}}}}}};
  json::object snapshot_schema{
      {"type", "object"},
      {"required", {"schema_version", "kind", "gpu", "generated_at", "generated_at_ms", "commits", "drivers", "tables", "checksum"}},
      {"properties",
       {{"schema_version", {{"type", "integer"}, {"enum", {1}}}},
        {"kind", {{"type", "string"}, {"enum", {"kport.dispatch.snapshot"}}}},
        {"gpu", {{"type", "object"}, {"properties", {{"model", {{"type", "string"}}}, {"arch", {{"type", "string"}}}}}}},
        {"generated_at", {{"type", "string"}, {"format", "date-time"}}},
        {"generated_at_ms", {{"type", "integer"}}},
        {"commits", strings()}, {"drivers", strings()},
        {"rule", {{"type", "string"}}},
        {"tables", {{"type", "array"},
                    {"items", {{"type", "object"},
                               {"required", {"op", "dtype", "commits", "drivers", "figures"}},
                               {"properties", {{"op", {{"type", "string"}}}, {"dtype", {{"type", "string"}}},
                                               {"commits", strings()}, {"drivers", strings()},
                                               {"figures", {{"type", "array"},
                                                            {"items", {{"$ref", "#/components/schemas/DispatchFigure"}}}}}}}}}}},
        {"checksum", {{"type", "string"},
                      {"description", "fnv1a64:<16 hex>: FNV-1a 64 of the document's bytes with these 16 digits read as '0'"}}}}}};
  json::object error_schema{
      {"type", "object"},
      {"required", {"error"}},
      {"properties", {{"error", {{"type", "object"}, {"required", {"code", "message"}},
                                 {"properties", {{"code", {{"type", "string"}}}, {"message", {{"type", "string"}}}}}}}}}};
  return json::object{
      {"openapi", "3.0.3"},
      {"info", {{"title", "kport coordinator API"}, {"version", "1"},
                {"description", "Targets, kernels, pipelines, jobs, runners, results and best-kernel answers. "
                                "Errors are {\"error\":{\"code\",\"message\"}}. Writes need a bearer token."}}},
      {"paths", std::move(paths)},
      {"components", {{"schemas", {{"Error", std::move(error_schema)}, {"BestAnswer", std::move(best_answer)},
                                   {"BestEvidence", std::move(evidence)},
                                   {"DispatchSnapshot", std::move(snapshot_schema)}, {"DispatchFigure", std::move(figure)}}},
                      {"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}}};
}

}  // namespace

const std::string& openapi_document() {
  static const std::string doc = json::serialize(build());
  return doc;
}

}  // namespace kport::coordinator
