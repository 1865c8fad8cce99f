// The code and the machines kport validates, as the coordinator answers and records them:
// a registered repository (`RepositoryInfo`: GET /api/v1/repositories, read by the build
// runner for the URL to clone and by `kport` to pick the only one), a commit to record
// (`CommitInput`: POST /api/v1/commits, written by the watcher's git and toolkit watches,
// read by the coordinator) and a GPU model of the fleet (`GpuModelInfo`: GET
// /api/v1/gpus, read by the watcher's fleet watch for the drivers seen). The wire forms
// are the contracts the OpenAPI document describes (`Repository`, `CommitInput`,
// `GpuModel`); answers carry every field, null when unset.
//
// Reading is strict: a field of the wrong type or a sha that is not 7..64 lowercase hex
// digits is an invalid_argument Error naming the field ("field 'items[1].url' must be a
// string"); unknown fields are ignored. Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kport/api/fields.h"
#include "kport/api/job.h"

namespace kport::api {

// ---- a repository --------------------------------------------------------------------

struct RepositoryInfo {
  std::int64_t id = 0;
  std::string name, url;
  std::optional<std::string> created;  // ISO 8601 UTC
};

inline boost::json::object to_json(const RepositoryInfo& r) {
  return boost::json::object{{"id", r.id}, {"name", r.name}, {"url", r.url}, {"created", detail::or_null(r.created)}};
}

inline RepositoryInfo read_repository_info(Fields& f) {
  RepositoryInfo r;
  r.id = f.opt_int("id", 0, INT64_MAX).value_or(0);
  r.name = f.str("name", 128);
  r.url = f.str("url", 2048);
  r.created = f.opt_str("created", 64);
  return r;
}

// GET /api/v1/repositories: {"items": [...]}.
inline std::vector<RepositoryInfo> read_repository_list(Fields& f) {
  if (!f.array("items") && f.ok()) f.fail("items", "is required (an array)");
  return read_list(f, "items", read_repository_info);
}

inline Result<std::vector<RepositoryInfo>> parse_repository_list(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_repository_list);
}

// ---- a commit to record --------------------------------------------------------------

struct CommitInput {
  std::string sha;   // 7..64 lowercase hex digits
  std::string repo;  // a registered repository's name
  std::optional<std::string> parent;
  std::string message, author;  // the summary line and the author, as git has them
  std::int64_t time_ms = 0;     // the commit's time (unix ms); 0: unknown
};

inline boost::json::object to_json(const CommitInput& c) {
  boost::json::object o{
      {"sha", c.sha}, {"repo", c.repo}, {"message", c.message}, {"author", c.author}, {"time_ms", c.time_ms}};
  if (c.parent) o["parent"] = *c.parent;
  return o;
}

inline CommitInput read_commit_input(Fields& f) {
  CommitInput c;
  c.sha = f.sha("sha");
  c.repo = f.str("repo", 128);
  c.parent = f.opt_sha("parent");
  c.message = f.opt_str("message", 65536).value_or("");
  c.author = f.opt_str("author", 512).value_or("");
  c.time_ms = f.opt_int("time_ms", 0, INT64_MAX).value_or(0);
  return c;
}

inline Result<CommitInput> parse_commit_input(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_commit_input);
}

// ---- a GPU model of the fleet --------------------------------------------------------

struct GpuModelInfo {
  std::string name;                                  // as nvidia-smi names it, "NVIDIA H200"
  std::string arch;                                  // compute capability, "9.0"
  std::vector<std::string> drivers;                  // every driver a runner reported with it, oldest first
  std::optional<std::string> first_seen, last_seen;  // ISO 8601 UTC
};

inline boost::json::object to_json(const GpuModelInfo& g) {
  boost::json::array drivers;
  for (const auto& d : g.drivers) drivers.emplace_back(d);
  return boost::json::object{{"name", g.name},
                             {"arch", g.arch},
                             {"drivers", std::move(drivers)},
                             {"first_seen", detail::or_null(g.first_seen)},
                             {"last_seen", detail::or_null(g.last_seen)}};
}

inline GpuModelInfo read_gpu_model_info(Fields& f) {
  GpuModelInfo g;
  g.name = f.str("name", 256);
  g.arch = f.opt_str("arch", 16).value_or("");
  g.drivers = f.str_list("drivers", 4096);
  g.first_seen = f.opt_str("first_seen", 64);
  g.last_seen = f.opt_str("last_seen", 64);
  return g;
}

// GET /api/v1/gpus: {"items": [...]}.
inline Result<std::vector<GpuModelInfo>> parse_gpu_model_list(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), [](Fields& f) { return read_list(f, "items", read_gpu_model_info); });
}

}  // namespace kport::api
