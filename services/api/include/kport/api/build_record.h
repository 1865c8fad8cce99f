// One record of POST /api/v1/jobs/{id}/builds: how one variant compiled for one target.
// The build runner writes it from the build driver's record (`to_json`); the coordinator
// reads it back (`read_build_record`) and stores it. The wire form is the contract the
// OpenAPI document describes (`BuildRecordInput`): absent optionals are absent fields.
//
// A stored record as the coordinator answers it (`BuildRecordInfo`, in a `BuildPage`: GET
// /api/v1/builds?job=|commit=|target=), read by the GPU runner (the harness a check job
// takes), the build runner (the parent commit's resources) and `kport build`: every field
// always present, null when unset (`BuildRecord`, `BuildRecordPage`).
//
// Reading is strict: a field of the wrong type, a negative figure or an unknown status is
// an invalid_argument Error naming the field ("field 'records[2].registers' must be an
// integer in 0..65536"); unknown fields are ignored. Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/api/fields.h"
#include "kport/api/job.h"

namespace kport::api {

// How a compile ended (the build driver's VariantStatus, by the same names).
enum class BuildOutcome { ok, not_applicable, compile_error, timeout };

inline constexpr std::array<std::string_view, 4> k_build_outcomes{"ok", "not_applicable", "compile_error", "timeout"};

inline std::string_view to_string(BuildOutcome s) noexcept { return k_build_outcomes[static_cast<std::size_t>(s)]; }

inline std::optional<BuildOutcome> parse_build_outcome(std::string_view s) noexcept {
  for (std::size_t i = 0; i < k_build_outcomes.size(); ++i)
    if (k_build_outcomes[i] == s) return static_cast<BuildOutcome>(i);
  return std::nullopt;
}

struct BuildRecordUpload {
  std::string commit, target;  // may be left out: the job names them
  std::string family, variant;
  BuildOutcome status = BuildOutcome::compile_error;
  std::string message;
  // ptxas resources, when the compile got that far
  std::optional<int> registers;
  std::optional<std::int64_t> spill_stores_bytes, spill_loads_bytes, shared_mem_bytes, stack_frame_bytes,
      constant_mem_bytes;
  std::optional<boost::json::value> instruction_audit;  // the PTX/SASS audit, kept as the driver wrote it
  std::optional<std::string> artifact;                  // the harness's sha256, for a variant it holds
  // Where the variant's kernel is, relative to the repository root, and the line of its
  // first __global__ (a check run annotates it when the variant's resources regress).
  std::optional<std::string> source_path;
  std::optional<int> source_line;
  // The environment the library's harness runs with (its manifest's `env`, placeholders
  // unexpanded): the GPU runner applies it to the harness processes it starts.
  std::map<std::string, std::string> harness_env;
};

namespace detail {

inline boost::json::object env_to_json(const std::map<std::string, std::string>& env) {
  boost::json::object o;
  for (const auto& [name, value] : env) o[name] = value;
  return o;
}

// An object of strings whose keys are environment variable names; absent reads empty.
inline std::map<std::string, std::string> read_env(Fields& f, std::string_view key) {
  std::map<std::string, std::string> out;
  const auto* v = f.source().if_contains(key);
  if (!v || v->is_null()) return out;
  if (!v->is_object()) {
    f.fail(key, "must be an object of strings (NAME: value)");
    return out;
  }
  for (const auto& [name, value] : v->as_object()) {
    const std::string n(name);
    bool ok = !n.empty() && n.size() <= 128 && !(n[0] >= '0' && n[0] <= '9');
    for (char c : n)
      ok = ok && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
    if (!ok) {
      f.fail(std::string(key) + "." + n, "is not an environment variable name (letters, digits and _)");
      return out;
    }
    if (!value.is_string() || value.as_string().size() > 4096) {
      f.fail(std::string(key) + "." + n, "must be a string of at most 4096 bytes");
      return out;
    }
    out[n] = std::string(value.as_string());
  }
  return out;
}

}  // namespace detail

inline boost::json::object to_json(const BuildRecordUpload& r) {
  boost::json::object o;
  if (!r.commit.empty()) o["commit"] = r.commit;
  if (!r.target.empty()) o["target"] = r.target;
  o["family"] = r.family;
  o["variant"] = r.variant;
  o["status"] = to_string(r.status);
  o["message"] = r.message;
  auto put = [&o](std::string_view key, const auto& v) {
    if (v) o[key] = *v;
  };
  put("registers", r.registers);
  put("spill_stores_bytes", r.spill_stores_bytes);
  put("spill_loads_bytes", r.spill_loads_bytes);
  put("shared_mem_bytes", r.shared_mem_bytes);
  put("stack_frame_bytes", r.stack_frame_bytes);
  put("constant_mem_bytes", r.constant_mem_bytes);
  put("instruction_audit", r.instruction_audit);
  put("artifact", r.artifact);
  put("source_path", r.source_path);
  put("source_line", r.source_line);
  if (!r.harness_env.empty()) o["harness_env"] = detail::env_to_json(r.harness_env);
  return o;
}

// Reads one record; problems go into `f` (the first one wins), so a caller reading a list
// names the element (`Fields f(item, "records[2]")`).
inline BuildRecordUpload read_build_record(Fields& f) {
  BuildRecordUpload r;
  r.commit = f.opt_sha("commit").value_or("");
  r.target = f.opt_str("target", 32).value_or("");
  r.family = f.str("family", 64);
  r.variant = f.str("variant", 128);
  auto status = f.str("status", 32);
  if (auto s = parse_build_outcome(status))
    r.status = *s;
  else if (f.ok())
    f.fail("status", "must be one of ok, not_applicable, compile_error, timeout");
  r.message = f.opt_str("message", 1 << 20).value_or("");
  if (auto n = f.opt_int("registers", 0, 65536)) r.registers = static_cast<int>(*n);
  r.spill_stores_bytes = f.opt_int("spill_stores_bytes", 0, INT64_MAX);
  r.spill_loads_bytes = f.opt_int("spill_loads_bytes", 0, INT64_MAX);
  r.shared_mem_bytes = f.opt_int("shared_mem_bytes", 0, INT64_MAX);
  r.stack_frame_bytes = f.opt_int("stack_frame_bytes", 0, INT64_MAX);
  r.constant_mem_bytes = f.opt_int("constant_mem_bytes", 0, INT64_MAX);
  if (const auto* a = f.source().if_contains("instruction_audit"); a && !a->is_null()) {
    if (a->is_object() || a->is_array())
      r.instruction_audit = *a;
    else
      f.fail("instruction_audit", "must be a JSON object or array");
  }
  r.artifact = f.opt_str("artifact", 64);
  r.source_path = f.opt_str("source_path", 1024);
  if (auto n = f.opt_int("source_line", 1, 10'000'000)) r.source_line = static_cast<int>(*n);
  r.harness_env = detail::read_env(f, "harness_env");
  return r;
}

inline Result<BuildRecordUpload> parse_build_record(const boost::json::object& o, std::string where = "") {
  Fields f(o, std::move(where));
  BuildRecordUpload r = read_build_record(f);
  if (!f.ok()) return f.error();
  return r;
}

// ---- a stored record, as answered --------------------------------------------------

struct BuildRecordInfo {
  std::int64_t id = 0;
  std::optional<std::int64_t> job;  // the build job that uploaded it
  int attempt = 0;
  std::string commit, target, family, variant;
  BuildOutcome status = BuildOutcome::compile_error;
  std::string message;
  std::optional<int> registers;
  std::optional<std::int64_t> spill_stores_bytes, spill_loads_bytes, shared_mem_bytes, stack_frame_bytes,
      constant_mem_bytes;
  boost::json::value instruction_audit = boost::json::object{};  // {"ptx": {...}, "sass": {...}} or {}
  std::optional<std::string> artifact;                           // the harness's sha256
  std::optional<std::string> source_path;                        // the variant's kernel source, from the library root
  std::optional<int> source_line;                                // the line of its first __global__
  std::map<std::string, std::string> harness_env;                // the harness's environment, unexpanded
  std::optional<std::string> created;                            // ISO 8601 UTC
};

inline boost::json::object to_json(const BuildRecordInfo& b) {
  using detail::or_null;
  auto opt = [](const auto& v) { return v ? boost::json::value(*v) : boost::json::value(nullptr); };
  return boost::json::object{{"id", b.id},
                             {"job", or_null(b.job)},
                             {"attempt", b.attempt},
                             {"commit", b.commit},
                             {"target", b.target},
                             {"family", b.family},
                             {"variant", b.variant},
                             {"status", to_string(b.status)},
                             {"message", b.message},
                             {"registers", opt(b.registers)},
                             {"spill_stores_bytes", or_null(b.spill_stores_bytes)},
                             {"spill_loads_bytes", or_null(b.spill_loads_bytes)},
                             {"shared_mem_bytes", or_null(b.shared_mem_bytes)},
                             {"stack_frame_bytes", or_null(b.stack_frame_bytes)},
                             {"constant_mem_bytes", or_null(b.constant_mem_bytes)},
                             {"instruction_audit", b.instruction_audit},
                             {"artifact", or_null(b.artifact)},
                             {"source_path", or_null(b.source_path)},
                             {"source_line", opt(b.source_line)},
                             {"harness_env", detail::env_to_json(b.harness_env)},
                             {"created", or_null(b.created)}};
}

// Every field is read when present (a lookup may want one of them only); a status, when
// present, must be one kport knows.
inline BuildRecordInfo read_build_record_info(Fields& f) {
  BuildRecordInfo b;
  b.id = f.opt_int("id", 0, INT64_MAX).value_or(0);
  b.job = f.opt_int("job", 1, INT64_MAX);
  b.attempt = static_cast<int>(f.opt_int("attempt", 0, INT_MAX).value_or(0));
  b.commit = f.opt_str("commit", 64).value_or("");
  b.target = f.opt_str("target", 64).value_or("");
  b.family = f.opt_str("family", 64).value_or("");
  b.variant = f.opt_str("variant", 128).value_or("");
  if (auto status = f.opt_str("status", 32)) {
    if (auto s = parse_build_outcome(*status))
      b.status = *s;
    else if (f.ok())
      f.fail("status", "must be one of ok, not_applicable, compile_error, timeout");
  }
  b.message = f.opt_str("message", 1 << 20).value_or("");
  if (auto n = f.opt_int("registers", 0, 65536)) b.registers = static_cast<int>(*n);
  b.spill_stores_bytes = f.opt_int("spill_stores_bytes", 0, INT64_MAX);
  b.spill_loads_bytes = f.opt_int("spill_loads_bytes", 0, INT64_MAX);
  b.shared_mem_bytes = f.opt_int("shared_mem_bytes", 0, INT64_MAX);
  b.stack_frame_bytes = f.opt_int("stack_frame_bytes", 0, INT64_MAX);
  b.constant_mem_bytes = f.opt_int("constant_mem_bytes", 0, INT64_MAX);
  b.instruction_audit = f.json_value("instruction_audit");
  b.artifact = f.opt_str("artifact", 64);
  b.source_path = f.opt_str("source_path", 1024);
  if (auto n = f.opt_int("source_line", 1, 10'000'000)) b.source_line = static_cast<int>(*n);
  b.harness_env = detail::read_env(f, "harness_env");
  b.created = f.opt_str("created", 64);
  return b;
}

struct BuildPage {
  std::vector<BuildRecordInfo> items;
  std::optional<std::int64_t> next_cursor;
};

inline boost::json::object to_json(const BuildPage& p) {
  return boost::json::object{{"items", write_list(p.items, [](const BuildRecordInfo& b) { return to_json(b); })},
                             {"next_cursor", detail::or_null(p.next_cursor)}};
}

inline BuildPage read_build_page(Fields& f) {
  BuildPage p;
  bool listed = f.source().contains("items") && !f.source().at("items").is_null();
  if (!listed) f.fail("items", "is required (an array)");
  p.items = read_list(f, "items", read_build_record_info);
  p.next_cursor = f.opt_int("next_cursor");
  return p;
}

inline Result<BuildPage> parse_build_page(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_build_page);
}

}  // namespace kport::api
