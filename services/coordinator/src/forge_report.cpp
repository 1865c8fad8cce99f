#include "forge_report.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <map>
#include <variant>

#include "kport/common/clock.h"
#include "kport/common/crypto.h"
#include "kport/common/utf8.h"
#include "verdict.h"

namespace kport::coordinator {
namespace json = boost::json;

namespace {

constexpr const char* k_name = "kport";         // the check run's name and the status context
constexpr std::size_t k_summary_max = 65'535;   // GitHub's bound on output.summary
constexpr std::size_t k_description_max = 140;  // commit statuses show one short line

bool regression_kind(const std::string& kind) {
  return kind == "perf_regression" || kind == "resource_regression" || kind == "numerics_failure" ||
         kind == "build_failure" || kind == "job_failure";
}

// A GitLab project named by its path ("group/name") is one URL segment.
std::string path_segment(std::string_view s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += ch;
    } else {
      static const char* hex = "0123456789ABCDEF";
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

std::string description_of(const std::string& state, const std::string& conclusion, const porting::Verdict* v,
                           const std::string& note = "") {
  std::string text;
  if (state == "queued")
    text = "kport: queued";
  else if (state == "in_progress")
    text = "kport: validating";
  else
    text = report_title(conclusion, v);
  // A note is what changed since the report (a bisection's end): it goes first, so the
  // 140 characters keep it.
  if (!note.empty()) text = "kport: " + note + "; " + text.substr(text.rfind("kport: ", 0) == 0 ? 7 : 0);
  return std::string(utf8::truncate(text, k_description_max));
}

// The state words of each forge's commit statuses.
std::string status_word(const std::string& kind, const std::string& state, const std::string& conclusion) {
  if (kind == "gitlab") {
    if (state == "queued") return "pending";
    if (state == "in_progress") return "running";
    if (conclusion == "success") return "success";
    if (conclusion == "failure") return "failed";
    if (conclusion == "cancelled") return "canceled";
    return "skipped";  // insufficient data: neither a pass nor a failure
  }
  // GitHub and Gitea: pending, success, failure, error.
  if (state != "completed") return "pending";
  if (conclusion == "success") return "success";
  if (conclusion == "failure") return "failure";
  return "error";
}

db::NewDelivery forge_delivery(const ReportInputs& in, const std::string& conclusion, const std::string& details) {
  const auto& c = *in.connection;
  const auto& p = in.pipeline;
  db::NewDelivery d;
  d.subject = "forge " + c.repo + " pipeline " + std::to_string(p.id);
  d.repo = c.repo;
  d.pipeline_id = p.id;
  d.event = "pipeline." + in.state;
  d.commit_sha = p.commit_sha;
  d.max_attempts = in.max_attempts;
  d.method = "POST";
  if (c.kind == "github" && c.mode == "check") {
    d.kind = "check_run";
    d.url = "/repos/" + c.project + "/check-runs";
    json::object body{{"name", k_name}, {"details_url", details}, {"external_id", std::to_string(p.id)}};
    body["status"] = in.state;
    const std::string at = iso8601_utc(in.now_ms);
    if (in.state == "in_progress") body["started_at"] = at;
    if (in.state == "completed") {
      body["conclusion"] = conclusion;
      body["completed_at"] = at;
      json::object output{
          {"title", report_title(conclusion, in.verdict)},
          {"summary", report_summary(p, conclusion, in.verdict, details, in.repro_commands, in.bisections)}};
      json::array notes;
      for (const auto& a : in.annotations) {
        if (notes.size() == k_max_annotations) break;
        notes.push_back(json::object{{"path", a.path},
                                     {"start_line", a.line},
                                     {"end_line", a.line},
                                     {"annotation_level", "failure"},
                                     {"title", std::string(utf8::truncate(a.title, 255))},
                                     {"message", std::string(utf8::truncate(a.message, 64 * 1024))}});
      }
      if (!notes.empty()) output["annotations"] = std::move(notes);
      body["output"] = std::move(output);
    }
    d.body = json::serialize(body);
    return d;
  }
  d.kind = "commit_status";
  const std::string state = status_word(c.kind, in.state, conclusion);
  const std::string description = description_of(in.state, conclusion, in.verdict, in.status_note);
  if (c.kind == "gitlab") {
    d.url = "/projects/" + path_segment(c.project) + "/statuses/" + p.commit_sha;
    d.body = json::serialize(
        json::object{{"state", state}, {"name", k_name}, {"target_url", details}, {"description", description}});
  } else {
    d.url = "/repos/" + c.project + "/statuses/" + p.commit_sha;
    d.body = json::serialize(
        json::object{{"state", state}, {"context", k_name}, {"target_url", details}, {"description", description}});
  }
  return d;
}

json::object pipeline_json(const db::Pipeline& p, const std::string& details) {
  return json::object{{"id", p.id},
                      {"repo", p.repo},
                      {"ref", p.ref},
                      {"commit", p.commit_sha},
                      {"status", std::string(db::to_string(p.status))},
                      {"url", details}};
}

}  // namespace

std::string report_state(db::PipelineStatus status) {
  switch (status) {
    case db::PipelineStatus::queued: return "queued";
    case db::PipelineStatus::running: return "in_progress";
    default: return "completed";
  }
}

std::string conclusion_of(db::PipelineStatus status, const porting::Verdict* v) {
  if (status == db::PipelineStatus::cancelled) return "cancelled";
  if (v && v->status == "fail") return "failure";
  if (status == db::PipelineStatus::failed) return "failure";
  if (v && v->status == "pass" && v->builds + v->results > 0) return "success";
  return "neutral";
}

std::string commit_page_url(const std::string& public_url, const std::string& sha) {
  return public_url + "/#/commit/" + sha;
}

std::string pipeline_page_url(const std::string& public_url, std::int64_t pipeline_id) {
  return public_url + "/#/pipeline/" + std::to_string(pipeline_id);
}

std::string report_title(const std::string& conclusion, const porting::Verdict* v) {
  if (conclusion == "cancelled") return "kport: cancelled";
  if (conclusion == "success") {
    return "kport: pass (" + std::to_string(v ? v->builds : 0) + " builds, " + std::to_string(v ? v->results : 0) +
           " results)";
  }
  if (conclusion == "neutral") return "kport: insufficient data";
  std::map<std::string, int> counts;
  if (v)
    for (const auto& r : v->reasons) ++counts[r.kind];
  std::string parts;
  for (const auto& [kind, n] : counts) parts += (parts.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
  return "kport: fail" + (parts.empty() ? std::string() : " (" + parts + ")");
}

std::string report_summary(const db::Pipeline& p, const std::string& conclusion, const porting::Verdict* v,
                           const std::string& details_url, const std::map<std::int64_t, std::string>& repro_commands,
                           const std::vector<std::string>& bisections) {
  std::string md = "**" + report_title(conclusion, v) + "** for `" + short_sha(p.commit_sha) + "`";
  if (v && v->baseline) md += " against `" + short_sha(*v->baseline) + "`";
  md += " (pipeline " + std::to_string(p.id) + ", " + std::to_string(p.jobs_done) + " of " +
        std::to_string(p.jobs_total) + " jobs done).\n\n";
  if (v) {
    // Per target and GPU model, as the verdict names them.
    std::map<std::pair<std::string, std::string>, std::vector<const porting::VerdictReason*>> groups;
    for (const auto& r : v->reasons) groups[{r.target, r.gpu_model}].push_back(&r);
    for (const auto& [key, reasons] : groups) {
      md += "### " + (key.first.empty() ? std::string("all targets") : key.first);
      if (!key.second.empty()) md += " on " + key.second;
      md += "\n\n| kind | variant | what |\n| --- | --- | --- |\n";
      for (const auto* r : reasons) {
        std::string msg = r->message;
        std::replace(msg.begin(), msg.end(), '|', '/');
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        md += "| " + r->kind + " | `" + r->variant + "` | " + msg + " |\n";
      }
      md += "\n";
      for (const auto* r : reasons) {
        auto id = r->figures.find("result");
        if (id == r->figures.end() || !std::holds_alternative<std::int64_t>(id->second)) continue;
        auto cmd = repro_commands.find(std::get<std::int64_t>(id->second));
        if (cmd == repro_commands.end()) continue;
        md += "Reproduce the " + r->kind + " of `" + r->variant + "` (result " + std::to_string(cmd->first) +
              "):\n\n```sh\n" + cmd->second + "\n```\n\n";
      }
    }
    if (!v->waiting.empty()) {
      md += "### Waiting\n\n";
      for (const auto& w : v->waiting) md += "- " + w + "\n";
      md += "\n";
    }
    // What makes a report neutral or leaves a failure out, said as plainly as a failure.
    if (!v->insufficient_data.empty()) {
      md += "### Too little history to judge\n\n| series | change | A/A degrees of freedom |\n| --- | --- | --- |\n";
      for (const auto& u : v->insufficient_data) {
        const auto& s = u.model.series;
        char change[32];
        std::snprintf(change, sizeof change, "%+.1f%%", 100.0 * u.rel);
        md += "| " + s.instance + " " + s.dtype + " " + s.shape + " on " + s.gpu_model + " (driver " + s.driver +
              ") | " + change + " | " + std::to_string(u.model.degrees) + " of " +
              std::to_string(u.model.degrees + u.model.needed) + " needed |\n";
      }
      md += "\n";
    }
    if (!v->flaky.empty()) {
      md += "### Flaky, not counted\n\n";
      for (const auto& f : v->flaky) {
        md += "- " + f.instance + " " + f.dtype + " " + f.shape + " on " + f.gpu_model + ": " +
              porting::to_string(f.status) + " (result " + std::to_string(f.result) +
              (f.seed ? ", seed " + std::to_string(*f.seed) : std::string()) + "); " + std::to_string(f.failures) +
              " of " + std::to_string(f.runs) + " runs failed, released after " + std::to_string(f.to_release) +
              " more clean runs\n";
      }
      md += "\n";
    }
    if (!v->infrastructure.empty()) {
      md += "### Machine failures, not the commit's\n\n";
      for (const auto& f : v->infrastructure) {
        std::string msg = f.message;
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        md += "- " + (f.target.empty() ? std::string("all targets") : f.target) +
              (f.gpu_model.empty() ? std::string() : " on " + f.gpu_model) + ", job " + std::to_string(f.job) + ": " +
              msg + "\n";
      }
      md += "\n";
    }
    if (!v->notes.empty()) {
      md += "### Seen, not counted\n\n";
      for (const auto& n : v->notes) md += "- " + n + "\n";
      md += "\n";
    }
    md += "Rule: " + porting::describe(v->policy) + "\n\n";
  }
  if (!bisections.empty()) {
    md += "### Bisections\n\n";
    for (const auto& b : bisections) md += "- " + b + "\n";
    md += "\n";
  }
  md += "Reproduce and inspect: `kport status " + p.commit_sha + "`, or [the pipeline](" + details_url +
        "): its jobs, their logs and the commit's verdict.\n";
  return utf8::clip(md, k_summary_max);
}

std::vector<db::NewDelivery> plan_report(const ReportInputs& in) {
  std::vector<db::NewDelivery> out;
  // The check links to the page of what it reports on: the pipeline, its jobs and logs,
  // with the commit's verdict and a link to the commit page.
  const std::string details = pipeline_page_url(in.public_url, in.pipeline.id);
  const std::string conclusion = in.state == "completed" ? conclusion_of(in.pipeline.status, in.verdict) : "";
  if (in.connection && !in.connection->kind.empty()) out.push_back(forge_delivery(in, conclusion, details));
  if (in.state != "completed") return out;
  json::array regressions;
  if (in.verdict)
    for (const auto& r : in.verdict->reasons)
      if (regression_kind(r.kind)) regressions.push_back(to_json(r));
  for (const auto& url : in.notify_urls) {
    db::NewDelivery d;
    d.kind = "webhook";
    d.subject = "webhook " + url;
    d.pipeline_id = in.pipeline.id;
    d.commit_sha = in.pipeline.commit_sha;
    d.url = url;
    d.max_attempts = in.max_attempts;
    d.event = "verdict";
    json::object body{{"event", "verdict"},
                      {"conclusion", conclusion},
                      {"pipeline", pipeline_json(in.pipeline, details)},
                      {"verdict", in.verdict ? to_json(*in.verdict) : json::value(nullptr)}};
    d.body = json::serialize(body);
    out.push_back(d);
    if (!regressions.empty()) {
      d.event = "regression";
      d.body = json::serialize(json::object{
          {"event", "regression"}, {"pipeline", pipeline_json(in.pipeline, details)}, {"regressions", regressions}});
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::vector<db::NewDelivery> plan_bisection_end(const BisectionEndInputs& in) {
  std::vector<db::NewDelivery> out;
  for (const auto& r : in.reports) {
    if (!r.connection || r.connection->kind.empty() || r.state != "completed") continue;
    ReportInputs again = r;
    again.annotations.clear();
    const std::string conclusion = conclusion_of(again.pipeline.status, again.verdict);
    db::NewDelivery d = forge_delivery(again, conclusion, pipeline_page_url(in.public_url, again.pipeline.id));
    d.event = "bisection.finished";
    out.push_back(std::move(d));
  }
  boost::system::error_code ec;
  json::value bisection = json::parse(in.bisection_json, ec);
  if (ec) bisection = nullptr;
  json::value pipeline = nullptr;
  for (const auto& r : in.reports) {
    pipeline = pipeline_json(r.pipeline, pipeline_page_url(in.public_url, r.pipeline.id));
    break;
  }
  for (const auto& url : in.notify_urls) {
    db::NewDelivery d;
    d.kind = "webhook";
    d.subject = "webhook " + url;
    d.commit_sha = in.commit;
    if (!in.reports.empty()) d.pipeline_id = in.reports.front().pipeline.id;
    d.url = url;
    d.max_attempts = in.max_attempts;
    d.event = "bisection.finished";
    d.body = json::serialize(json::object{{"event", "bisection.finished"},
                                          {"commit", in.commit},
                                          {"url", commit_page_url(in.public_url, in.commit)},
                                          {"pipeline", pipeline},
                                          {"bisection", bisection}});
    out.push_back(std::move(d));
  }
  return out;
}

Result<OutgoingRequest> forge_request(const db::Delivery& d, const db::ForgeConnection& c, const std::string& token,
                                      std::optional<std::int64_t> check_run_id) {
  OutgoingRequest r;
  std::string root = c.api_url;
  while (!root.empty() && root.back() == '/') root.pop_back();
  r.method = d.method;
  r.url = root + d.url;
  r.body = d.body;
  if (d.kind == "check_run") {
    if (check_run_id) {
      r.method = "PATCH";
      r.url += "/" + std::to_string(*check_run_id);
    } else {
      // A new check run names the commit it is about; an update never does.
      boost::system::error_code ec;
      auto body = json::parse(d.body, ec);
      if (ec || !body.is_object())
        return make_error(Errc::internal, "delivery " + std::to_string(d.id) + " has no JSON body");
      body.as_object()["head_sha"] = d.commit_sha;
      r.body = json::serialize(body);
    }
  }
  r.headers.emplace_back("Content-Type", "application/json");
  if (c.kind == "github") {
    r.headers.emplace_back("Accept", "application/vnd.github+json");
    r.headers.emplace_back("X-GitHub-Api-Version", "2022-11-28");
    r.headers.emplace_back("Authorization", "Bearer " + token);
  } else if (c.kind == "gitea") {
    r.headers.emplace_back("Accept", "application/json");
    r.headers.emplace_back("Authorization", "token " + token);
  } else if (c.kind == "gitlab") {
    r.headers.emplace_back("PRIVATE-TOKEN", token);
  } else {
    return make_error(Errc::invalid_argument, "forge connection of '" + c.repo + "' has unknown kind '" + c.kind + "'");
  }
  return r;
}

OutgoingRequest webhook_request(const db::Delivery& d, const std::string& secret) {
  OutgoingRequest r;
  r.method = d.method;
  r.url = d.url;
  r.body = d.body;
  r.headers.emplace_back("Content-Type", "application/json");
  r.headers.emplace_back("X-Kport-Event", d.event);
  r.headers.emplace_back("X-Kport-Delivery", std::to_string(d.id));
  r.headers.emplace_back("X-Kport-Signature-256", "sha256=" + crypto::to_hex(crypto::hmac_sha256(secret, d.body)));
  return r;
}

std::string redact_url(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return "…";
  const auto path = url.find_first_of("/?#", scheme + 3);
  if (path == std::string_view::npos || url.substr(path) == "/") return std::string(url);
  return std::string(url.substr(0, path)) + "/…";
}

std::int64_t delivery_backoff_ms(int attempts, std::int64_t base_ms, std::int64_t max_ms,
                                 std::string_view retry_after) {
  std::int64_t wait = base_ms;
  for (int i = 1; i < attempts && wait < max_ms; ++i) wait *= 2;
  if (!retry_after.empty() && retry_after.size() <= 6 &&
      std::all_of(retry_after.begin(), retry_after.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    wait = std::max<std::int64_t>(wait, std::stoll(std::string(retry_after)) * 1000);
  return std::min(wait, max_ms);
}

db::DeliveryAttempt classify_answer(const db::Delivery& d, const OutgoingRequest& request,
                                    const Result<ClientAnswer>& answer, std::int64_t retry_at_ms, bool github_app) {
  db::DeliveryAttempt a;
  a.id = d.id;
  a.next_attempt_ms = retry_at_ms;
  const std::string what = request.method + " " + (d.kind == "webhook" ? redact_url(request.url) : request.url);
  if (!answer.ok()) {
    a.outcome = db::DeliveryAttempt::Outcome::retry;
    a.error = utf8::clip(what + ": " + answer.error().message, 1000);
    return a;
  }
  const ClientAnswer& ans = *answer;
  a.status = ans.status;
  const std::string excerpt = utf8::sanitize(utf8::truncate(ans.body, 300));
  const std::string answered =
      what + " answered " + std::to_string(ans.status) + (excerpt.empty() ? "" : ": " + excerpt);
  if (ans.status >= 200 && ans.status < 300) {
    a.outcome = db::DeliveryAttempt::Outcome::delivered;
    if (d.kind == "check_run" && request.method == "POST") {
      boost::system::error_code ec;
      auto body = json::parse(ans.body, ec);
      const json::value* id = !ec && body.is_object() ? body.as_object().if_contains("id") : nullptr;
      if (id && id->is_int64() && id->as_int64() > 0)
        a.check_run_id = id->as_int64();
      else if (id && id->is_uint64())
        a.check_run_id = static_cast<std::int64_t>(id->as_uint64());
      else
        a.error = "the answer held no check run id; the next state creates a new check run";
    }
    return a;
  }
  // GitHub says "rate limited" with a 403 (or 429) and its rate-limit headers: that is
  // a wait, not a refused token.
  const bool rate_limited =
      ans.status == 429 || (ans.status == 403 && (ans.ratelimit_remaining == "0" || !ans.retry_after.empty()));
  if (rate_limited || ans.status == 408 || ans.status >= 500) {
    a.outcome = db::DeliveryAttempt::Outcome::retry;
    a.error = utf8::clip(answered, 1000);
    return a;
  }
  if ((ans.status == 401 || ans.status == 403) && d.kind != "webhook" && d.repo) {
    a.outcome = db::DeliveryAttempt::Outcome::refused;
    if (github_app) {
      a.error = utf8::clip("the forge refused the GitHub App's installation token (" + answered + ")" +
                               (ans.status == 401 ? ", a fresh one too" : "") +
                               "; check that the app is installed on the repository with checks and statuses "
                               "write permission, then PUT /api/v1/repositories/" +
                               *d.repo + "/forge again",
                           1000);
      return a;
    }
    a.error = utf8::clip("the forge refused the token (" + answered +
                             "); put a valid token in the token file and PUT "
                             "/api/v1/repositories/" +
                             *d.repo + "/forge again",
                         1000);
    return a;
  }
  a.outcome = db::DeliveryAttempt::Outcome::failed;
  a.error = utf8::clip(answered, 1000);
  return a;
}

}  // namespace kport::coordinator
