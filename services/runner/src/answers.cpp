#include "kport/runner/answers.h"

#include "kport/common/json_fields.h"

namespace kport::runner {
namespace json = boost::json;
using namespace json_fields;

namespace {

// The first bytes of a body that is not JSON, printable, so a log line shows what a proxy sent.
std::string quote(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, 80)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) out += c;
    else {
      static constexpr char k_hex[] = "0123456789abcdef";
      out += "\\x";
      out += k_hex[u >> 4];
      out += k_hex[u & 15];
    }
  }
  if (body.size() > 80) out += "...";
  return out;
}

Error malformed(std::string_view what, const std::string& problem) {
  return make_error(Errc::unavailable, std::string(what) + " answer: " + problem);
}

Error malformed(std::string_view what, const Error& field) { return malformed(what, field.message); }

Result<json::object> parse_object(std::string_view body, std::string_view what) {
  auto doc = parse_document(body, what);
  if (!doc.ok()) return std::move(doc).error();
  if (!doc->is_object()) return malformed(what, "expected a JSON object, got " + describe(*doc));
  return std::move(doc->as_object());
}

bool is_sha256(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// A git object id, full or abbreviated: it goes into a checkout and a query string.
bool is_commit(std::string_view s) {
  if (s.size() < 7 || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

// An nvcc target (sm_90a, compute_120f): it goes into file names and a query string.
bool is_target(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

}  // namespace

Result<json::value> parse_document(std::string_view body, std::string_view what) {
  if (body.empty()) return malformed(what, "empty body where a JSON document was expected");
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec) return malformed(what, "not JSON (" + ec.message() + "): \"" + quote(body) + "\"");
  return doc;
}

Result<Registration> parse_registration(std::string_view body) {
  constexpr std::string_view what = "register";
  auto o = parse_object(body, what);
  if (!o.ok()) return std::move(o).error();
  Registration reg;
  auto token = required_string(*o, "token", "");
  if (!token.ok()) return malformed(what, token.error());
  reg.token = std::move(*token);
  auto runner = optional_object(*o, "runner", "");
  if (!runner.ok()) return malformed(what, runner.error());
  if (*runner) {
    auto id = optional_integer(**runner, "id", "runner", 1);
    if (!id.ok()) return malformed(what, id.error());
    reg.runner_id = id->value_or(0);
  }
  auto hb = optional_integer(*o, "heartbeat_interval_ms", "", 100, 3'600'000);
  if (!hb.ok()) return malformed(what, hb.error());
  if (*hb) reg.heartbeat_interval = std::chrono::milliseconds(**hb);
  return reg;
}

Result<std::optional<ClaimedJob>> parse_claim(std::string_view body, std::optional<Lease>* unreadable) {
  constexpr std::string_view what = "claim";
  if (unreadable) unreadable->reset();
  auto doc = parse_object(body, what);
  if (!doc.ok()) return std::move(doc).error();
  const auto* job = doc->if_contains("job");
  if (!job || job->is_null()) return std::optional<ClaimedJob>{};
  if (!job->is_object()) return malformed(what, "job must be an object or null, not " + describe(*job));
  const auto& o = job->as_object();
  ClaimedJob j;
  auto id = required_integer(o, "id", "job", 1);
  auto attempt = required_integer(o, "attempt", "job", 0, std::numeric_limits<int>::max());
  if (id.ok() && attempt.ok() && unreadable) *unreadable = Lease{*id, static_cast<int>(*attempt)};
  if (!id.ok()) return malformed(what, id.error());
  if (!attempt.ok()) return malformed(what, attempt.error());
  j.id = *id;
  j.attempt = static_cast<int>(*attempt);
  auto fail = [&](const Error& e) -> Error { return malformed(what, "job " + std::to_string(j.id) + ": " + e.message); };
  auto kind = required_string(o, "kind", "job");
  if (!kind.ok()) return fail(kind.error());
  auto commit = required_string(o, "commit", "job");
  if (!commit.ok()) return fail(commit.error());
  if (!is_commit(*commit)) return fail(make_error(Errc::invalid_argument, "job.commit must be a git commit id (7 to 64 hex digits), not \"" + quote(*commit) + "\""));
  auto target = required_string(o, "target", "job");
  if (!target.ok()) return fail(target.error());
  if (!is_target(*target))
    return fail(make_error(Errc::invalid_argument, "job.target must be an nvcc target such as sm_90a, not \"" + quote(*target) + "\""));
  auto pipeline = optional_integer(o, "pipeline", "job", 0);
  if (!pipeline.ok()) return fail(pipeline.error());
  auto depends = optional_integer(o, "depends_on", "job", 1);
  if (!depends.ok()) return fail(depends.error());
  auto payload = optional_object(o, "payload", "job");
  if (!payload.ok()) return fail(payload.error());
  j.kind = std::move(*kind);
  j.commit = std::move(*commit);
  j.target = std::move(*target);
  j.pipeline = pipeline->value_or(0);
  j.depends_on = *depends;
  if (*payload) j.payload = **payload;
  if (unreadable) unreadable->reset();
  return std::optional<ClaimedJob>(std::move(j));
}

Result<Heartbeat> parse_heartbeat(std::string_view body) {
  constexpr std::string_view what = "heartbeat";
  auto o = parse_object(body, what);
  if (!o.ok()) return std::move(o).error();
  auto cancel = optional_bool(*o, "cancel_requested", "");
  if (!cancel.ok()) return malformed(what, cancel.error());
  return Heartbeat{cancel->value_or(false)};
}

Status parse_ack(std::string_view body, std::string_view what) {
  if (body.empty()) return {};
  auto o = parse_object(body, what);
  if (!o.ok()) return std::move(o).error();
  return {};
}

Result<std::vector<std::string>> parse_build_artifacts(std::string_view body) {
  constexpr std::string_view what = "builds lookup";
  auto o = parse_object(body, what);
  if (!o.ok()) return std::move(o).error();
  const auto* items = o->if_contains("items");
  if (!items || !items->is_array()) return malformed(what, items ? "items must be an array, not " + describe(*items) : "items is missing");
  std::vector<std::string> out;
  std::size_t i = 0;
  for (const auto& item : items->as_array()) {
    const std::string where = "items[" + std::to_string(i++) + "]";
    if (!item.is_object()) return malformed(what, where + " must be an object, not " + describe(item));
    const auto* a = item.as_object().if_contains("artifact");
    if (!a || a->is_null()) continue;
    if (!a->is_string() || !is_sha256(a->as_string()))
      return malformed(what, where + ".artifact must be a sha256 (64 lowercase hex digits), not " +
                                 (a->is_string() ? "\"" + quote(a->as_string()) + "\"" : describe(*a)));
    out.emplace_back(a->as_string());
  }
  return out;
}

Result<std::optional<std::string>> parse_repository_url(std::string_view body, std::string_view name) {
  constexpr std::string_view what = "repositories";
  auto doc = parse_document(body, what);
  if (!doc.ok()) return std::move(doc).error();
  const json::value* items = doc->is_object() ? doc->as_object().if_contains("items") : &*doc;
  if (!items || !items->is_array()) return malformed(what, "expected {\"items\": [...]}, got " + describe(*doc));
  std::size_t i = 0;
  for (const auto& r : items->as_array()) {
    const std::string where = "items[" + std::to_string(i++) + "]";
    if (!r.is_object()) return malformed(what, where + " must be an object, not " + describe(r));
    if (str(r.as_object(), "name") != name) continue;
    auto url = required_string(r.as_object(), "url", where);
    if (!url.ok()) return malformed(what, url.error());
    return std::optional<std::string>(std::move(*url));
  }
  return std::optional<std::string>{};
}

}  // namespace kport::runner
