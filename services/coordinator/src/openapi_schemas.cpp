// Written in a small vocabulary (str, integer, obj, ...) so that a schema reads like the
// to_json it describes; codec.cpp, the route files and dashboard_views.cpp are the
// other side of each entry.
#include "openapi_schemas.h"

#include <string>
#include <utility>
#include <vector>

#include "kport/api/result_metrics.h"

namespace kport::coordinator {
namespace json = boost::json;
namespace {

using V = json::value;

V typed(const char* type) { return json::object{{"type", type}}; }
V str() { return typed("string"); }
V integer() { return typed("integer"); }
V number() { return typed("number"); }
V boolean() { return typed("boolean"); }
V ref(const std::string& name) { return json::object{{"$ref", "#/components/schemas/" + name}}; }
V arr(V items) { return json::object{{"type", "array"}, {"items", std::move(items)}}; }
V strings() { return arr(str()); }
V integers() { return arr(integer()); }

V nullable(V s) {
  // OpenAPI 3.0 ignores siblings of $ref: a nullable reference is an allOf of one, and
  // nullable needs a type beside it. Every schema referenced so is an object.
  if (s.as_object().contains("$ref"))
    return json::object{{"type", "object"}, {"allOf", json::array{std::move(s)}}, {"nullable", true}};
  s.as_object()["nullable"] = true;
  return s;
}

V describe(V s, const char* text) {
  s.as_object()["description"] = text;
  return s;
}

V enm(std::initializer_list<const char*> values) {
  json::array a;
  for (const char* v : values) a.emplace_back(v);
  return json::object{{"type", "string"}, {"enum", std::move(a)}};
}

// A time the API writes as ISO 8601 UTC, null when the event has not happened.
V when() { return json::object{{"type", "string"}, {"format", "date-time"}, {"nullable", true}}; }
V when_set() { return json::object{{"type", "string"}, {"format", "date-time"}}; }
// Counts keyed by a status (or other name).
V counts() { return json::object{{"type", "object"}, {"additionalProperties", integer()}}; }
// JSON the client gave (features, config, payload, env): kept and answered as sent.
V any_json() {
  return json::object{{"description", "JSON as given: an object or an array"},
                      {"anyOf", json::array{typed("object"), typed("array")}}};
}

// The environment a library's harness runs with: its manifest's `env`, NAME: value, the
// placeholders unexpanded.
V env_map() {
  return json::object{{"type", "object"},
                      {"additionalProperties", str()},
                      {"description",
                       "the environment the library's harness runs with (its kport.json `env`, placeholders "
                       "unexpanded); the GPU runner applies it to the harness processes it starts"}};
}

struct P {
  const char* name;
  V schema;
  bool required = true;
};
P opt(const char* name, V schema) { return P{name, std::move(schema), false}; }

V object_of(const std::vector<P>& props, bool closed) {
  json::object properties;
  json::array required;
  for (const auto& p : props) {
    properties[p.name] = p.schema;
    if (p.required) required.emplace_back(p.name);
  }
  json::object out{{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) out["required"] = std::move(required);
  if (closed) out["additionalProperties"] = false;
  return out;
}
// A metric of the result table (kport::api::k_result_metrics): its type and its words.
V metric_schema(const api::ResultMetric& m) {
  V v = m.integer ? integer() : number();
  v.as_object()["description"] = m.description;
  return v;
}

// An answer group's fields and, after them, the table's metrics of that group (always
// present, null where a result has none).
std::vector<P> with_metrics(api::MetricGroup group, std::vector<P> props) {
  for (const api::ResultMetric& m : api::k_result_metrics)
    if (m.group == group) props.push_back(P{m.name.data(), nullable(metric_schema(m)), true});
  return props;
}

// An answer: exactly these fields.
V obj(const std::vector<P>& props) { return object_of(props, true); }
// A request body: what the handler reads; it ignores other fields.
V body(const std::vector<P>& props) { return object_of(props, false); }

// An answer with every field of `base` and these besides.
V extend(const V& base, const std::vector<P>& more) {
  json::object out = base.as_object();
  auto& properties = out["properties"].as_object();
  if (!out.contains("required")) out["required"] = json::array{};
  auto& required = out["required"].as_array();
  for (const auto& p : more) {
    properties[p.name] = p.schema;
    if (p.required) required.emplace_back(p.name);
  }
  return out;
}

V items_of(const char* schema) { return obj({{"items", arr(ref(schema))}}); }
V page_of(const char* schema) {
  return obj({{"items", arr(ref(schema))},
              {"next_cursor", describe(nullable(integer()), "pass as before= for the next page; null on the last")}});
}

V result_status() { return enm({"passed", "failed", "crashed", "timeout", "unsupported"}); }
V job_status() { return enm({"queued", "awaiting_runner", "running", "succeeded", "failed", "cancelled"}); }
V build_status() { return enm({"ok", "not_applicable", "compile_error", "timeout"}); }
V pipeline_reason() { return enm({"push", "new_target", "new_driver", "new_gpu", "manual"}); }
V stage() {
  return enm({"not_applicable", "pending", "build_failed", "builds", "resources_clean", "numerics_failed",
              "numerics_passed", "measured", "selected_best"});
}

void catalog(json::object& s) {
  s["Target"] = obj({{"name", str()},
                     {"arch", describe(str(), "compute capability, e.g. 9.0")},
                     {"features", any_json()},
                     {"toolkit", str()},
                     {"first_seen", when()},
                     {"is_new", boolean()}});
  s["TargetDetail"] =
      extend(s["Target"], {{"check_arches", describe(strings(), "its own arch and the registered check arches")}});
  s["TargetInput"] =
      body({{"arch", str()}, opt("features", any_json()), opt("toolkit", str()), opt("check_arches", strings())});
  s["KernelInstance"] = obj({{"name", str()},
                             {"repo", describe(str(),
                                               "the library (repository) that published it; empty for an "
                                               "operator's upload. A name is unique within its library")},
                             {"family", str()},
                             {"variant", str()},
                             {"features", any_json()},
                             {"config", any_json()},
                             {"dtypes", describe(nullable(strings()), "null: the publisher did not say")}});
  s["KernelInstanceInput"] = body({{"name", str()},
                                   {"family", str()},
                                   {"variant", str()},
                                   opt("features", any_json()),
                                   opt("config", any_json()),
                                   opt("dtypes", strings())});
  s["KernelVariantInput"] = body({{"family", str()}, {"variant", str()}, opt("features", strings())});
  s["KernelsInput"] =
      describe(body({opt("instances", arr(ref("KernelInstanceInput"))), opt("variants", arr(ref("KernelVariantInput"))),
                     opt("library", ref("LibraryFamilies"))}),
               "instances (1..10000), variants (1..1000) and/or the families the library declares");
  // The op families (docs/MANIFEST.md, families): what a library declares, as a build
  // reports it and as GET /api/v1/families answers it.
  // A dimension's distance rule for the nearest measured shape (porting::Shape::DimRule).
  const V align = arr(obj({{"multiple", integer()}, {"penalty", number()}}));
  s["FamilyDim"] =
      obj({{"name", str()},
           {"min", integer()},
           {"max", integer()},
           opt("default", describe(integer(), "present for a dimension a shape may leave out")),
           opt("exact", describe(boolean(), "a shape at another value of it is never a stand-in")),
           opt("weight", describe(number(), "its weight on |ln(a/b)| in the shape distance; absent: 1")),
           opt("align", describe(align, "one value a multiple and the other not adds the penalty to the distance")),
           opt("omit_default", describe(boolean(), "a shape's canonical text leaves it out at its default")),
           opt("full_at", describe(str(),
                                   "another dimension: this one at its value is the default's case, above it "
                                   "no case"))});
  // Which instance config keys give a family's tiles, steps, split and path bounds, per
  // dimension (porting/wave_model.h DimKeys): a key, or alternatives read in order.
  const V config_keys = json::object{{"anyOf", json::array{str(), strings()}}};
  s["FamilyGeometryDim"] =
      obj({opt("tile", describe(config_keys, "the tile along the dimension, one per block")),
           opt("step", describe(config_keys, "the step each block walks the dimension by")),
           opt("split", describe(config_keys, "blocks sharing one tile's steps (split-K)")),
           opt("max_bytes", describe(config_keys, "the most bytes along it the instance runs")),
           opt("align_bytes", describe(config_keys, "the bytes along it must be a multiple of")),
           opt("max", describe(config_keys, "the largest extent along it the instance runs at all")),
           opt("run_min_bytes", describe(config_keys, "the fewest bytes along it the instance runs at all")),
           opt("run_max_bytes", describe(config_keys, "the most bytes along it the instance runs at all")),
           opt("run_align_bytes",
               describe(config_keys, "the bytes along it must be a multiple of for the instance to run at all")),
           opt("run_multiple", describe(config_keys,
                                        "the extent along it (elements or rows) must be a multiple of for the instance "
                                        "to run at all"))});
  s["FamilyGeometry"] =
      describe(json::object{{"type", "object"}, {"additionalProperties", ref("FamilyGeometryDim")}},
               "per dimension of the family, the instance config keys the selection reads its geometry from");
  // What a shape needs for any instance of the family to run it (porting::ShapeRequirement).
  s["FamilyRequirement"] =
      obj({{"dim", str()},
           {"multiple", describe(integer(), "the dimension's value must be a multiple of it")},
           opt("when", describe(json::object{{"type", "object"}, {"additionalProperties", integer()}},
                                "only when these dims have these values; absent: always")),
           opt("why", describe(str(), "said with a refusal"))});
  s["Family"] = obj({{"name", str()},
                     {"description", str()},
                     {"dims", describe(arr(ref("FamilyDim")), "the shape's keys in the harness's order")},
                     {"dtypes", strings()},
                     opt("flops", describe(str(), "the work in floating-point operations, over the dims")),
                     opt("bytes", describe(str(), "the bytes moved, over the dims and bytes_per_elem")),
                     {"bound", describe(enm({"compute", "memory"}), "figures in TFLOP/s (compute) or GB/s (memory)")},
                     opt("example", describe(str(), "a shape to offer a user")),
                     opt("geometry", ref("FamilyGeometry")),
                     opt("requires", describe(arr(ref("FamilyRequirement")),
                                              "what a shape needs for any instance to run it; /api/v1/best refuses "
                                              "another with 422")),
                     {"library", describe(str(), "the manifest's name")},
                     {"repo", describe(str(), "the repository whose build reported it; empty: kport's own")}});
  s["FamilyList"] = obj({{"families", arr(ref("Family"))}});
  s["FamilyDimInput"] = body({{"name", str()},
                              opt("default", integer()),
                              opt("min", integer()),
                              opt("max", integer()),
                              opt("exact", boolean()),
                              opt("weight", number()),
                              opt("align", arr(body({{"multiple", integer()}, {"penalty", number()}}))),
                              opt("omit_default", boolean()),
                              opt("full_at", str())});
  s["FamilyInput"] = body(
      {{"name", str()},
       opt("description", str()),
       {"dims", arr(ref("FamilyDimInput"))},
       {"dtypes", strings()},
       opt("flops", str()),
       opt("bytes", str()),
       opt("bound", enm({"compute", "memory"})),
       opt("example", str()),
       opt("geometry", ref("FamilyGeometry")),
       opt("requires", arr(body({{"dim", str()},
                                 {"multiple", integer()},
                                 opt("when", json::object{{"type", "object"}, {"additionalProperties", integer()}}),
                                 opt("why", str())})))});
  s["LibraryFamilies"] = body({{"library", str()},
                               opt("job", describe(integer(), "the build job that read the manifest")),
                               {"families", arr(ref("FamilyInput"))}});
  s["KernelsPublished"] = obj({{"upserted", integer()}, {"variants", integer()}});
  s["GpuModel"] =
      obj({{"name", str()}, {"arch", str()}, {"drivers", strings()}, {"first_seen", when()}, {"last_seen", when()}});
  s["GpuAgreement"] =
      obj({{"gpu_model", str()},
           {"items",
            arr(obj({{"gpus", describe(strings(), "the two GPUs' UUIDs, in order")},
                     {"cases", describe(integer(), "cases (instance, dtype, shape) timed on both at one commit")},
                     {"median_ratio", describe(number(), "median of the second GPU's time over the first's")},
                     {"sm_clock_mhz", describe(arr(nullable(number())), "each GPU's median SM clock; null: not known")},
                     {"bounds", arr(obj({{"bound", enm({"compute", "memory"})},
                                         {"cases", integer()},
                                         {"tolerance", describe(number(), "0.01 compute-bound, 0.02 memory-bound")},
                                         {"median_diff", describe(number(), "median |ratio - 1|")},
                                         {"p90_diff", number()},
                                         {"within", describe(integer(), "cases within the tolerance")},
                                         {"agree", describe(boolean(), "median_diff within the tolerance")}}))},
                     {"agree", describe(boolean(), "every bound agrees")},
                     {"summary", str()}}))}});
  s["Repository"] = obj({{"id", integer()}, {"name", str()}, {"url", str()}, {"created", when()}});
  s["RepositoryInput"] = body({{"name", str()}, {"url", str()}});
  s["Commit"] = obj({{"sha", str()},
                     {"repo", str()},
                     {"parent", nullable(str())},
                     {"message", str()},
                     {"author", str()},
                     {"time", when()}});
  s["CommitInput"] = body({{"sha", str()},
                           {"repo", str()},
                           opt("parent", str()),
                           opt("message", str()),
                           opt("author", str()),
                           opt("time_ms", integer())});
  s["CommitSummary"] = obj({{"commit", ref("Commit")},
                            {"pipelines", integers()},
                            {"jobs", counts()},
                            {"builds", counts()},
                            {"results", counts()},
                            {"targets", strings()}});
  s["StageCounts"] = obj({{"variants", integer()},
                          {"applicable", integer()},
                          {"builds", integer()},
                          {"resources_clean", integer()},
                          {"numerics_passed", integer()},
                          {"measured", integer()},
                          {"selected_best", integer()}});
  s["FamilyStageCounts"] = extend(s["StageCounts"], {{"family", str()}});
  s["Bringup"] = obj({{"target", ref("Target")},
                      {"commit", describe(nullable(str()), "the stage commit; null before any build")},
                      {"repo", describe(nullable(str()),
                                        "the library (repository) the stages are of: the one asked for, else the "
                                        "stage commit's; null before any build")},
                      {"repositories", describe(strings(), "every library with a build of the target")},
                      {"progress", ref("StageCounts")},
                      {"families", arr(ref("FamilyStageCounts"))},
                      {"variants", arr(obj({{"family", str()},
                                            {"variant", str()},
                                            {"stage", stage()},
                                            {"not_applicable", boolean()},
                                            {"built", boolean()},
                                            {"resources_clean", boolean()},
                                            {"numerics_passed", boolean()},
                                            {"numerics_failed", boolean()},
                                            {"measured", boolean()},
                                            {"selected_best", boolean()},
                                            {"reason", str()},
                                            {"build_status", nullable(build_status())},
                                            {"commit", nullable(str())},
                                            {"results_passed", integer()},
                                            {"results_failed", integer()}}))}});
}

void pipelines(json::object& s) {
  s["Pipeline"] = obj({{"id", integer()},
                       {"reason", pipeline_reason()},
                       {"repo", str()},
                       {"ref", str()},
                       {"commit", str()},
                       {"note", str()},
                       {"created", when()},
                       {"status", enm({"queued", "running", "succeeded", "failed", "cancelled"})},
                       {"jobs_total", integer()},
                       {"jobs_done", integer()}});
  s["PipelineWithJobs"] = extend(s["Pipeline"], {{"jobs", arr(ref("Job"))}});
  s["PipelineInput"] = body({{"commit", str()},
                             opt("repo", str()),
                             opt("ref", str()),
                             opt("note", str()),
                             opt("reason", pipeline_reason()),
                             opt("targets", describe(strings(), "all registered targets when none is named")),
                             opt("payload", any_json())});
  s["PipelineCancelled"] = obj({{"pipeline", integer()}, {"jobs_cancelled", integer()}});
  s["Job"] = obj({{"id", integer()},
                  {"pipeline", integer()},
                  {"kind", enm({"build", "check"})},
                  {"status", job_status()},
                  {"commit", str()},
                  {"target", str()},
                  {"arch", nullable(str())},
                  {"gpu_model", nullable(str())},
                  {"driver", describe(nullable(str()), "only a runner reporting this driver claims the check")},
                  {"depends_on", nullable(integer())},
                  {"attempt", integer()},
                  {"max_attempts", integer()},
                  {"runner", nullable(integer())},
                  {"lease_expires", when()},
                  {"cancel_requested", boolean()},
                  {"payload", any_json()},
                  {"failure_reason", nullable(str())},
                  {"created", when()},
                  {"started", when()},
                  {"finished", when()},
                  {"not_before", when()}});
  s["JobCancelled"] = obj({{"job", integer()}, {"status", job_status()}});
  s["JobLog"] =
      obj({{"job", integer()}, {"chunks", arr(obj({{"seq", integer()}, {"attempt", integer()}, {"text", str()}}))}});
  s["JobLogInput"] = body({{"attempt", integer()}, {"text", str()}});
  s["JobLogAppended"] = obj({{"job", integer()}, {"appended", describe(integer(), "bytes")}});
  s["JobCompleteInput"] = body(
      {{"attempt", integer()},
       opt("status", enm({"succeeded", "failed"})),
       opt("reason", describe(str(), "required when failed")),
       opt("retryable", describe(boolean(), "a passing cause: the job backs off and runs again while attempts remain")),
       opt("retry", describe(boolean(), "the older name of retryable"))});
  s["JobCompleted"] = obj({{"job", integer()},
                           {"status", job_status()},
                           {"duplicate", boolean()},
                           {"spawned", describe(integers(), "jobs this one unblocked")},
                           opt("retry_in_ms", describe(integer(), "present when the job went back to the queue"))});
  std::vector<P> result_input{
      opt("commit", str()),
      opt("target", str()),
      {"family", str()},
      {"variant", str()},
      {"instance", str()},
      {"dtype", str()},
      {"shape", str()},
      opt("toolkit", str()),
      opt("gpu_model", str()),
      opt("gpu_uuid", str()),
      opt("arch", str()),
      opt("driver", str()),
      opt("sm_clock_mhz", number()),
      opt("env", any_json()),
      {"status", result_status()},
      opt("message", str()),
      opt("max_abs_err", number()),
      opt("max_rel_err", number()),
      opt("normwise_rel_err", number()),
      opt("tolerance", number()),
      opt("nan_inf_count", integer()),
      opt("seed", describe(integer(), "unsigned 64-bit")),
      opt("median_us", number()),
      opt("stddev_us", number()),
      opt("samples", integer()),
      opt("samples_dropped", describe(integer(), "timed samples dropped because the SM clock read throttled")),
      opt("tflops", number()),
      opt("gbps", number()),
      opt("baseline", str()),
      opt("baseline_median_us", number()),
      opt("ratio", number()),
      opt("unstable", boolean())};
  for (const api::ResultMetric& m : api::k_result_metrics) result_input.push_back(opt(m.name.data(), metric_schema(m)));
  s["ResultInput"] = body(result_input);
  s["ResultsInput"] = body({{"attempt", integer()}, {"results", arr(ref("ResultInput"))}});
  s["BuildRecordInput"] = body({opt("commit", str()),
                                opt("target", str()),
                                {"family", str()},
                                {"variant", str()},
                                {"status", build_status()},
                                opt("message", str()),
                                opt("registers", integer()),
                                opt("spill_stores_bytes", integer()),
                                opt("spill_loads_bytes", integer()),
                                opt("shared_mem_bytes", integer()),
                                opt("stack_frame_bytes", integer()),
                                opt("constant_mem_bytes", integer()),
                                opt("instruction_audit", any_json()),
                                opt("artifact", str()),
                                opt("source_path", describe(str(), "the variant's kernel, relative to the repository")),
                                opt("source_line", describe(integer(), "the line of its first __global__")),
                                opt("harness_env", env_map())});
  s["BuildRecordsInput"] = body({{"attempt", integer()}, {"records", arr(ref("BuildRecordInput"))}});
  s["Stored"] = obj({{"stored", integer()}, {"duplicates", integer()}, {"ids", integers()}});
}

void runners(json::object& s) {
  s["RunnerCapabilities"] = obj({{"toolkit", str()},
                                 {"targets", strings()},
                                 {"cores", integer()},
                                 {"gpu_model", str()},
                                 {"gpu_uuid", str()},
                                 {"arch", str()},
                                 {"driver", str()},
                                 {"extra", any_json()}});
  s["RunnerCapabilitiesInput"] =
      body({opt("toolkit", str()), opt("targets", strings()), opt("cores", integer()), opt("gpu_model", str()),
            opt("gpu_uuid", str()), opt("arch", describe(str(), "required of a gpu runner")), opt("driver", str()),
            opt("extra", any_json())});
  s["Runner"] = obj({{"id", integer()},
                     {"name", str()},
                     {"role", enm({"build", "gpu"})},
                     {"capabilities", ref("RunnerCapabilities")},
                     {"online", boolean()},
                     {"registered", when()},
                     {"last_heartbeat", when()},
                     {"deregistered", when()},
                     {"current_job", nullable(integer())}});
  s["RegisterInput"] = body({{"name", str()},
                             {"role", enm({"build", "gpu"})},
                             opt("capabilities", nullable(ref("RunnerCapabilitiesInput")))});
  s["Registered"] = obj({{"runner", ref("Runner")},
                         {"token", describe(str(), "the runner token, shown once")},
                         {"heartbeat_interval_ms", integer()},
                         {"max_claim_wait_s", integer()}});
  s["HeartbeatInput"] = body({opt("job", integer()), opt("attempt", describe(integer(), "required with job"))});
  s["Heartbeat"] = obj({{"lease_expires_ms", integer()}, {"cancel_requested", boolean()}});
  s["Claim"] = describe(json::object{{"oneOf", json::array{ref("ClaimedJob"), ref("NoJob")}}},
                        "a job and its lease, or none within the wait");
  s["ClaimedJob"] = obj({{"job", ref("Job")}, {"lease_expires_ms", integer()}, {"heartbeat_interval_ms", integer()}});
  s["NoJob"] = obj({{"job", describe(nullable(typed("object")), "always null")}, {"retry_after_ms", integer()}});
  s["Deregistered"] = obj({{"runner", integer()}, {"deregistered", boolean()}});
  s["RegistrationTokenInput"] =
      body({opt("expires_in_s", describe(integer(), "1 s .. 10 years; no expiry when absent"))});
  s["RegistrationToken"] = obj({{"token", str()}, {"expires_ms", nullable(integer())}});
  s["TokenRevoked"] = obj({{"runner", integer()}, {"revoked", boolean()}});
}

void results(json::object& s) {
  auto nn = [] { return nullable(number()); };
  s["Result"] = obj(
      {{"id", integer()},
       {"job", nullable(integer())},
       {"attempt", integer()},
       {"commit", str()},
       {"target", str()},
       {"family", str()},
       {"variant", str()},
       {"instance", str()},
       {"dtype", str()},
       {"shape", str()},
       {"toolkit", str()},
       {"runner", nullable(integer())},
       {"gpu_model", str()},
       {"gpu_uuid", str()},
       {"arch", str()},
       {"driver", str()},
       {"sm_clock_mhz", nn()},
       {"env", any_json()},
       {"status", result_status()},
       {"message", str()},
       {"numerics",
        obj(with_metrics(api::MetricGroup::numerics, {{"max_abs_err", nn()},
                                                      {"max_rel_err", nn()},
                                                      {"normwise_rel_err", nn()},
                                                      {"tolerance", nn()},
                                                      {"nan_inf_count", nullable(integer())},
                                                      {"seed", describe(nullable(integer()), "unsigned 64-bit")}}))},
       {"timing", obj(with_metrics(
                      api::MetricGroup::timing,
                      {{"median_us", nn()},
                       {"stddev_us", nn()},
                       {"samples", nullable(integer())},
                       {"samples_dropped",
                        describe(nullable(integer()),
                                 "timed samples dropped because the SM clock read throttled (null before 0011)")},
                       {"tflops", nn()},
                       {"gbps", nn()},
                       {"baseline", str()},
                       {"baseline_median_us", nn()},
                       {"ratio", describe(nn(), "baseline median / median (> 1: faster)")},
                       {"unstable", describe(boolean(), "bench rounds disagreed beyond noise; never wins a tie")}}))},
       {"created", when()},
       {"repo", describe(str(), "the library (repository) the result is of; empty for none")}});
  s["Reproduction"] = obj({{"harness", str()},
                           {"harness_sha256", nullable(str())},
                           {"download_url", nullable(str())},
                           {"check", describe(str(), "shell command that checks the case again")},
                           {"bench", describe(nullable(str()), "shell command that times it again; null when untimed")},
                           {"check_args", nullable(strings())},
                           {"bench_args", nullable(strings())},
                           {"exact", boolean()},
                           {"missing", describe(strings(), "what the record lacks to replay exactly")}});
  s["ResultDetail"] = extend(s["Result"], {{"reproduce", ref("Reproduction")}});
  s["BuildRecord"] = obj({{"id", integer()},
                          {"job", nullable(integer())},
                          {"attempt", integer()},
                          {"commit", str()},
                          {"target", str()},
                          {"family", str()},
                          {"variant", str()},
                          {"status", build_status()},
                          {"message", str()},
                          {"registers", nullable(integer())},
                          {"spill_stores_bytes", nullable(integer())},
                          {"spill_loads_bytes", nullable(integer())},
                          {"shared_mem_bytes", nullable(integer())},
                          {"stack_frame_bytes", nullable(integer())},
                          {"constant_mem_bytes", nullable(integer())},
                          {"instruction_audit", any_json()},
                          {"artifact", nullable(str())},
                          {"source_path", nullable(str())},
                          {"source_line", nullable(integer())},
                          {"harness_env", env_map()},
                          {"created", when()}});
  s["Artifact"] = obj(
      {{"sha256", str()}, {"size", integer()}, {"name", str()}, {"kind", str()}, {"created", when()}, {"url", str()}});
  s["VerdictReason"] =
      obj({{"kind", str()},
           {"variant", str()},
           {"target", str()},
           {"gpu_model", str()},
           {"message", str()},
           {"figures", json::object{{"type", "object"},
                                    {"additionalProperties", json::object{{"anyOf", json::array{number(), str()}}}}}}});
  s["SeriesNoise"] = obj(
      {{"gpu_model", str()},
       {"driver", str()},
       {"instance", str()},
       {"dtype", str()},
       {"shape", str()},
       {"status", enm({"calibrated", "insufficient_data"})},
       {"figures", describe(integer(), "passing, stable, precise figures of the series")},
       {"codes", describe(integer(), "harness binaries measured twice or more (the A/A groups)")},
       {"degrees", describe(integer(), "A/A degrees of freedom: over the codes, figures - 1")},
       {"needed", describe(integer(), "more degrees of freedom before the series judges a change; 0 once calibrated")},
       {"sigma", describe(nullable(number()), "robust A/A standard deviation of one figure, relative to the median")},
       {"mde", describe(nullable(number()), "minimum detectable effect: the smallest relative change that counts")},
       {"summary", str()}});
  s["SeriesList"] = obj({{"items", arr(ref("SeriesNoise"))}, {"rule", str()}});
  s["Flake"] =
      obj({{"gpu_model", str()},
           {"instance", str()},
           {"dtype", str()},
           {"shape", str()},
           {"state", enm({"flaky", "released", "stable"})},
           {"since", describe(when(), "when the same harness binary first both passed and failed on the case")},
           {"first_commit", str()},
           {"runs", integer()},
           {"failures", integer()},
           {"clean_runs", describe(integer(), "passing runs in a row since the last failure")},
           {"to_release", describe(integer(), "passing runs in a row still needed before it is released")},
           {"failed",
            describe(arr(obj({{"result", integer()},
                              {"seed", nullable(integer())},
                              {"commit", str()},
                              {"status", enm({"failed", "crashed", "timeout"})}})),
                     "its failures since it became flaky, oldest first: replay a seed with the result's reproduce")}});
  s["FlakeList"] = obj({{"items", arr(ref("Flake"))}, {"release_after", integer()}});
  s["Verdict"] = obj(
      {{"commit", str()},
       {"baseline", describe(nullable(str()), "the closest validated ancestor")},
       {"status", enm({"pending", "pass", "fail", "insufficient_data"})},
       {"reasons", arr(ref("VerdictReason"))},
       {"waiting", strings()},
       {"notes", strings()},
       {"insufficient_data",
        describe(arr(extend(
                     s["SeriesNoise"],
                     {{"target", str()}, {"change", number()}, {"result", integer()}, {"baseline_result", integer()}})),
                 "timed series whose change could not be judged: too little A/A history")},
       {"flaky", describe(arr(obj({{"target", str()},
                                   {"gpu_model", str()},
                                   {"instance", str()},
                                   {"dtype", str()},
                                   {"shape", str()},
                                   {"status", enm({"failed", "crashed", "timeout"})},
                                   {"result", integer()},
                                   {"seed", nullable(integer())},
                                   {"since", when_set()},
                                   {"runs", integer()},
                                   {"failures", integer()},
                                   {"to_release", integer()}})),
                          "new failures of flaky cases: listed, not counted")},
       {"infrastructure", describe(arr(obj({{"target", str()},
                                            {"gpu_model", str()},
                                            {"job", integer()},
                                            {"result", nullable(integer())},
                                            {"message", str()}})),
                                   "failures of the machine (lease, runner, GPU health, a check job failing en masse), "
                                   "never blamed on the commit")},
       {"compared", obj({{"builds", integer()}, {"results", integer()}})},
       {"rule", str()}});
  s["Revalidation"] = obj({{"gpu_model", str()},
                           {"driver", str()},
                           {"arch", str()},
                           {"previous_driver", nullable(str())},
                           {"pipeline", nullable(integer())},
                           opt("compared", obj({{"results", integer()}, {"previous_results", integer()}})),
                           {"status", enm({"pass", "pending", "nothing_to_check", "fail"})},
                           {"reasons", arr(ref("VerdictReason"))}});
  s["RevalidationInput"] = body({{"gpu_model", str()}, {"driver", str()}});
  s["RevalidationOpened"] = extend(s["Revalidation"], {{"opened", boolean()}, {"jobs", integer()}});
  s["RevalidationKnown"] = obj({{"opened", boolean()}, {"gpu_model", str()}, {"driver", str()}});
  s["PushAccepted"] = obj({{"delivery", str()},
                           {"source", str()},
                           {"repo", str()},
                           {"ref", str()},
                           {"commit", str()},
                           {"outcome", str()},
                           {"duplicate", boolean()},
                           {"forced", boolean()},
                           {"superseded_jobs", integer()},
                           {"stale", boolean()},
                           {"pipeline", nullable(ref("Pipeline"))},
                           opt("note", str())});
  s["PushIgnored"] = obj({{"outcome", enm({"ignored"})}, {"event", str()}, {"delivery", str()}, {"note", str()}});
  s["PushAnswer"] = json::object{{"oneOf", json::array{ref("PushAccepted"), ref("PushIgnored")}}};
  s["SlurmState"] =
      obj({{"partition", str()},
           {"max_jobs", integer()},
           {"jobs", arr(obj({{"id", str()}, {"key", str()}, {"state", str()}}))},
           {"backoff", json::object{{"type", "object"},
                                    {"additionalProperties", obj({{"failures", integer()}, {"until_ms", integer()}})}}},
           {"last_error", str()}});
  s["QueueStats"] = obj({{"jobs", counts()}, {"runners_online", integer()}, {"runners_online_by_role", counts()}});
  s["Queue"] = extend(s["QueueStats"], {{"claims_waiting", integer()}, opt("slurm", ref("SlurmState"))});
  s["Health"] = obj({{"status", enm({"ok"})}, {"schema_version", integer()}});
  s["Ready"] = obj({{"status", enm({"ready"})}, {"database_ms", integer()}});
}

void best(json::object& s) {
  s["BestEvidence"] =
      describe(obj({{"result", integer()},
                    {"gpu_model", str()},
                    {"arch", str()},
                    {"target", str()},
                    {"commit", str()},
                    {"driver", str()},
                    {"gpu_uuid", describe(str(), "the GPU that measured it; empty: not known")},
                    {"sm_clock_mhz", describe(nullable(number()), "the SM clock it was timed at; null: not known")},
                    {"shape", str()},
                    {"status", result_status()},
                    {"median_us", nullable(number())},
                    {"stddev_us", number()},
                    {"samples", integer()},
                    {"ratio", describe(nullable(number()), "vendor baseline median / median (> 1: faster)")},
                    {"unstable", describe(boolean(), "bench rounds disagreed beyond noise; never wins a tie")},
                    {"runs", describe(integer(), "results of its commit behind it (> 1: re-measured)")},
                    {"measured", when()},
                    {"url", str()}}),
               "One result behind a ranked or excluded instance");
  auto method = [] { return enm({"measured_shape", "wave_model", "problem_size"}); };
  s["BestAnswer"] = obj(
      {{"kind", describe(enm({"measured", "provisional", "unranked"}),
                         "measured: timed on this GPU model; provisional: ranked by ratio to the vendor baseline on "
                         "the nearest measured arch; unranked: candidates only, no best")},
       {"provisional", boolean()},
       {"confidence",
        describe(
            nullable(obj({{"basis", str()},
                          {"method", describe(method(),
                                              "how it ranked: at this shape, or from the nearest measured "
                                              "one moved by each instance's waves of tiles (wave_model) "
                                              "or by problem size")},
                          {"shape_distance", number()},
                          opt("nearest_shape_regret",
                              obj({{"shapes", integer()},
                                   {"median", number()},
                                   {"p90", number()},
                                   {"max", number()},
                                   {"worst_shape", describe(str(), "the measured shape answered worst")},
                                   {"worst_from",
                                    describe(str(), "the nearest other measured shape it was answered from")}}))})),
            "measured answers: the basis (this shape, or the nearest measured one), the distance to it, and for "
            "a nearest-shape answer how such answers fared on this GPU model (regret as fractions)")},
       {"best", describe(nullable(str()), "null when unranked")},
       {"tied", strings()},
       {"reason", str()},
       {"notes", strings()},
       {"ranked_by", enm({"median_us", "estimate_us", "ratio_to_baseline", ""})},
       {"candidates_from", describe(str(), "provisional/unranked: where the candidates came from")},
       {"matched_shape", nullable(str())},
       {"exact_shape", boolean()},
       {"evidence_gpu_model", str()},
       {"evidence_arch", str()},
       {"evidence",
        nullable(obj({{"gpu_model", str()},
                      {"arch", str()},
                      {"commit", describe(str(), "the best's commit")},
                      {"commits", strings()},
                      {"driver", str()},
                      {"drivers", strings()},
                      {"other_drivers", describe(strings(), "drivers of other results on that GPU model, not used")},
                      {"results", integers()},
                      {"samples", integer()},
                      {"measured", when()},
                      {"oldest", when()}}))},
       {"ranking", arr(obj({{"instance", str()},
                            {"variant", str()},
                            {"tie_with_best", boolean()},
                            {"slowdown", number()},
                            {"ranked", boolean()},
                            {"evidence", nullable(ref("BestEvidence"))},
                            opt("estimate_us", describe(number(),
                                                        "from another shape: the evidence's median moved "
                                                        "to the asked shape, what the ranking ordered by"))}))},
       {"excluded",
        describe(
            arr(obj({{"instance", str()}, {"variant", str()}, {"reason", str()}, {"evidence", ref("BestEvidence")}})),
            "instances whose newest result on that GPU model failed, crashed, timed out, was "
            "unsupported or untimed")},
       {"query", obj({{"gpu", str()},
                      {"op", str()},
                      {"dtype", str()},
                      {"shape", str()},
                      {"arch", str()},
                      {"target", str()},
                      {"repo", describe(str(),
                                        "the library (repository) the answer is of: the one asked about, else the one "
                                        "the evidence is of; empty when no library's")}})},
       opt("measure", describe(obj({{"requests", str()}, {"body", ref("MeasureRequestInput")}, {"list", str()}}),
                               "present when the answer is not a measurement at the exact shape asked (on a GPU model "
                               "kport knows): how to have it measured"))});
  s["MeasureRequestInput"] =
      body({{"gpu", str()},
            {"op", describe(str(), "one of GET /api/v1/families")},
            {"dtype", str()},
            {"shape", str()},
            opt("repo", describe(str(),
                                 "the library (repository) whose instances to measure, at most "
                                 "128 bytes; needed where instances of several libraries run the "
                                 "op, else the one library that runs it"))});
  auto measured = [] { return obj({{"best", str()}, {"results", integers()}}); };
  auto measured_repo = [] {
    return describe(str(),
                    "the library (repository) measured; empty for a request of no library (made before kport "
                    "told libraries apart, or when no instance names one)");
  };
  s["MeasureRequest"] = obj({{"gpu", str()},
                             {"op", str()},
                             {"dtype", str()},
                             {"shape", str()},
                             {"repo", measured_repo()},
                             {"id", integer()},
                             {"state", enm({"queued", "running", "measured", "failed"})},
                             opt("reason", str()),
                             {"job", integer()},
                             {"job_status", job_status()},
                             {"pipeline", integer()},
                             {"target", str()},
                             {"commit", str()},
                             {"requests", describe(integer(), "times requested while open")},
                             {"asked", describe(integer(), "times /api/v1/best answered it unmeasured")},
                             {"created", when_set()},
                             {"updated", when_set()},
                             opt("measured", measured()),
                             {"answer", describe(str(), "the /api/v1/best URL (with repo= when of a library)")}});
  s["MeasureRequestOpened"] =
      extend(s["MeasureRequest"], {{"outcome", enm({"queued", "coalesced"})},
                                   {"case", obj({{"family", str()}, {"dtype", str()}, {"shape", str()}})}});
  s["MeasureAlreadyMeasured"] = obj({{"gpu", str()},
                                     {"op", str()},
                                     {"dtype", str()},
                                     {"shape", str()},
                                     {"repo", measured_repo()},
                                     {"outcome", enm({"already_measured"})},
                                     {"state", enm({"measured"})},
                                     {"job", nullable(typed("object"))},
                                     {"measured", measured()},
                                     {"answer", str()}});
  s["MeasureRequestAnswer"] =
      json::object{{"oneOf", json::array{ref("MeasureRequestOpened"), ref("MeasureAlreadyMeasured")}}};
  s["MeasureRequestPage"] =
      obj({{"items", arr(ref("MeasureRequest"))},
           {"next_cursor", nullable(integer())},
           {"unmeasured_asks", describe(arr(obj({{"gpu", str()},
                                                 {"op", str()},
                                                 {"dtype", str()},
                                                 {"shape", str()},
                                                 opt("repo", describe(str(),
                                                                      "the library the answers were of (absent: none); "
                                                                      "the fields so far are a measure request of it")),
                                                 {"asks", integer()},
                                                 {"first_asked", when_set()},
                                                 {"last_asked", when_set()}})),
                                        "the questions most often answered without a measurement, per library")}});
  s["DispatchFigure"] =
      describe(obj({{"shape", describe(str(), "canonical, keys sorted: k=4096,m=4096,n=4096")},
                    {"instance", str()},
                    {"variant", str()},
                    {"target", str()},
                    {"status", result_status()},
                    {"median_us", describe(nullable(number()), "null: not timed")},
                    {"stddev_us", number()},
                    {"samples", integer()},
                    {"ratio", nullable(number())},
                    {"unstable", describe(boolean(), "bench rounds disagreed; never wins a tie")},
                    {"result_id", integer()},
                    {"commit", str()},
                    {"commit_ms", integer()},
                    {"driver", str()},
                    {"runs", integer()},
                    {"measured_at_ms", integer()}}),
               "An instance's current figure at a shape: the latest result of the newest commit measured there");
  auto schema_version = json::object{{"type", "integer"}, {"enum", json::array{2}}};
  auto splits = [] { return arr(obj({{"dim", str()}, {"size", integer()}})); };
  auto byte_range = [] {
    return obj({{"dim", str()},
                {"max_bytes", describe(integer(), "0: no upper bound")},
                {"align_bytes", describe(integer(), "0: no alignment")},
                opt("min_bytes", describe(integer(), "absent or 0: no lower bound"))});
  };
  s["DispatchSnapshot"] = obj(
      {{"schema_version", schema_version},
       {"kind", enm({"kport.dispatch.snapshot"})},
       {"gpu", obj({{"model", str()},
                    {"arch", str()},
                    {"sm_count", describe(integer(), "SMs the GPU runners of this model registered; 0: unknown")}})},
       {"generated_at", when_set()},
       {"generated_at_ms", integer()},
       {"commits", strings()},
       {"drivers", strings()},
       {"rule", str()},
       {"instances",
        describe(
            arr(obj({{"name", str()},
                     {"tiles", splits()},
                     {"steps", splits()},
                     opt("paths", describe(arr(byte_range()),
                                           "the extents beyond which, or off whose alignment in bytes, the "
                                           "instance runs a fallback kernel instead of its own")),
                     opt("split", describe(integer(), "blocks sharing one tile's steps; 0: as many as fill the GPU")),
                     opt("limits", describe(arr(obj({{"dim", str()}, {"max", integer()}})),
                                            "the largest extent along a dimension the instance runs at all")),
                     opt("multiples", describe(arr(obj({{"dim", str()}, {"multiple", integer()}})),
                                               "an extent along a dimension the instance runs only in whole "
                                               "multiples of")),
                     opt("byte_limits", describe(arr(byte_range()),
                                                 "the bytes along a dimension (in the table's dtype) outside "
                                                 "which the instance does not run at all"))})),
            "how each instance with a known geometry divides a problem among its thread blocks: "
            "the dimensions cut into tiles and those walked in steps, and where it leaves its own code")},
       {"tables",
        arr(obj({{"op", str()},
                 {"dtype", str()},
                 {"commits", strings()},
                 {"drivers", strings()},
                 {"figures", arr(ref("DispatchFigure"))},
                 opt("dims", describe(arr(obj({{"name", str()},
                                               opt("exact", boolean()),
                                               opt("weight", number()),
                                               opt("align", arr(obj({{"multiple", integer()}, {"penalty", number()}}))),
                                               opt("full_at", str())})),
                                      "the op family's declared rule of each dimension that is not plain: "
                                      "exact, or its weight and alignments in the shape distance; full_at: the "
                                      "dimension whose extent this one bounds in a work estimate (the grouped gemms' "
                                      "valid rows, at most m)")),
                 opt("requires",
                     describe(
                         arr(obj({{"dim", str()},
                                  {"multiple", integer()},
                                  opt("when", json::object{{"type", "object"}, {"additionalProperties", integer()}})})),
                         "the op family's requirements: a shape that misses one is ruled out for every instance"))}))},
       {"checksum",
        describe(str(), "fnv1a64:<16 hex>: FNV-1a 64 of the document's bytes with these 16 digits read as '0'")}});
}

void dashboard(json::object& s) {
  auto ni = [] { return nullable(integer()); };
  auto nn = [] { return nullable(number()); };
  // none: the selected stage of a measured variant that is the fastest at no measured shape.
  auto cell_state = [] { return enm({"na", "ok", "fail", "pending", "none"}); };
  s["DashboardOverview"] =
      obj({{"targets", arr(obj({{"name", str()},
                                {"arch", str()},
                                {"toolkit", str()},
                                {"is_new", boolean()},
                                {"repo", describe(nullable(str()),
                                                  "the library (repository) of the row: a target has one row per "
                                                  "library that built it, the one built last first; null before "
                                                  "any build")},
                                {"progress", ref("StageCounts")},
                                {"families", arr(ref("FamilyStageCounts"))}}))},
           {"runners",
            obj({{"online", integer()}, {"busy", integer()}, {"registered", integer()}, {"online_by_role", counts()}})},
           {"queue", ref("QueueStats")},
           {"pipelines", arr(ref("Pipeline"))},
           {"results", arr(ref("Result"))}});
  s["DashboardEvidence"] = obj({{"id", integer()},   {"url", str()},        {"instance", str()},
                                {"dtype", str()},    {"shape", str()},      {"gpu_model", str()},
                                {"driver", str()},   {"commit", str()},     {"status", result_status()},
                                {"message", str()},  {"max_abs_err", nn()}, {"normwise_rel_err", nn()},
                                {"tolerance", nn()}, {"median_us", nn()},   {"stddev_us", nn()},
                                {"samples", ni()},   {"tflops", nn()},      {"gbps", nn()},
                                {"baseline", str()}, {"ratio", nn()},       {"command", str()}});
  auto evidence = [] { return nullable(ref("DashboardEvidence")); };
  s["DashboardTarget"] = obj(
      {{"target", obj({{"name", str()}, {"arch", str()}, {"toolkit", str()}, {"is_new", boolean()}})},
       {"commit", nullable(str())},
       {"repo", describe(nullable(str()), "the library (repository) the page is of; null before any build")},
       {"repositories", describe(strings(), "every library with a build of the target")},
       {"check_arches", strings()},
       {"progress", ref("StageCounts")},
       {"families", arr(ref("FamilyStageCounts"))},
       {"variants", arr(obj({{"family", str()},
                             {"variant", str()},
                             {"stage", stage()},
                             {"reason", str()},
                             {"cells", obj({{"build", obj({{"state", cell_state()},
                                                           {"status", nullable(build_status())},
                                                           {"record", ni()},
                                                           {"job", ni()},
                                                           {"commit", nullable(str())},
                                                           {"reason", str()},
                                                           {"log", nullable(str())},
                                                           {"command", str()}})},
                                            {"resources", obj({{"state", cell_state()},
                                                               {"registers", ni()},
                                                               {"spill_bytes", ni()},
                                                               {"shared_mem_bytes", ni()},
                                                               {"record", ni()}})},
                                            {"numerics", obj({{"state", cell_state()},
                                                              {"passed", integer()},
                                                              {"failed", integer()},
                                                              {"evidence", evidence()},
                                                              {"failure", evidence()}})},
                                            {"timing", obj({{"state", cell_state()},
                                                            {"measured", integer()},
                                                            {"max_ratio", nn()},
                                                            {"max_tflops", nn()},
                                                            {"max_gbps", nn()},
                                                            {"evidence", evidence()}})},
                                            {"selected", obj({{"state", cell_state()}, {"count", integer()}})}})},
                             {"milestones", obj({{"builds", ni()}, {"numerics_passed", ni()}, {"measured", ni()}})}}))},
       {"burndown", arr(obj({{"time_ms", integer()},
                             {"builds", integer()},
                             {"numerics_passed", integer()},
                             {"measured", integer()}}))}});
  auto side = [] {
    return nullable(obj({{"id", integer()},
                         {"status", result_status()},
                         {"median_us", nullable(number())},
                         {"stddev_us", nullable(number())},
                         {"unstable", boolean()}}));
  };
  s["DashboardCommit"] =
      obj({{"groups",
            arr(obj({{"target", str()},
                     {"gpu_model", str()},
                     {"counts", counts()},
                     {"changes", arr(obj({{"kind", str()},
                                          {"family", str()},
                                          {"variant", str()},
                                          {"instance", str()},
                                          {"dtype", str()},
                                          {"shape", str()},
                                          {"before", side()},
                                          {"after", side()},
                                          {"delta", number()},
                                          {"repo", describe(str(), "the library the result is of; empty for none")}}))},
                     {"truncated", boolean()}}))},
           {"totals", counts()},
           {"rule", str()},
           {"verdict", ref("Verdict")},
           {"commit", describe(json::object{{"anyOf", json::array{ref("Commit"), obj({{"sha", str()}})}}},
                               "the commit, or only its sha when kport has results but no record of it")},
           {"parent", nullable(str())},
           {"baseline", nullable(str())},
           {"results", integer()},
           {"baseline_results", integer()},
           {"bisections", describe(arr(ref("Bisection")),
                                   "bisections this commit is the good, bad, first bad or a probed commit of")}});
  auto column = [](V item) { return arr(std::move(item)); };
  s["DashboardKernel"] = obj(
      {{"instance", str()},
       {"repo", describe(str(), "the library (repository) whose instance this is; empty: an instance of none")},
       {"libraries", describe(arr(str()), "every library publishing an instance of this name, sorted")},
       {"family", str()},
       {"variant", str()},
       {"dtype", str()},
       {"shape", str()},
       {"configs", arr(obj({{"dtype", str()}, {"shape", str()}}))},
       {"series", arr(obj({{"gpu_model", str()},
                           {"peak", nn()},
                           {"unit", enm({"GB/s", "TFLOP/s"})},
                           {"points", describe(obj({{"commit", column(str())},
                                                    {"time_ms", column(integer())},
                                                    {"results", column(integer())},
                                                    {"median_us", column(number())},
                                                    {"low_us", column(number())},
                                                    {"high_us", column(number())},
                                                    {"share", column(nn())},
                                                    {"share_low", column(nn())},
                                                    {"share_high", column(nn())},
                                                    {"ratio", column(nn())},
                                                    {"result", column(integer())}}),
                                               "one array per column, one entry per point")}}))},
       {"noise",
        describe(arr(ref("SeriesNoise")),
                 "each series of this configuration (GPU model, driver): its A/A noise and minimum detectable effect")},
       {"peak_rule", str()}});
  s["DashboardRunner"] = extend(s["Runner"], {{"job", nullable(ref("Job"))}});
}

// The pipeline and job pages and the re-runs (routes_pipeline_pages.cpp, routes_pipelines.cpp).
void pipeline_pages(json::object& s) {
  s["JobView"] = extend(
      s["Job"],
      {{"runner_name", describe(nullable(str()), "the runner holding it, or the last one that did")},
       {"duration_ms", describe(nullable(integer()), "from the first claim of this run to its end, or to now")},
       {"wait",
        describe(nullable(str()),
                 "why a queued job waits: its build, a backoff, no online runner that can take it, the jobs ahead")},
       {"log", describe(str(), "the log's path in this API (GET, ?after=SEQ)")}});
  s["DashboardPipeline"] =
      obj({{"pipeline", ref("Pipeline")},
           {"commit", nullable(ref("Commit"))},
           {"verdict", ref("Verdict")},
           {"jobs", describe(arr(ref("JobView")), "oldest first")},
           {"deliveries", describe(arr(obj({{"id", integer()},
                                            {"kind", enm({"check_run", "commit_status", "webhook"})},
                                            {"event", str()},
                                            {"state", enm({"pending", "delivered", "failed"})},
                                            {"attempts", integer()},
                                            {"max_attempts", integer()},
                                            {"last_status", nullable(integer())},
                                            {"last_error", str()}})),
                                   "what was sent about it (newest first, at most 50)")}});
  s["DashboardJob"] = obj({{"job", ref("JobView")}, {"pipeline", nullable(ref("Pipeline"))}});
  s["PipelineRerun"] = obj(
      {{"pipeline", integer()}, {"jobs_requeued", describe(integers(), "the failed and cancelled jobs queued again")}});
}

}  // namespace

json::object openapi_schemas() {
  json::object s;
  s["Error"] = describe(
      obj({{"error",
            obj({{"code", enm({"invalid_argument", "bad_json", "unauthorized", "forbidden", "not_found",
                               "method_not_allowed", "request_timeout", "conflict", "gone", "payload_too_large",
                               "unprocessable", "too_many_requests", "unavailable", "internal"})},
                 {"message", describe(str(), "what was wrong, with which input, and what to do")}})}}),
      "Every error answer");
  catalog(s);
  pipelines(s);
  runners(s);
  results(s);
  best(s);
  dashboard(s);
  s["TargetList"] = items_of("Target");
  s["KernelInstanceList"] = items_of("KernelInstance");
  s["GpuModelList"] = items_of("GpuModel");
  s["RepositoryList"] = items_of("Repository");
  s["ForgeConnectionInput"] = body(
      {{"kind", enm({"github", "gitea", "gitlab"})},
       {"api_url",
        describe(str(),
                 "the API root: https://api.github.com, https://HOST/api/v1 (Gitea), https://HOST/api/v4 (GitLab)")},
       {"project", describe(str(), "owner/name (GitHub, Gitea), the project id or path (GitLab)")},
       opt("token_file",
           describe(str(),
                    "a file the coordinator reads the token from when it sends; the token is never stored. Give it, "
                    "or (GitHub only) app_id, installation_id and private_key_file, not both")),
       opt("app_id", describe(integer(), "a GitHub App's id (>= 1): the connection authenticates as the app")),
       opt("installation_id",
           describe(integer(), "the app's installation on the repository's account (>= 1), with app_id")),
       opt("private_key_file",
           describe(str(),
                    "with app_id: a file holding the app's private key (PEM, RSA, unencrypted), readable by the "
                    "coordinator's user only (mode 0600, else 422); read when an installation token is due, never "
                    "stored; the installation tokens it brings stay in memory")),
       opt("mode", describe(enm({"check", "status"}),
                            "check: GitHub check runs (the default on GitHub); status: commit statuses"))});
  s["ForgeConnection"] = obj(
      {{"repo", str()},
       {"kind", enm({"github", "gitea", "gitlab"})},
       {"api_url", str()},
       {"project", str()},
       {"mode", enm({"check", "status"})},
       {"auth", describe(enm({"token", "github_app"}), "token: token_file; github_app: a GitHub App's credentials")},
       {"token_file", describe(nullable(str()), "null for a GitHub App")},
       {"app_id", describe(nullable(integer()), "a GitHub App's id; null for a token")},
       {"installation_id", describe(nullable(integer()), "the GitHub App's installation; null for a token")},
       {"private_key_file",
        describe(nullable(str()), "the file of the GitHub App's private key (never the key); null for a token")},
       {"state", describe(enm({"ok", "broken"}),
                          "broken: the forge refused the token (or the GitHub App's JWT or installation token); its "
                          "deliveries wait until the connection is put again")},
       {"broken_reason", nullable(str())},
       {"broken_at", when()},
       {"created_at", when_set()},
       {"updated_at", when_set()}});
  s["ForgeConnectionList"] = items_of("ForgeConnection");
  s["Delivery"] = obj(
      {{"id", describe(integer(), "also the X-Kport-Delivery header of a webhook, the same on every retry")},
       {"kind", enm({"check_run", "commit_status", "webhook"})},
       {"event", describe(str(),
                          "pipeline.queued, pipeline.in_progress, pipeline.completed, verdict, regression, "
                          "bringup.milestone or bringup.regression")},
       {"repo", nullable(str())},
       {"pipeline", nullable(integer())},
       {"commit", str()},
       {"method", str()},
       {"url",
        describe(
            str(),
            "a forge call's path under the connection's api_url; a webhook's scheme and host (its path is not shown)")},
       {"body", describe(any_json(), "the JSON sent (a check run's POST adds head_sha)")},
       {"state", enm({"pending", "delivered", "failed"})},
       {"attempts", integer()},
       {"max_attempts", integer()},
       {"next_attempt_at", describe(when(), "null unless pending")},
       {"last_status", describe(nullable(integer()), "the HTTP status of the last answer; null: none came")},
       {"last_error", describe(str(), "why the last attempt did not deliver, or why it was given up")},
       {"created_at", when_set()},
       {"finished_at", when()}});
  s["DeliveryPage"] = page_of("Delivery");
  pipeline_pages(s);
  s["RevalidationList"] = items_of("Revalidation");
  s["RunnerList"] = items_of("Runner");
  s["DashboardRunnerList"] = items_of("DashboardRunner");
  s["PipelinePage"] = page_of("Pipeline");
  s["JobPage"] = page_of("Job");
  s["ResultPage"] = page_of("Result");
  s["BuildRecordPage"] = page_of("BuildRecord");
  // ---- bisections (routes_bisections.cpp) ----
  auto bisect_kind = [] { return enm({"perf_regression", "numerics_failure", "build_failure"}); };
  s["BisectionInput"] = body({{"kind", bisect_kind()},
                              {"target", str()},
                              {"bad", describe(str(), "the bad commit: sha, short sha or branch")},
                              opt("gpu_model", describe(str(), "required unless kind is build_failure")),
                              opt("good", describe(str(), "default: the bad commit's validated ancestor")),
                              opt("cases", describe(strings(),
                                                    "'INSTANCE DTYPE SHAPE' (FAMILY.VARIANT for a build failure); "
                                                    "default: the cases the bad commit's verdict counts"))});
  s["BisectionCancel"] = body({opt("reason", describe(str(), "why, kept in the bisection's summary"))});
  s["Bisection"] = obj(
      {{"id", integer()},
       {"kind", bisect_kind()},
       {"origin", enm({"auto", "manual"})},
       {"state", describe(enm({"running", "done", "failed", "cancelled"}),
                          "done: found (or what moved instead); failed: stopped (a probe failed on the machine "
                          "twice, too many probes); cancelled: by hand or a probe cancelled; the summary says which")},
       {"repo", str()},
       {"target", str()},
       {"gpu_model", nullable(str())},
       {"arch", str()},
       {"driver", describe(nullable(str()),
                           "the driver every probe's check is pinned to: the bad end's, where a runner of the "
                           "GPU model reports it")},
       {"good", str()},
       {"bad", str()},
       {"commits", describe(strings(), "the good commit first, then each first parent up to the bad one")},
       {"cases", arr(obj({{"key", str()},
                          {"family", str()},
                          {"variant", str()},
                          opt("instance", str()),
                          opt("dtype", str()),
                          opt("shape", str()),
                          opt("good_us", nullable(number())),
                          opt("bad_us", nullable(number())),
                          opt("sigma", describe(number(), "the series' A/A noise of one figure, relative"))}))},
       {"cause", describe(nullable(enm({"code", "toolkit", "driver", "runner", "noise"})), "set once done")},
       {"first_bad", nullable(str())},
       {"last_good", nullable(str())},
       {"suspects", describe(strings(), "the first bad commit and the unjudged commits before it that could be it")},
       {"effect", describe(nullable(number()), "timing: the first bad commit's figure over the last good one's, - 1")},
       {"uncertainty", describe(nullable(number()), "+- 95 % of the effect")},
       {"effects", arr(obj({{"case", str()},
                            {"good_us", number()},
                            {"bad_us", number()},
                            {"effect", number()},
                            {"uncertainty", number()}}))},
       {"judged", arr(obj({{"commit", str()}, {"outcome", enm({"good", "bad", "ambiguous", "skipped"})}}))},
       {"summary", str()},
       {"probes", arr(obj({{"pipeline", integer()},
                           {"commit", str()},
                           {"status", enm({"queued", "running", "succeeded", "failed", "cancelled"})},
                           {"created", when_set()}}))},
       {"created", when_set()},
       {"updated", when_set()},
       {"finished", when()}});
  s["BisectionOpened"] = extend(s["Bisection"], {{"opened", boolean()}});
  s["BisectionPage"] = obj({{"items", arr(ref("Bisection"))}, {"next_cursor", nullable(integer())}});
  return s;
}

}  // namespace kport::coordinator
