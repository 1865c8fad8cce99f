// Revalidations: a (GPU model, driver) a runner reported for the first time, measured
// again and compared with the previous driver's figures. The watcher's fleet watch writes
// the request (`RevalidationRequest`, POST /api/v1/revalidations) and reads the listing
// (`RevalidationList`, GET /api/v1/revalidations) and the answer (`RevalidationAnswer`);
// the coordinator reads the request and writes both. The wire forms are the contracts the
// OpenAPI document describes (`RevalidationInput`, `Revalidation`, `RevalidationOpened`).
//
// Reading is strict: a field of the wrong type, a status kport does not know or a missing
// GPU model or driver is an invalid_argument Error naming the field ("field
// 'items[0].driver' is required (a string)"); unknown fields are ignored. Values; no
// thread affinity.
#pragma once

#include <boost/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/api/fields.h"
#include "kport/api/verdict.h"

namespace kport::api {

struct RevalidationRequest {
  std::string gpu_model;  // as a GPU runner registered it
  std::string driver;
};

inline boost::json::object to_json(const RevalidationRequest& r) {
  return boost::json::object{{"gpu_model", r.gpu_model}, {"driver", r.driver}};
}

inline RevalidationRequest read_revalidation_request(Fields& f) {
  RevalidationRequest r;
  r.gpu_model = f.str("gpu_model", 128);
  r.driver = f.str("driver", 64);
  return r;
}

inline Result<RevalidationRequest> parse_revalidation_request(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_revalidation_request);
}

// A revalidation and how it stands: pending while its pipeline runs, pass or fail once it
// ended (fail: a reason against the previous driver), nothing_to_check without a pipeline.
struct Revalidation {
  std::string gpu_model, driver, arch;
  std::optional<std::string> previous_driver;  // none for a GPU model seen for the first time
  std::optional<std::int64_t> pipeline;
  // Results compared, present only where there is a previous driver to compare with.
  std::optional<std::int64_t> compared_results, compared_previous_results;
  std::string status;  // pending, pass, fail, nothing_to_check
  std::vector<VerdictReason> reasons;
};

inline constexpr std::array<std::string_view, 4> k_revalidation_statuses{"pending", "pass", "fail", "nothing_to_check"};

inline boost::json::object to_json(const Revalidation& r) {
  boost::json::object o{{"gpu_model", r.gpu_model},
                        {"driver", r.driver},
                        {"arch", r.arch},
                        {"previous_driver", detail::or_null(r.previous_driver)},
                        {"pipeline", detail::or_null(r.pipeline)}};
  if (r.compared_results && r.compared_previous_results)
    o["compared"] =
        boost::json::object{{"results", *r.compared_results}, {"previous_results", *r.compared_previous_results}};
  o["status"] = r.status;
  o["reasons"] = write_list(r.reasons, [](const VerdictReason& x) { return to_json(x); });
  return o;
}

inline Revalidation read_revalidation(Fields& f) {
  Revalidation r;
  r.gpu_model = f.str("gpu_model", 256);
  r.driver = f.str("driver", 64);
  r.arch = f.opt_str("arch", 16).value_or("");
  r.previous_driver = f.opt_str("previous_driver", 64);
  r.pipeline = f.opt_int("pipeline", 1, INT64_MAX);
  struct Compared {
    std::optional<std::int64_t> results, previous;
  };
  const Compared c = read_object(f, "compared", [](Fields& cf) {
    return Compared{cf.opt_int("results", 0, INT64_MAX), cf.opt_int("previous_results", 0, INT64_MAX)};
  });
  r.compared_results = c.results;
  r.compared_previous_results = c.previous;
  r.status = f.opt_str("status", 32).value_or("");
  bool known = false;
  for (auto s : k_revalidation_statuses) known = known || s == r.status;
  if (f.ok() && !known) f.fail("status", "must be pending, pass, fail or nothing_to_check");
  r.reasons = read_list(f, "reasons", read_verdict_reason);
  return r;
}

struct RevalidationList {
  std::vector<Revalidation> items;
};

inline boost::json::object to_json(const RevalidationList& l) {
  return boost::json::object{{"items", write_list(l.items, [](const Revalidation& r) { return to_json(r); })}};
}

inline RevalidationList read_revalidation_list(Fields& f) {
  return RevalidationList{read_list(f, "items", read_revalidation)};
}

inline Result<RevalidationList> parse_revalidation_list(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_revalidation_list);
}

// The answer to a request: opened (201) with the revalidation and the jobs queued, or not
// (200: the pair was revalidated before) naming the pair alone.
struct RevalidationAnswer {
  bool opened = false;
  Revalidation revalidation;  // opened: all of it; otherwise its gpu_model and driver
  std::int64_t jobs = 0;      // opened: the check jobs queued
};

inline boost::json::object to_json(const RevalidationAnswer& a) {
  if (!a.opened)
    return boost::json::object{
        {"opened", false}, {"gpu_model", a.revalidation.gpu_model}, {"driver", a.revalidation.driver}};
  boost::json::object o = to_json(a.revalidation);
  o["opened"] = true;
  o["jobs"] = a.jobs;
  return o;
}

inline RevalidationAnswer read_revalidation_answer(Fields& f) {
  RevalidationAnswer a;
  a.opened = f.boolean("opened", false);
  if (!f.ok()) return a;
  if (a.opened) {
    a.revalidation = read_revalidation(f);
    a.jobs = f.opt_int("jobs", 0, INT64_MAX).value_or(0);
  } else {
    a.revalidation.gpu_model = f.str("gpu_model", 256);
    a.revalidation.driver = f.str("driver", 64);
  }
  return a;
}

inline Result<RevalidationAnswer> parse_revalidation_answer(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_revalidation_answer);
}

}  // namespace kport::api
