#include "kport/runner/answers.h"

#include <cstdint>
#include <limits>

#include "kport/api/build_record.h"
#include "kport/api/job.h"
#include "kport/api/pipeline.h"
#include "kport/api/repository.h"
#include "kport/api/runner_protocol.h"
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
    if (u >= 0x20 && u < 0x7f)
      out += c;
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
  api::Fields f(*o, "");
  const api::RegistrationAnswer a = api::read_registration_answer(f);
  if (!f.ok()) return malformed(what, f.error());
  return Registration{a.token, a.runner.id, std::chrono::milliseconds(a.heartbeat_interval_ms)};
}

Result<std::optional<ClaimedJob>> parse_claim(std::string_view body, std::optional<Lease>* unreadable) {
  constexpr std::string_view what = "claim";
  if (unreadable) unreadable->reset();
  auto doc = parse_object(body, what);
  if (!doc.ok()) return std::move(doc).error();
  const auto* job = doc->if_contains("job");
  if (!job || job->is_null()) return std::optional<ClaimedJob>{};
  if (!job->is_object()) return malformed(what, "field 'job' must be an object or null, not " + describe(*job));
  api::Fields f(*doc, "");
  const api::ClaimAnswer answer = api::read_claim_answer(f);
  if (!f.ok()) {
    // A job whose id and attempt read can be given back instead of held until its lease ends.
    api::Fields lease(job->as_object(), "job");
    const auto id = lease.opt_int("id", 1, INT64_MAX);
    const auto attempt = lease.opt_int("attempt", 0, std::numeric_limits<int>::max());
    if (unreadable && lease.ok() && id && attempt) *unreadable = Lease{*id, static_cast<int>(*attempt)};
    return malformed(what, f.error());
  }
  const api::JobInfo& j = *answer.job;
  ClaimedJob out;
  out.id = j.id;
  out.pipeline = j.pipeline;
  out.kind = j.kind;
  out.commit = j.commit;
  out.target = j.target;
  out.attempt = j.attempt;
  out.depends_on = j.depends_on;
  out.payload = j.payload.as_object();  // read_job_info takes only an object
  return std::optional<ClaimedJob>(std::move(out));
}

Result<Heartbeat> parse_heartbeat(std::string_view body) {
  constexpr std::string_view what = "heartbeat";
  auto o = parse_object(body, what);
  if (!o.ok()) return std::move(o).error();
  api::Fields f(*o, "");
  const api::HeartbeatAnswer a = api::read_heartbeat_answer(f);
  if (!f.ok()) return malformed(what, f.error());
  return Heartbeat{a.cancel_requested};
}

Status parse_ack(std::string_view body, std::string_view what) {
  if (body.empty()) return {};
  auto o = parse_object(body, what);
  if (!o.ok()) return std::move(o).error();
  return {};
}

Result<api::BuildPage> parse_builds(std::string_view body, std::string_view what) {
  auto o = parse_object(body, what);
  if (!o.ok()) return std::move(o).error();
  auto page = api::parse_build_page(*o);
  if (!page.ok()) return malformed(what, page.error());
  return page;
}

Result<std::vector<BuildHarness>> parse_build_harnesses(std::string_view body) {
  constexpr std::string_view what = "builds lookup";
  auto page = parse_builds(body, what);
  if (!page.ok()) return std::move(page).error();
  std::vector<BuildHarness> out;
  for (std::size_t i = 0; i < page->items.size(); ++i) {
    const auto& a = page->items[i].artifact;
    if (!a) continue;
    if (!is_sha256(*a))
      return malformed(what, "items[" + std::to_string(i) +
                                 "].artifact must be a sha256 (64 lowercase hex digits), not \"" + quote(*a) + "\"");
    out.push_back(BuildHarness{*a, page->items[i].harness_env});
  }
  return out;
}

Result<std::vector<std::string>> parse_build_artifacts(std::string_view body) {
  auto harnesses = parse_build_harnesses(body);
  if (!harnesses.ok()) return std::move(harnesses).error();
  std::vector<std::string> out;
  for (auto& h : *harnesses) out.push_back(std::move(h.sha256));
  return out;
}

Result<std::optional<std::string>> parse_repository_url(std::string_view body, std::string_view name) {
  constexpr std::string_view what = "repositories";
  auto doc = parse_document(body, what);
  if (!doc.ok()) return std::move(doc).error();
  // The bare array is read too: the listing's items alone.
  json::object listing;
  if (doc->is_array())
    listing["items"] = doc->as_array();
  else if (doc->is_object())
    listing = std::move(doc->as_object());
  else
    return malformed(what, "expected {\"items\": [...]}, got " + describe(*doc));
  auto repos = api::parse_repository_list(listing);
  if (!repos.ok()) return malformed(what, repos.error());
  for (auto& r : *repos)
    if (r.name == name) return std::optional<std::string>(std::move(r.url));
  return std::optional<std::string>{};
}

Result<std::string> parse_pipeline_repo(std::string_view body) {
  constexpr std::string_view what = "pipeline";
  auto o = parse_object(body, what);
  if (!o.ok()) return std::move(o).error();
  auto p = api::parse_pipeline_answer(*o);
  if (!p.ok()) return malformed(what, p.error());
  return std::move(p->pipeline.repo);
}

}  // namespace kport::runner
