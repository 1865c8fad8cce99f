// A job's payload: the instructions a runner follows beyond kind, commit and target, and
// why the job exists (its purpose), read once from the stored JSON instead of searched
// for as text. The coordinator's planners write payloads with `to_json`; the runner and
// the verdict read them with `parse_job_payload`.
//
// Purposes (docs/DESIGN.md, glossary):
//  - check:           a commit's check of its build (spawned by the build), or a build;
//  - revalidate:      {"revalidate": {gpu_model, driver, previous_driver}}: the fleet changed;
//  - remeasure:       {"remeasure": true}: a verdict measures a suspected slowdown again;
//  - measure_request: {"best_request": {gpu_model, op, dtype, shape}}: a user asked for a shape.
// A payload naming two purposes is an Error. What to run: "instances" (names), "filter"
// (a substring of the name), "families" (only instances of these families),
// "families_except" (only instances of other families), "cases" ([{family, dtype,
// shape}]: exactly those, for every instance of the family), "bench" (time what passed);
// "shard" ({index, count}: the part of one arch's check this job is, when a build split
// it over several GPUs by family, porting/check_shards.h); a build's "repo_url",
// "kernels_dir" and "variants" (["family.variant"]: build only those, as a bisection's
// probe does); a re-measure's "paired" ({commit, harness_sha256}: the baseline's harness,
// timed in rounds interleaved with the job's own, A/B/A/B on the same GPU). A field of the wrong type is an Error naming it ("field 'payload.cases[0]
// .dtype' must be a string"); other fields (a manual pipeline's own) are kept in `extra`.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/api/fields.h"
#include "kport/common/result.h"

namespace kport::api {

enum class JobPurpose { check, revalidate, remeasure, measure_request };

inline std::string_view to_string(JobPurpose p) noexcept {
  switch (p) {
    case JobPurpose::check: return "check";
    case JobPurpose::revalidate: return "revalidate";
    case JobPurpose::remeasure: return "remeasure";
    case JobPurpose::measure_request: return "measure_request";
  }
  return "check";
}

struct RevalidationAsk {
  std::string gpu_model, driver;
  std::string previous_driver;  // "" for a GPU model seen for the first time
};

// The best request a measure-request job answers (best_requests names it by id as well).
struct BestRequestRef {
  std::string gpu_model, op, dtype;
  std::string shape;  // canonical (porting::Shape::canonical)
};

struct CaseAsk {
  std::string family, dtype;
  std::string shape;  // in the family's own order, as the harness takes it
};

// The harness a re-measure times interleaved with its own (the baseline commit's).
struct PairedHarness {
  std::string commit, harness_sha256;
};

// Which part of one arch's check a job is: shard `index` (0-based) of `count`.
struct CheckShardRef {
  std::int64_t index = 0, count = 1;
};

struct JobPayload {
  JobPurpose purpose = JobPurpose::check;
  std::optional<RevalidationAsk> revalidate;   // purpose revalidate
  std::optional<BestRequestRef> best_request;  // purpose measure_request
  std::optional<std::vector<CaseAsk>> cases;   // exactly these cases; never empty when set
  std::vector<std::string> instances;          // only these instances; empty: all
  std::string filter;                          // only instances whose name contains it
  std::vector<std::string> families;           // only instances of these families; empty: any
  std::vector<std::string> families_except;    // no instance of these families
  std::optional<CheckShardRef> shard;          // this job's part of its arch's check
  std::optional<bool> bench;                   // time what passed; unset: the runner's default
  std::string repo_url, kernels_dir;           // build: where to fetch, where the kernels are
  std::vector<std::string> variants;           // build: only these "family.variant"; empty: all
  std::optional<PairedHarness> paired;         // re-measure: time against this harness, A/B/A/B
  boost::json::object extra;                   // fields of no meaning to kport, kept as sent
};

inline boost::json::object to_json(const JobPayload& p) {
  boost::json::object o = p.extra;
  auto names = [](const std::vector<std::string>& v) {
    boost::json::array a;
    for (const auto& i : v) a.emplace_back(i);
    return a;
  };
  if (p.revalidate)
    o["revalidate"] = boost::json::object{{"gpu_model", p.revalidate->gpu_model},
                                          {"driver", p.revalidate->driver},
                                          {"previous_driver", p.revalidate->previous_driver}};
  if (p.purpose == JobPurpose::remeasure) o["remeasure"] = true;
  if (p.cases) {
    boost::json::array a;
    for (const auto& c : *p.cases)
      a.push_back(boost::json::object{{"family", c.family}, {"dtype", c.dtype}, {"shape", c.shape}});
    o["cases"] = std::move(a);
  }
  if (!p.instances.empty()) o["instances"] = names(p.instances);
  if (!p.filter.empty()) o["filter"] = p.filter;
  if (!p.families.empty()) o["families"] = names(p.families);
  if (!p.families_except.empty()) o["families_except"] = names(p.families_except);
  if (p.shard) o["shard"] = boost::json::object{{"index", p.shard->index}, {"count", p.shard->count}};
  if (p.bench) o["bench"] = *p.bench;
  if (p.best_request)
    o["best_request"] = boost::json::object{{"gpu_model", p.best_request->gpu_model},
                                            {"op", p.best_request->op},
                                            {"dtype", p.best_request->dtype},
                                            {"shape", p.best_request->shape}};
  if (!p.repo_url.empty()) o["repo_url"] = p.repo_url;
  if (!p.kernels_dir.empty()) o["kernels_dir"] = p.kernels_dir;
  if (p.paired)
    o["paired"] = boost::json::object{{"commit", p.paired->commit}, {"harness_sha256", p.paired->harness_sha256}};
  if (!p.variants.empty()) o["variants"] = names(p.variants);
  return o;
}

inline Result<JobPayload> parse_job_payload(const boost::json::object& o, std::string where = "payload") {
  Fields f(o, where);
  JobPayload p;
  int purposes = 0;
  if (const auto* r = f.object("revalidate")) {
    Fields rf(*r, f.path("revalidate"));
    p.revalidate =
        RevalidationAsk{rf.str("gpu_model", 256), rf.str("driver", 64), rf.opt_str("previous_driver", 64).value_or("")};
    if (!rf.ok()) f.fail_with(rf.error());
    p.purpose = JobPurpose::revalidate;
    ++purposes;
  }
  if (f.boolean("remeasure", false)) {
    p.purpose = JobPurpose::remeasure;
    ++purposes;
  }
  if (const auto* b = f.object("best_request")) {
    Fields bf(*b, f.path("best_request"));
    p.best_request =
        BestRequestRef{bf.str("gpu_model", 256), bf.str("op", 64), bf.str("dtype", 16), bf.str("shape", 256)};
    if (!bf.ok()) f.fail_with(bf.error());
    p.purpose = JobPurpose::measure_request;
    ++purposes;
  }
  if (purposes > 1 && f.ok())
    f.fail_with(make_error(Errc::invalid_argument,
                           "field '" + where + "' names more than one of revalidate, remeasure and best_request"));
  if (const auto* cs = f.array("cases")) {
    p.cases.emplace();
    for (std::size_t i = 0; i < cs->size() && f.ok(); ++i) {
      const std::string at = f.path("cases[" + std::to_string(i) + "]");
      if (!(*cs)[i].is_object()) {
        f.fail_with(make_error(Errc::invalid_argument, "field '" + at + "' must be an object {family, dtype, shape}"));
        break;
      }
      Fields cf((*cs)[i].as_object(), at);
      p.cases->push_back(CaseAsk{cf.str("family", 64), cf.str("dtype", 16), cf.str("shape", 256)});
      if (!cf.ok()) f.fail_with(cf.error());
    }
    if (f.ok() && p.cases->empty()) f.fail("cases", "must name at least one case");
  }
  p.instances = f.str_list("instances", 100000);
  p.filter = f.opt_str("filter", 256).value_or("");
  p.families = f.str_list("families", 10000);
  p.families_except = f.str_list("families_except", 10000);
  if (const auto* sh = f.object("shard")) {
    Fields sf(*sh, f.path("shard"));
    const auto index = sf.opt_int("index", 0, 1 << 20), count = sf.opt_int("count", 1, 1 << 20);
    if (sf.ok() && (!index || !count)) sf.fail(index ? "count" : "index", "must be given");
    if (sf.ok()) p.shard = CheckShardRef{*index, *count};
    if (!sf.ok()) f.fail_with(sf.error());
    if (f.ok() && p.shard && p.shard->index >= p.shard->count) f.fail("shard", "must have index below count");
  }
  if (const auto* b = o.if_contains("bench"); b && !b->is_null()) p.bench = f.boolean("bench", true);
  p.repo_url = f.opt_str("repo_url", 4096).value_or("");
  p.kernels_dir = f.opt_str("kernels_dir", 4096).value_or("");
  p.variants = f.str_list("variants", 10000);
  if (const auto* pr = f.object("paired")) {
    Fields pf(*pr, f.path("paired"));
    p.paired = PairedHarness{pf.str("commit", 64), pf.str("harness_sha256", 64)};
    if (!pf.ok()) f.fail_with(pf.error());
  }
  if (!f.ok()) return f.error();
  for (const auto& [k, v] : o)
    if (k != "revalidate" && k != "remeasure" && k != "best_request" && k != "cases" && k != "instances" &&
        k != "filter" && k != "families" && k != "families_except" && k != "shard" && k != "bench" && k != "repo_url" &&
        k != "kernels_dir" && k != "variants" && k != "paired")
      p.extra[k] = v;
  return p;
}

// The payload as the store keeps it (text; "" and "{}" are an empty payload).
inline Result<JobPayload> parse_job_payload(std::string_view text, std::string where = "payload") {
  if (text.empty()) return JobPayload{};
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) return make_error(Errc::invalid_argument, "field '" + where + "' must be a JSON object");
  return parse_job_payload(v.as_object(), std::move(where));
}

}  // namespace kport::api
