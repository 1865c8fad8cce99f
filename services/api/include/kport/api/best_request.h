// Measure requests: asking kport to measure a shape /api/v1/best answered without a
// measurement of it, and following that request. `kport best-request` writes the request
// (`MeasureRequestInput`, POST /api/v1/best/requests) and reads its answer
// (`MeasureRequestAnswer`: queued, coalesced with an open request, or already measured),
// one request (`MeasureRequestInfo`, GET /api/v1/best/requests/{id}) and the listing
// (`MeasureRequestPage`, GET /api/v1/best/requests: the requests and the most asked
// unmeasured shapes); the coordinator reads the request and writes the answers. The wire
// forms are the contracts the OpenAPI document describes (`MeasureRequestInput`,
// `MeasureRequest`, `MeasureRequestOpened`, `MeasureAlreadyMeasured`,
// `MeasureRequestPage`).
//
// Reading is strict: a field of the wrong type, a missing field, a state or outcome kport
// does not know is an invalid_argument Error naming the field ("field 'items[0].state'
// must be queued, running, measured or failed"); unknown fields are ignored. Whether the
// op, dtype and shape make a case is the coordinator's to say, not the reader's. Values; no
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
#include "kport/api/job.h"

namespace kport::api {

// The question asked: a GPU model (as its runners registered it), an op (the family), a
// dtype and a shape ("m=3000,n=3000,k=3000"), and optionally the library (repository)
// whose instances to measure, needed where several libraries run the op. Answers name it
// by the same fields, the shape canonical (keys sorted) and the library as resolved.
struct MeasureRequestInput {
  std::string gpu, op, dtype, shape;
  std::string repo = {};  // empty: absent on the wire
};

inline boost::json::object to_json(const MeasureRequestInput& k) {
  boost::json::object o{{"gpu", k.gpu}, {"op", k.op}, {"dtype", k.dtype}, {"shape", k.shape}};
  if (!k.repo.empty()) o["repo"] = k.repo;
  return o;
}

inline MeasureRequestInput read_measure_request_input(Fields& f) {
  MeasureRequestInput k;
  k.gpu = f.str("gpu", 256);
  k.op = f.str("op", 32);
  k.dtype = f.str("dtype", 32);
  k.shape = f.str("shape", 256);
  k.repo = f.opt_str("repo", 128).value_or("");
  return k;
}

// The key of an answer: the question's fields with `repo` always written, "" for a
// request of no library (one made before kport told libraries apart).
inline boost::json::object answer_key_json(const MeasureRequestInput& k) {
  boost::json::object o = to_json(k);
  if (k.repo.empty()) o["repo"] = "";
  return o;
}

inline Result<MeasureRequestInput> parse_measure_request_input(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_measure_request_input);
}

// The measured answer at the exact shape: the recommended instance and the results behind it.
struct MeasuredBest {
  std::string best;
  std::vector<std::int64_t> results;
};

inline boost::json::object to_json(const MeasuredBest& m) {
  boost::json::array ids;
  for (auto id : m.results) ids.emplace_back(id);
  return boost::json::object{{"best", m.best}, {"results", std::move(ids)}};
}

inline MeasuredBest read_measured_best(Fields& f) {
  MeasuredBest m;
  m.best = f.str("best", 256);
  if (const boost::json::array* ids = f.array("results")) {
    for (std::size_t i = 0; i < ids->size() && f.ok(); ++i) {
      if (!(*ids)[i].is_int64() || (*ids)[i].as_int64() < 1) {
        f.fail_with(Error{Errc::invalid_argument,
                          "field '" + f.path("results") + "[" + std::to_string(i) + "]' must be a result id (>= 1)"});
        break;
      }
      m.results.push_back((*ids)[i].as_int64());
    }
  } else if (f.ok()) {
    f.fail("results", "is required (an array of result ids)");
  }
  return m;
}

inline constexpr std::array<std::string_view, 4> k_measure_states{"queued", "running", "measured", "failed"};

// A request and how it stands: queued or running while its job does, measured once the
// shape has a measured answer, failed (with the reason) when its job failed without one.
struct MeasureRequestInfo {
  MeasureRequestInput key;  // repo: the library measured, "" for a request of none
  std::int64_t id = 0;
  std::string state;   // k_measure_states
  std::string reason;  // why it failed; absent from the wire when empty
  std::int64_t job = 0;
  std::string job_status;
  std::int64_t pipeline = 0;
  std::string target, commit;
  std::int64_t requests = 0;  // times requested while open
  std::int64_t asked = 0;     // times /api/v1/best answered the key without a measurement
  std::string created, updated;
  std::optional<MeasuredBest> measured;  // present once measured
  std::string answer;                    // the /api/v1/best URL of the key
};

inline boost::json::object to_json(const MeasureRequestInfo& r) {
  boost::json::object o = answer_key_json(r.key);
  o["id"] = r.id;
  o["state"] = r.state;
  if (!r.reason.empty()) o["reason"] = r.reason;
  o["job"] = r.job;
  o["job_status"] = r.job_status;
  o["pipeline"] = r.pipeline;
  o["target"] = r.target;
  o["commit"] = r.commit;
  o["requests"] = r.requests;
  o["asked"] = r.asked;
  o["created"] = r.created;
  o["updated"] = r.updated;
  if (r.measured) o["measured"] = to_json(*r.measured);
  o["answer"] = r.answer;
  return o;
}

namespace detail {
inline void check_one_of(Fields& f, std::string_view key, const std::string& value,
                         const std::array<std::string_view, 4>& known, std::string_view expectation) {
  bool found = false;
  for (auto s : known) found = found || s == value;
  if (f.ok() && !found) f.fail(key, expectation);
}
}  // namespace detail

inline MeasureRequestInfo read_measure_request_info(Fields& f) {
  MeasureRequestInfo r;
  r.key = read_measure_request_input(f);
  r.id = f.integer("id");
  r.state = f.str("state", 32);
  detail::check_one_of(f, "state", r.state, k_measure_states, "must be queued, running, measured or failed");
  r.reason = f.opt_str("reason", 65536).value_or("");
  r.job = f.integer("job");
  r.job_status = f.str("job_status", 32);
  r.pipeline = f.integer("pipeline");
  r.target = f.str("target", 64);
  r.commit = f.str("commit", 64);
  r.requests = f.integer("requests");
  r.asked = f.integer("asked");
  r.created = f.str("created", 64);
  r.updated = f.str("updated", 64);
  bool measured = false;
  MeasuredBest m = read_object(f, "measured", read_measured_best, &measured);
  if (measured) r.measured = std::move(m);
  r.answer = f.str("answer", 2048);
  return r;
}

inline Result<MeasureRequestInfo> parse_measure_request_info(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_measure_request_info);
}

// ---- the answer to a request ----------------------------------------------------------

enum class MeasureOutcome { queued, coalesced, already_measured };

inline constexpr std::array<std::string_view, 3> k_measure_outcomes{"queued", "coalesced", "already_measured"};

inline std::string_view to_string(MeasureOutcome o) noexcept { return k_measure_outcomes[static_cast<std::size_t>(o)]; }

inline std::optional<MeasureOutcome> parse_measure_outcome(std::string_view s) noexcept {
  for (std::size_t i = 0; i < k_measure_outcomes.size(); ++i)
    if (k_measure_outcomes[i] == s) return static_cast<MeasureOutcome>(i);
  return std::nullopt;
}

// The case a queued (or coalesced) request measures: the family, the dtype and the shape
// in the family's order, as the job's payload names it.
struct MeasureCase {
  std::string family, dtype, shape;
};

// queued (201: one pinned check job) or coalesced (200: the open request of the same key,
// nothing queued): the request and its case. already_measured (200): the key, the measured
// answer and its URL alone, `state` measured and `job` null on the wire.
struct MeasureRequestAnswer {
  MeasureOutcome outcome = MeasureOutcome::queued;
  MeasureRequestInfo request;  // already_measured: its key, measured and answer
  MeasureCase queued_case;     // queued, coalesced
};

inline boost::json::object to_json(const MeasureRequestAnswer& a) {
  if (a.outcome == MeasureOutcome::already_measured) {
    boost::json::object o = answer_key_json(a.request.key);
    o["outcome"] = to_string(a.outcome);
    o["state"] = "measured";
    o["job"] = nullptr;
    o["measured"] = to_json(a.request.measured.value_or(MeasuredBest{}));
    o["answer"] = a.request.answer;
    return o;
  }
  boost::json::object o = to_json(a.request);
  o["outcome"] = to_string(a.outcome);
  o["case"] = boost::json::object{
      {"family", a.queued_case.family}, {"dtype", a.queued_case.dtype}, {"shape", a.queued_case.shape}};
  return o;
}

inline MeasureRequestAnswer read_measure_request_answer(Fields& f) {
  MeasureRequestAnswer a;
  const std::string outcome = f.str("outcome", 32);
  if (!f.ok()) return a;
  if (auto parsed = parse_measure_outcome(outcome)) {
    a.outcome = *parsed;
  } else {
    f.fail("outcome", "must be queued, coalesced or already_measured");
    return a;
  }
  if (a.outcome == MeasureOutcome::already_measured) {
    a.request.key = read_measure_request_input(f);
    a.request.state = f.str("state", 32);
    if (f.ok() && a.request.state != "measured") f.fail("state", "must be measured when already_measured");
    bool measured = false;
    MeasuredBest m = read_object(f, "measured", read_measured_best, &measured);
    if (f.ok() && !measured) f.fail("measured", "is required (an object)");
    a.request.measured = std::move(m);
    a.request.answer = f.str("answer", 2048);
    return a;
  }
  a.request = read_measure_request_info(f);
  bool present = false;
  a.queued_case = read_object(
      f, "case",
      [](Fields& cf) {
        return MeasureCase{cf.str("family", 64), cf.str("dtype", 32), cf.str("shape", 256)};
      },
      &present);
  if (f.ok() && !present) f.fail("case", "is required (an object)");
  return a;
}

inline Result<MeasureRequestAnswer> parse_measure_request_answer(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_measure_request_answer);
}

// ---- the listing ----------------------------------------------------------------------

// A question /api/v1/best answered without a measurement, how often and when (of no
// library: `key.repo` is empty).
struct MeasureAsk {
  MeasureRequestInput key;
  std::int64_t asks = 0;
  std::string first_asked, last_asked;
};

inline boost::json::object to_json(const MeasureAsk& a) {
  boost::json::object o = to_json(a.key);
  o["asks"] = a.asks;
  o["first_asked"] = a.first_asked;
  o["last_asked"] = a.last_asked;
  return o;
}

inline MeasureAsk read_measure_ask(Fields& f) {
  MeasureAsk a;
  a.key = read_measure_request_input(f);
  a.asks = f.integer("asks");
  a.first_asked = f.str("first_asked", 64);
  a.last_asked = f.str("last_asked", 64);
  return a;
}

// The requests, newest first (a page: `next_cursor` is the `before` of the next one, null
// on the last), and the questions most often answered without a measurement.
struct MeasureRequestPage {
  std::vector<MeasureRequestInfo> items;
  std::optional<std::int64_t> next_cursor;
  std::vector<MeasureAsk> unmeasured_asks;
};

inline boost::json::object to_json(const MeasureRequestPage& p) {
  return boost::json::object{
      {"items", write_list(p.items, [](const MeasureRequestInfo& r) { return to_json(r); })},
      {"next_cursor", detail::or_null(p.next_cursor)},
      {"unmeasured_asks", write_list(p.unmeasured_asks, [](const MeasureAsk& a) { return to_json(a); })}};
}

inline MeasureRequestPage read_measure_request_page(Fields& f) {
  MeasureRequestPage p;
  p.items = read_list(f, "items", read_measure_request_info);
  p.next_cursor = f.opt_int("next_cursor");
  p.unmeasured_asks = read_list(f, "unmeasured_asks", read_measure_ask);
  return p;
}

inline Result<MeasureRequestPage> parse_measure_request_page(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_measure_request_page);
}

}  // namespace kport::api
