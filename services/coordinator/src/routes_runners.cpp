// /api/v1/runners and the runner side of /api/v1/jobs: the pull protocol of docs/DESIGN.md.
// register -> token; claim (long-poll) -> lease; heartbeat extends it; results and
// build records upload idempotently; complete or fail ends the attempt.
#include <boost/asio/post.hpp>

#include "claim_broker.h"
#include "bringup_notices.h"
#include "codec.h"
#include "context.h"
#include "families.h"
#include "kport/api/job_report.h"
#include "kport/common/crypto.h"
#include "kport/common/log.h"
#include "kport/porting/op_shape.h"
#include "token_cache.h"
#include "hooks_and_verdicts.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

// A call about job `{id}`: the id path parameter, then the body read by `parse` (a
// kport::api job report, which reads the attempt first).
template <typename Parse>
auto job_call(const Request& req, Parse parse) -> std::pair<std::int64_t, decltype(parse(json::object{}))> {
  using Parsed = decltype(parse(json::object{}));
  auto id = id_param(req, "id");
  if (!id.ok()) return {0, Parsed(std::move(id).error())};
  auto obj = parse_object(req.body);
  if (!obj.ok()) return {*id, Parsed(std::move(obj).error())};
  return {*id, parse(*obj)};
}

json::value complete_json(std::int64_t job, const db::CompleteReply& r) {
  api::JobCompleted out{job, std::string(db::to_string(r.status)), r.duplicate, r.spawned, std::nullopt};
  if (r.status == db::JobStatus::queued && !r.duplicate) out.retry_in_ms = r.retry_in.others_ms;
  return api::to_json(out);
}

// What a batch upload stored, in the batch's order.
template <typename Outcomes>
api::UploadStored stored_of(const Outcomes& outcomes) {
  api::UploadStored s;
  for (const auto& o : outcomes) {
    s.ids.push_back(o.id);
    s.duplicates += o.duplicate;
  }
  s.stored = static_cast<std::int64_t>(s.ids.size()) - s.duplicates;
  return s;
}

// The records of an upload, in the caller's attempt. Commit, target and GPU are left as
// the body says: the store fills what is absent from the job and refuses what disagrees
// with it, in the transaction that checks the lease.
template <typename Record, typename Upload, typename Convert>
std::vector<Record> records_of(const std::vector<Upload>& uploads, Convert convert, std::int64_t job_id, int attempt,
                               std::int64_t runner_id) {
  std::vector<Record> out;
  out.reserve(uploads.size());
  for (const auto& u : uploads) {
    Record r = convert(u);
    r.job_id = job_id;
    r.attempt = attempt;
    if constexpr (requires { r.runner_id; }) r.runner_id = runner_id;
    out.push_back(std::move(r));
  }
  return out;
}

// Every result whose family is known and whose shape is not one of it (a key the family
// lacks, a dimension left out that has no default, a value out of its declared range):
// invalid_argument naming each, "field 'results[3].shape': ...". A family kport does not
// know is not checked: its results count for nothing a question can ask.
Status check_shapes(const porting::FamilySet& families, const std::vector<api::ResultUpload>& results) {
  std::string refused;
  std::size_t count = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const porting::OpFamily* f = families.find(results[i].family);
    if (!f) continue;
    auto shape = porting::op_shape(*f, results[i].shape);
    if (shape.ok()) continue;
    if (++count <= 20)
      refused += (refused.empty() ? "" : "; ") + std::string("field 'results[") + std::to_string(i) + "].shape': '" +
                 results[i].shape + "' is not a shape of " + f->name + ": " + shape.error().message;
  }
  if (count == 0) return {};
  if (count > 20) refused += "; and " + std::to_string(count - 20) + " more";
  return make_error(Errc::invalid_argument,
                    refused + " (nothing of the batch was stored; send the other results again)");
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
    api::RunnerList out;
    for (const auto& r : *list) out.items.push_back(to_runner_info(r));
    return http::json_ok(api::to_json(out));
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
    return http::json_ok(api::to_json(api::Deregistered{who->runner_id, true}));
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
    auto [job_id, asked] = job_call(req, [](const json::object& o) { return api::parse_job_completion(o); });
    KPORT_HTTP_TRY(asked);
    Result<db::CompleteReply> r =
        asked->succeeded ? ctx.store->complete(job_id, who->runner_id, asked->attempt)
                         : ctx.store->fail(job_id, who->runner_id, asked->attempt, asked->reason, asked->retry);
    if (!r.ok()) return http::error_response(r.error());
    if (!r->spawned.empty()) ctx.broker->notify();
    if (r->status == db::JobStatus::queued && !r->duplicate) {
      ctx.broker->notify_in(std::chrono::milliseconds(r->retry_in.others_ms));
      ctx.broker->notify_in(std::chrono::milliseconds(r->retry_in.same_ms));
    }
    auto body = complete_json(job_id, *r);
    if (!r->duplicate) ctx.events->publish("jobs", "job", json::serialize(body));
    if (!r->duplicate) review_commit(ctx, job_id);   // may queue re-measures
    if (!r->duplicate) notify_bringup(ctx, job_id);  // milestones and drops, to the webhooks
    return http::json_ok(body);
  });

  add_blocking(router, ctx, "POST", "/api/v1/jobs/{id}/results", [&ctx](const Request& req) {
    auto who = require_runner(req, ctx);
    KPORT_HTTP_TRY(who);
    auto [job_id, batch] = job_call(req, [](const json::object& o) { return api::parse_result_batch(o); });
    KPORT_HTTP_TRY(batch);
    // A shape is read by its family's declared dims; one the family does not have is refused
    // as any malformed field is: the whole batch, every such result named, nothing stored
    // (a batch is one transaction, idempotent per attempt). The runner sends the rest again.
    const auto families = ctx.families->current();
    KPORT_HTTP_TRY(check_shapes(*families, batch->results));
    // A harness that times but does not count its work (another team's) still gets its
    // figures, from what its library declares.
    for (auto& r : batch->results) fill_throughput(*families, r);
    auto out = ctx.store->put_results(
        records_of<db::ResultRecord>(batch->results, to_record, job_id, batch->attempt, who->runner_id));
    if (!out.ok()) return http::error_response(out.error());
    const api::UploadStored stored = stored_of(*out);
    const json::object answer = api::to_json(stored);
    if (stored.stored > 0)
      ctx.events->publish("results", "results",
                          json::serialize(json::object{{"job", job_id}, {"ids", answer.at("ids")}}));
    return http::json_ok(answer);
  });

  add_blocking(router, ctx, "POST", "/api/v1/jobs/{id}/builds", [&ctx](const Request& req) {
    auto who = require_runner(req, ctx);
    KPORT_HTTP_TRY(who);
    auto [job_id, batch] = job_call(req, [](const json::object& o) { return api::parse_build_record_batch(o); });
    KPORT_HTTP_TRY(batch);
    auto out = ctx.store->put_build_records(
        records_of<db::BuildRecord>(batch->records, to_build_record, job_id, batch->attempt, who->runner_id),
        who->runner_id);
    if (!out.ok()) return http::error_response(out.error());
    return http::json_ok(api::to_json(stored_of(*out)));
  });

  add_blocking(router, ctx, "POST", "/api/v1/jobs/{id}/log", [&ctx](const Request& req) {
    auto who = require_runner(req, ctx);
    KPORT_HTTP_TRY(who);
    auto [job_id, chunk] = job_call(req, [](const json::object& o) { return api::parse_job_log_append(o); });
    KPORT_HTTP_TRY(chunk);
    KPORT_HTTP_TRY(ctx.store->append_job_log(job_id, who->runner_id, chunk->attempt, chunk->text));
    return http::json_ok(api::to_json(api::JobLogAppended{job_id, static_cast<std::int64_t>(chunk->text.size())}));
  });
}

}  // namespace kport::coordinator
