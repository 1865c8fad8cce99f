// A bisection asked for by hand (POST /api/v1/bisections): what kind of change to look
// for (perf_regression, numerics_failure, build_failure), on which target and GPU model,
// between which revisions, and optionally on which cases. `kport bisect start` writes
// it; the coordinator reads it, resolves the revisions and checks the kind. The wire form
// is the contract the OpenAPI document describes (`BisectionInput`). The answer (a
// bisection as the coordinator shows it) is not typed here.
//
// Reading is strict: a field of the wrong type or a missing kind, target or bad revision
// is an invalid_argument Error naming the field ("field 'bad' is required (a string)");
// unknown fields are ignored. Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "kport/api/fields.h"

namespace kport::api {

struct BisectionRequest {
  std::string kind;                      // perf_regression, numerics_failure, build_failure
  std::string target;                    // sm_90a
  std::string bad;                       // the bad commit: sha, short sha or branch
  std::optional<std::string> gpu_model;  // required unless kind is build_failure
  std::optional<std::string> good;       // none: the bad commit's validated ancestor
  // "INSTANCE DTYPE SHAPE" each (FAMILY.VARIANT for a build failure); none: the cases the
  // bad commit's verdict counts
  std::optional<std::vector<std::string>> cases;
};

// kind, target and bad, then what was given of gpu_model, good and cases.
inline boost::json::object to_json(const BisectionRequest& r) {
  boost::json::object o{{"kind", r.kind}, {"target", r.target}, {"bad", r.bad}};
  if (r.gpu_model) o["gpu_model"] = *r.gpu_model;
  if (r.good) o["good"] = *r.good;
  if (r.cases) {
    boost::json::array cases;
    for (const auto& c : *r.cases) cases.emplace_back(c);
    o["cases"] = std::move(cases);
  }
  return o;
}

inline BisectionRequest read_bisection_request(Fields& f) {
  BisectionRequest r;
  r.kind = f.str("kind", 32);
  r.target = f.str("target", 64);
  r.gpu_model = f.opt_str("gpu_model", 256);
  r.bad = f.str("bad", 256);
  r.good = f.opt_str("good", 256);
  const boost::json::value* cases = f.source().if_contains("cases");
  std::vector<std::string> list = f.str_list("cases", 64);
  if (cases && !cases->is_null()) r.cases = std::move(list);
  return r;
}

inline Result<BisectionRequest> parse_bisection_request(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_bisection_request);
}

}  // namespace kport::api
