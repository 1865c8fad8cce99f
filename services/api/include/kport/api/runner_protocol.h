// The runner protocol's messages (docs/DESIGN.md, "The runner protocol"): a runner's
// registration (POST /api/v1/runners/register: who it is and what it can do) and its
// answer (the runner's token, the intervals), a runner as the coordinator lists it (GET
// /api/v1/runners, `RunnerList`, read by `kport runners`), and the heartbeat (POST
// /api/v1/runners/heartbeat: the job attempt it holds) with its answer, and the answer to
// leaving (POST /api/v1/runners/deregister, `Deregistered`, taken as an ack). The runner
// writes the requests and reads the answers; the coordinator reads the requests and
// writes the answers. The wire forms are the contracts the OpenAPI document describes
// (`RegisterInput`, `Registered`, `Runner`, `HeartbeatInput`, `Heartbeat`,
// `Deregistered`).
//
// Reading is strict: a field of the wrong type, an unknown role or a number out of range
// is an invalid_argument Error naming the field ("field 'capabilities.cores' must be an
// integer in 0..1048576"); unknown fields are ignored. Values; no thread affinity.
#pragma once

#include <boost/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/api/fields.h"

namespace kport::api {

// ---- registration --------------------------------------------------------------------

enum class RunnerRole { build, gpu };

inline constexpr std::array<std::string_view, 2> k_runner_roles{"build", "gpu"};

inline std::string_view to_string(RunnerRole r) noexcept { return k_runner_roles[static_cast<std::size_t>(r)]; }

inline std::optional<RunnerRole> parse_runner_role(std::string_view s) noexcept {
  for (std::size_t i = 0; i < k_runner_roles.size(); ++i)
    if (k_runner_roles[i] == s) return static_cast<RunnerRole>(i);
  return std::nullopt;
}

// What a runner can do. A build runner reports its toolkit, the targets it compiles and
// its cores; a GPU runner its GPU (model, uuid, compute capability, driver) and, in
// `extra`, facts of no meaning to the queue (index, SM count, memory, PCI bus id).
struct RunnerCapabilities {
  std::string toolkit;
  std::vector<std::string> targets;
  int cores = 0;
  std::string gpu_model, gpu_uuid, arch, driver;
  boost::json::value extra = boost::json::object{};
};

struct RunnerRegistration {
  std::string name;
  RunnerRole role = RunnerRole::build;
  RunnerCapabilities capabilities;
};

// The capabilities of the runner's role: a build runner's {toolkit, targets, cores}, a
// GPU runner's {gpu_model, gpu_uuid, arch, driver, extra}.
inline boost::json::object to_json(const RunnerCapabilities& c, RunnerRole role) {
  if (role == RunnerRole::build) {
    boost::json::array targets;
    for (const auto& t : c.targets) targets.emplace_back(t);
    return boost::json::object{{"toolkit", c.toolkit}, {"targets", std::move(targets)}, {"cores", c.cores}};
  }
  return boost::json::object{
      {"gpu_model", c.gpu_model}, {"gpu_uuid", c.gpu_uuid}, {"arch", c.arch}, {"driver", c.driver}, {"extra", c.extra}};
}

inline boost::json::object to_json(const RunnerRegistration& r) {
  return boost::json::object{
      {"name", r.name}, {"role", to_string(r.role)}, {"capabilities", to_json(r.capabilities, r.role)}};
}

// Every capability either role may report; absent ones stay empty.
inline RunnerCapabilities read_runner_capabilities(Fields& f) {
  RunnerCapabilities c;
  c.toolkit = f.opt_str("toolkit", 64).value_or("");
  c.targets = f.str_list("targets", 256);
  c.cores = static_cast<int>(f.opt_int("cores", 0, 1 << 20).value_or(0));
  c.gpu_model = f.opt_str("gpu_model", 256).value_or("");
  c.gpu_uuid = f.opt_str("gpu_uuid", 128).value_or("");
  c.arch = f.opt_str("arch", 16).value_or("");
  c.driver = f.opt_str("driver", 64).value_or("");
  c.extra = f.json_value("extra");
  return c;
}

inline RunnerRegistration read_runner_registration(Fields& f) {
  RunnerRegistration r;
  r.name = f.str("name", 128);
  const auto role = f.str("role", 16);
  if (const auto* caps = f.object("capabilities")) {
    Fields cf(*caps, f.path("capabilities"));
    r.capabilities = read_runner_capabilities(cf);
    if (!cf.ok()) f.fail_with(cf.error());
  }
  if (!f.ok()) return r;
  if (auto parsed = parse_runner_role(role))
    r.role = *parsed;
  else
    f.fail("role", "must be build or gpu");
  return r;
}

inline Result<RunnerRegistration> parse_runner_registration(const boost::json::object& o, std::string where = "") {
  Fields f(o, std::move(where));
  RunnerRegistration r = read_runner_registration(f);
  if (!f.ok()) return f.error();
  return r;
}

// ---- a runner as the coordinator answers it (GET /api/v1/runners, a registration) -----

// Every field always present (times ISO 8601 UTC, null when unset); the capabilities with
// every key either role may report.
struct RunnerInfo {
  std::int64_t id = 0;
  std::string name;
  RunnerRole role = RunnerRole::build;
  RunnerCapabilities capabilities;
  bool online = false;
  std::optional<std::string> registered, last_heartbeat, deregistered;
  std::optional<std::int64_t> current_job;
};

inline boost::json::object to_json(const RunnerInfo& r) {
  auto or_null = [](const auto& v) { return v ? boost::json::value(*v) : boost::json::value(nullptr); };
  const RunnerCapabilities& c = r.capabilities;
  boost::json::array targets;
  for (const auto& t : c.targets) targets.emplace_back(t);
  boost::json::object caps{{"toolkit", c.toolkit},   {"targets", std::move(targets)},
                           {"cores", c.cores},       {"gpu_model", c.gpu_model},
                           {"gpu_uuid", c.gpu_uuid}, {"arch", c.arch},
                           {"driver", c.driver},     {"extra", c.extra}};
  return boost::json::object{{"id", r.id},
                             {"name", r.name},
                             {"role", to_string(r.role)},
                             {"capabilities", std::move(caps)},
                             {"online", r.online},
                             {"registered", or_null(r.registered)},
                             {"last_heartbeat", or_null(r.last_heartbeat)},
                             {"deregistered", or_null(r.deregistered)},
                             {"current_job", or_null(r.current_job)}};
}

// Reads a runner; only the id is required (a registration's answer may name no more).
inline RunnerInfo read_runner_info(Fields& f) {
  RunnerInfo r;
  auto id = f.opt_int("id", 1, INT64_MAX);
  if (!id && f.ok()) f.fail("id", "is required (an integer)");
  r.id = id.value_or(0);
  r.name = f.opt_str("name", 128).value_or("");
  if (auto role = f.opt_str("role", 16)) {
    if (auto parsed = parse_runner_role(*role))
      r.role = *parsed;
    else if (f.ok())
      f.fail("role", "must be build or gpu");
  }
  if (const auto* caps = f.object("capabilities")) {
    Fields cf(*caps, f.path("capabilities"));
    r.capabilities = read_runner_capabilities(cf);
    if (!cf.ok()) f.fail_with(cf.error());
  }
  r.online = f.boolean("online", false);
  r.registered = f.opt_str("registered", 64);
  r.last_heartbeat = f.opt_str("last_heartbeat", 64);
  r.deregistered = f.opt_str("deregistered", 64);
  r.current_job = f.opt_int("current_job");
  return r;
}

// The runners GET /api/v1/runners lists (the ones that left too with ?all=1).
struct RunnerList {
  std::vector<RunnerInfo> items;
};

inline boost::json::object to_json(const RunnerList& l) {
  return boost::json::object{{"items", write_list(l.items, [](const RunnerInfo& r) { return to_json(r); })}};
}

inline RunnerList read_runner_list(Fields& f) { return RunnerList{read_list(f, "items", read_runner_info)}; }

inline Result<RunnerList> parse_runner_list(const boost::json::object& o, std::string where = "") {
  return parse_with(o, std::move(where), read_runner_list);
}

// The answer to a registration: the runner's own token (shown once) and the intervals the
// coordinator chooses.
struct RegistrationAnswer {
  RunnerInfo runner;
  std::string token;
  std::int64_t heartbeat_interval_ms = 10'000;
  std::int64_t max_claim_wait_s = 0;
};

inline boost::json::object to_json(const RegistrationAnswer& a) {
  return boost::json::object{{"runner", to_json(a.runner)},
                             {"token", a.token},
                             {"heartbeat_interval_ms", a.heartbeat_interval_ms},
                             {"max_claim_wait_s", a.max_claim_wait_s}};
}

inline RegistrationAnswer read_registration_answer(Fields& f) {
  RegistrationAnswer a;
  a.token = f.str("token", 4096);
  if (f.ok() && a.token.empty()) f.fail("token", "must not be empty");
  if (const auto* runner = f.object("runner")) {
    Fields rf(*runner, f.path("runner"));
    a.runner = read_runner_info(rf);
    if (!rf.ok()) f.fail_with(rf.error());
  }
  a.heartbeat_interval_ms = f.opt_int("heartbeat_interval_ms", 100, 3'600'000).value_or(10'000);
  a.max_claim_wait_s = f.opt_int("max_claim_wait_s", 0, INT64_MAX).value_or(0);
  return a;
}

// ---- heartbeat -----------------------------------------------------------------------

// A heartbeat names the attempt it holds; one without a job says the runner is alive.
struct HeartbeatRequest {
  std::optional<std::int64_t> job;
  int attempt = 0;  // >= 1 with a job
};

struct HeartbeatAnswer {
  std::int64_t lease_expires_ms = 0;  // the held attempt's lease, extended (unix ms); 0 without a job
  bool cancel_requested = false;      // the job was cancelled: stop it and complete it as failed
};

inline boost::json::object to_json(const HeartbeatRequest& h) {
  boost::json::object o;
  if (h.job) {
    o["job"] = *h.job;
    o["attempt"] = h.attempt;
  }
  return o;
}

inline HeartbeatRequest read_heartbeat_request(Fields& f) {
  HeartbeatRequest h;
  h.job = f.opt_int("job");
  h.attempt = static_cast<int>(f.opt_int("attempt").value_or(0));
  if (f.ok() && h.job && h.attempt < 1) f.fail("attempt", "is required with 'job'");
  return h;
}

inline boost::json::object to_json(const HeartbeatAnswer& a) {
  return boost::json::object{{"lease_expires_ms", a.lease_expires_ms}, {"cancel_requested", a.cancel_requested}};
}

inline HeartbeatAnswer read_heartbeat_answer(Fields& f) {
  HeartbeatAnswer a;
  a.lease_expires_ms = f.opt_int("lease_expires_ms").value_or(0);
  a.cancel_requested = f.boolean("cancel_requested", false);
  return a;
}

// ---- deregistration -------------------------------------------------------------------

// The runner that left (its held job back in the queue); the runner takes it as an ack.
struct Deregistered {
  std::int64_t runner = 0;
  bool deregistered = true;
};

inline boost::json::object to_json(const Deregistered& d) {
  return boost::json::object{{"runner", d.runner}, {"deregistered", d.deregistered}};
}

inline Deregistered read_deregistered(Fields& f) {
  Deregistered d;
  d.runner = f.integer("runner");
  d.deregistered = f.boolean("deregistered", false);
  return d;
}

}  // namespace kport::api
