// POST /api/v1/pipelines: a request to validate a commit (`PipelineInput`), written by the
// CLI (`kport trigger`) and the watcher (git and toolkit watches), read by the
// coordinator. The wire form is the contract the OpenAPI document describes
// (`PipelineInput`): empty strings, no targets and an empty payload are absent fields.
//
// Reading is strict: a commit that is not 7..64 lowercase hex digits, a reason kport does
// not know or a field of the wrong type is an invalid_argument Error naming the field;
// unknown fields are ignored. Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/api/fields.h"

namespace kport::api {

// Why a pipeline exists (the store's reasons, by the same names).
enum class PipelineReason { push, new_target, new_driver, new_gpu, manual };

inline constexpr std::array<std::string_view, 5> k_pipeline_reasons{"push", "new_target", "new_driver", "new_gpu",
                                                                    "manual"};

inline std::string_view to_string(PipelineReason r) noexcept { return k_pipeline_reasons[static_cast<std::size_t>(r)]; }

inline std::optional<PipelineReason> parse_pipeline_reason(std::string_view s) noexcept {
  for (std::size_t i = 0; i < k_pipeline_reasons.size(); ++i)
    if (k_pipeline_reasons[i] == s) return static_cast<PipelineReason>(i);
  return std::nullopt;
}

struct TriggerRequest {
  std::string commit;  // the sha to validate
  std::string repo;    // a registered repository's name; "" for the default one
  std::string ref;     // "refs/heads/main"; "" when not on a branch
  PipelineReason reason = PipelineReason::manual;
  std::string note;                                    // shown with the pipeline
  std::vector<std::string> targets;                    // empty: every known target
  boost::json::value payload = boost::json::object{};  // a job payload for every build and check (job_payload.h)
};

inline boost::json::object to_json(const TriggerRequest& t) {
  boost::json::object o{{"commit", t.commit}};
  if (!t.repo.empty()) o["repo"] = t.repo;
  if (!t.ref.empty()) o["ref"] = t.ref;
  o["reason"] = to_string(t.reason);
  if (!t.note.empty()) o["note"] = t.note;
  if (!t.targets.empty()) {
    boost::json::array a;
    for (const auto& x : t.targets) a.emplace_back(x);
    o["targets"] = std::move(a);
  }
  const bool empty_payload = t.payload.is_object() && t.payload.as_object().empty();
  if (!empty_payload) o["payload"] = t.payload;
  return o;
}

inline TriggerRequest read_trigger_request(Fields& f) {
  TriggerRequest t;
  t.commit = f.sha("commit");
  t.repo = f.opt_str("repo", 128).value_or("");
  t.ref = f.opt_str("ref", 512).value_or("");
  t.note = f.opt_str("note", 4096).value_or("");
  const auto reason = f.opt_str("reason", 32).value_or("manual");
  t.targets = f.str_list("targets", 64);
  t.payload = f.json_value("payload");
  if (!f.ok()) return t;
  if (auto r = parse_pipeline_reason(reason))
    t.reason = *r;
  else
    f.fail("reason", "must be push, new_target, new_driver, new_gpu or manual");
  return t;
}

inline Result<TriggerRequest> parse_trigger_request(const boost::json::object& o, std::string where = "") {
  Fields f(o, std::move(where));
  TriggerRequest t = read_trigger_request(f);
  if (!f.ok()) return f.error();
  return t;
}

}  // namespace kport::api
