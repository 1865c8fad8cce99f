// /api/v1/runners and the runner side of /api/v1/jobs: the pull protocol of docs/DESIGN.md.
// register -> token; claim (long-poll) -> lease; heartbeat extends it; results and
// build records upload idempotently; complete or fail ends the attempt.
#include <boost/asio/post.hpp>

#include "claim_broker.h"
#include "bringup_notices.h"
#include "codec.h"
#include "context.h"
#include "kport/common/crypto.h"
#include "kport/common/log.h"
#include "token_cache.h"
#include "hooks_and_verdicts.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

// Reads {"attempt": N, ...} and checks the job id path parameter.
struct JobCall {
  std::int64_t job_id = 0;
  int attempt = 0;
  json::object body;
};

Result<JobCall> job_call(const Request& req) {
  auto id = id_param(req, "id");
  if (!id.ok()) return std::move(id).error();
  auto obj = parse_object(req.body);
  if (!obj.ok()) return std::move(obj).error();
  Fields f(*obj, "");
  auto attempt = f.integer("attempt");
  if (!f.ok()) return f.error();
  if (attempt < 1 || attempt > 1000)
    return make_error(Errc::invalid_argument, "field 'attempt' must be the attempt number the claim returned (>= 1)");
  return JobCall{*id, static_cast<int>(attempt), std::move(*obj)};
}

json::value complete_json(std::int64_t job, const db::CompleteReply& r) {
  json::array spawned;
  for (auto id : r.spawned) spawned.emplace_back(id);
  json::object out{
      {"job", job}, {"status", db::to_string(r.status)}, {"duplicate", r.duplicate}, {"spawned", std::move(spawned)}};
  if (r.status == db::JobStatus::queued && !r.duplicate) out["retry_in_ms"] = r.retry_in.others_ms;
  return out;
}

// Parses the records of an upload into the caller's attempt. Commit, target and GPU are
// left as the body says: the store fills what is absent from the job and refuses what
// disagrees with it, in the transaction that checks the lease.
template <typename Record, typename Parse>
Result<std::vector<Record>> records_from(const json::object& body, std::string_view key, Parse parse,
                                         const JobCall& call, std::int64_t runner_id) {
  Fields top(body, "");
  const auto* arr = top.array(key);
  if (!top.ok()) return top.error();
  if (!arr || arr->empty() || arr->size() > 100000)
    return make_error(Errc::invalid_argument, "field '" + std::string(key) + "' must be an array of 1..100000 records");
  std::vector<Record> out;
  out.reserve(arr->size());
  for (std::size_t i = 0; i < arr->size(); ++i) {
    std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    if (!(*arr)[i].is_object()) return make_error(Errc::invalid_argument, "field '" + where + "' must be an object");
    Fields f((*arr)[i].as_object(), where);
    Record r = parse(f);
    if (!f.ok()) return f.error();
    r.job_id = call.job_id;
    r.attempt = call.attempt;
    if constexpr (requires { r.runner_id; }) r.runner_id = runner_id;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

void add_runner_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "POST", "/api/v1/runners/register", [&ctx](const Request& req) {
    int retry_after_s = 0;
    if (auto admitted = require_registration(req, ctx, retry_after_s); !admitted.ok()) {
      auto res = http::error_response(admitted.error());
      if (retry_after_s > 0) res.set_header("Retry-After", std::to_string(retry_after_s));
      return res;
    }
    auto obj = parse_object(req.body);
    if (!obj.ok()) return http::error_response(obj.error());
    auto asked = api::parse_runner_registration(*obj);
    if (!asked.ok()) return http::error_response(asked.error());
    db::NewRunner nr;
    nr.name = asked->name;
    const std::string role(api::to_string(asked->role));
    nr.role = db::parse_runner_role(role).value_or(db::RunnerRole::build);  // the same two names
    nr.caps = to_caps(asked->capabilities);
    if (nr.role == db::RunnerRole::gpu && nr.caps.arch.empty())
      return http::error_response(
          make_error(Errc::invalid_argument, "a gpu runner must report 'capabilities.arch' (e.g. \"9.0\")"));
    auto reg = ctx.store->register_runner(nr);
    if (!reg.ok()) return http::error_response(reg.error());
    if (ctx.tokens) ctx.tokens->add(reg->runner.id, crypto::sha256_hex(reg->token));
    ctx.broker->notify();
    ctx.events->publish("runners", "runner", json::serialize(to_json(reg->runner)));
    log::info("runner registered", {{"runner", reg->runner.id}, {"name", nr.name}, {"role", role}});
    api::RegistrationAnswer answer{to_runner_info(reg->runner), reg->token,
                                   std::max<std::int64_t>(ctx.config.lease_ms / 3, 100), ctx.config.max_claim_wait_s};
    return http::json_response(201, api::to_json(answer));
  });

  add_blocking(router, ctx, "GET", "/api/v1/runners", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto list = ctx.store->list_runners(req.query_or("all") == "1" || req.query_or("all") == "true");
    if (!list.ok()) return http::error_response(list.error());
    return http::json_ok(list_to_json(*list));
  });

  add_blocking(router, ctx, "GET", "/api/v1/runners/{id}", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto id = id_param(req, "id");
    KPORT_HTTP_TRY(id);
    auto r = ctx.store->get_runner(*id);
    if (!r.ok()) return http::error_response(r.error());
    if (!*r)
      return http::error_response(make_error(Errc::not_found, "runner " + std::to_string(*id) + " does not exist"));
    return http::json_ok(to_json(**r));
  });

  add_blocking(router, ctx, "POST", "/api/v1/runners/heartbeat", [&ctx](const Request& req) {
    auto who = require_runner(req, ctx);
    KPORT_HTTP_TRY(who);
    api::HeartbeatRequest beat;
    if (!req.body.empty()) {
      auto obj = parse_object(req.body);
      if (!obj.ok()) return http::error_response(obj.error());
      Fields f(*obj, "");
      beat = api::read_heartbeat_request(f);
      if (!f.ok()) return http::error_response(f.error());
    }
    auto hb = ctx.store->heartbeat(who->runner_id, beat.job, beat.attempt, ctx.config.lease_ms);
    if (!hb.ok()) return http::error_response(hb.error());
    return http::json_ok(api::to_json(api::HeartbeatAnswer{hb->lease_expires_ms, hb->cancel_requested}));
  });

  add_blocking(router, ctx, "POST", "/api/v1/runners/deregister", [&ctx](const Request& req) {
    auto who = require_runner(req, ctx);
    KPORT_HTTP_TRY(who);
    auto released = ctx.store->deregister_runner(who->runner_id);
    KPORT_HTTP_TRY(released);
    if (ctx.tokens) ctx.tokens->remove(who->runner_id);
    ctx.broker->notify();
    // The job it gave back is claimable once its backoff ends: wake parked claims then.
    if (released->others_ms > 0) ctx.broker->notify_in(std::chrono::milliseconds(released->others_ms));
    log::info("runner deregistered", {{"runner", who->runner_id}});
    return http::json_ok(json::object{{"runner", who->runner_id}, {"deregistered", true}});
  });

  // Long-poll: parks in the broker without holding a worker thread.
  router.add(
      "POST", "/api/v1/runners/claim",
      [&ctx](Request&& req, http::Reply reply) {
        boost::asio::post(*ctx.workers, [&ctx, req = std::move(req), reply = std::move(reply)]() mutable {
          auto who = require_runner(req, ctx);
          if (!who.ok()) return reply(http::error_response(who.error()));
          int wait_s = 0;
          if (auto w = req.query_or("wait"); !w.empty()) {
            char* end = nullptr;
            long v = std::strtol(std::string(w).c_str(), &end, 10);
            if (*end != '\0' || v < 0)
              return reply(http::error_response(make_error(Errc::invalid_argument, "wait must be seconds >= 0")));
            wait_s = static_cast<int>(std::min<long>(v, ctx.config.max_claim_wait_s));
          }
          if (req.stopping()) wait_s = 0;
          ctx.broker->claim(who->runner_id, std::chrono::seconds(wait_s), std::move(reply));
        });
      },
      "/api/v1/runners/claim");

  add_blocking(router, ctx, "POST", "/api/v1/jobs/{id}/complete", [&ctx](const Request& req) {
    auto who = require_runner(req, ctx);
    KPORT_HTTP_TRY(who);
    auto call = job_call(req);
    KPORT_HTTP_TRY(call);
    Fields f(call->body, "");
    auto status = f.opt_str("status", 16).value_or("succeeded");
    auto reason = f.opt_str("reason", 65536).value_or("");
    // "retryable": true marks a passing cause (a clone that timed out, a GPU that fell
    // off the bus): the job backs off and runs again while attempts remain. false, or
    // no flag, is permanent (repository not found, a bad manifest): it fails at once
    // with its reason. "retry" is the older name of the same flag.
    const bool retryable = f.boolean("retryable", false);
    const bool retry_alias = f.boolean("retry", false);
    if (!f.ok()) return http::error_response(f.error());
    if (call->body.contains("retryable") && call->body.contains("retry") && retryable != retry_alias)
      return http::error_response(
          make_error(Errc::invalid_argument, "fields 'retryable' and 'retry' disagree; send 'retryable' alone"));
    const bool retry = call->body.contains("retryable") ? retryable : retry_alias;
    Result<db::CompleteReply> r = make_error(Errc::internal, "unset");
    if (status == "succeeded")
      r = ctx.store->complete(call->job_id, who->runner_id, call->attempt);
    else if (status == "failed") {
      if (reason.empty())
        return http::error_response(make_error(Errc::invalid_argument, "a failed job needs a 'reason'"));
      r = ctx.store->fail(call->job_id, who->runner_id, call->attempt, reason, retry);
    } else {
      return http::error_response(make_error(Errc::invalid_argument, "field 'status' must be succeeded or failed"));
    }
    if (!r.ok()) return http::error_response(r.error());
    if (!r->spawned.empty()) ctx.broker->notify();
    if (r->status == db::JobStatus::queued && !r->duplicate) {
      ctx.broker->notify_in(std::chrono::milliseconds(r->retry_in.others_ms));
      ctx.broker->notify_in(std::chrono::milliseconds(r->retry_in.same_ms));
    }
    auto body = complete_json(call->job_id, *r);
    if (!r->duplicate) ctx.events->publish("jobs", "job", json::serialize(body));
    if (!r->duplicate) review_commit(ctx, call->job_id);   // may queue re-measures
    if (!r->duplicate) notify_bringup(ctx, call->job_id);  // milestones and drops, to the webhooks
    return http::json_ok(body);
  });

  add_blocking(router, ctx, "POST", "/api/v1/jobs/{id}/results", [&ctx](const Request& req) {
    auto who = require_runner(req, ctx);
    KPORT_HTTP_TRY(who);
    auto call = job_call(req);
    KPORT_HTTP_TRY(call);
    auto records = records_from<db::ResultRecord>(call->body, "results", result_from_json, *call, who->runner_id);
    KPORT_HTTP_TRY(records);
    auto out = ctx.store->put_results(*records);
    if (!out.ok()) return http::error_response(out.error());
    json::array ids;
    std::int64_t dup = 0;
    for (const auto& o : *out) {
      ids.emplace_back(o.id);
      dup += o.duplicate;
    }
    if (dup < static_cast<std::int64_t>(out->size()))
      ctx.events->publish("results", "results", json::serialize(json::object{{"job", call->job_id}, {"ids", ids}}));
    return http::json_ok(json::object{
        {"stored", out->size() - static_cast<std::size_t>(dup)}, {"duplicates", dup}, {"ids", std::move(ids)}});
  });

  add_blocking(router, ctx, "POST", "/api/v1/jobs/{id}/builds", [&ctx](const Request& req) {
    auto who = require_runner(req, ctx);
    KPORT_HTTP_TRY(who);
    auto call = job_call(req);
    KPORT_HTTP_TRY(call);
    auto records = records_from<db::BuildRecord>(call->body, "records", build_record_from_json, *call, who->runner_id);
    KPORT_HTTP_TRY(records);
    auto out = ctx.store->put_build_records(*records, who->runner_id);
    if (!out.ok()) return http::error_response(out.error());
    json::array ids;
    std::int64_t dup = 0;
    for (const auto& o : *out) {
      ids.emplace_back(o.id);
      dup += o.duplicate;
    }
    return http::json_ok(json::object{
        {"stored", out->size() - static_cast<std::size_t>(dup)}, {"duplicates", dup}, {"ids", std::move(ids)}});
  });

  add_blocking(router, ctx, "POST", "/api/v1/jobs/{id}/log", [&ctx](const Request& req) {
    auto who = require_runner(req, ctx);
    KPORT_HTTP_TRY(who);
    auto call = job_call(req);
    KPORT_HTTP_TRY(call);
    Fields f(call->body, "");
    auto text = f.str("text", 16u << 20);
    if (!f.ok()) return http::error_response(f.error());
    KPORT_HTTP_TRY(ctx.store->append_job_log(call->job_id, who->runner_id, call->attempt, text));
    return http::json_ok(json::object{{"job", call->job_id}, {"appended", text.size()}});
  });
}

}  // namespace kport::coordinator
