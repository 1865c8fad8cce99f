// POST /api/v1/hooks/push: push events of GitHub, Gitea, GitLab and the post-receive
// hook, and pull (merge) request events, whose head is validated as a push of it (and
// whose close without a merge cancels the request's jobs). Order matters: the signature is checked before the body is parsed (an
// unauthenticated sender learns nothing and queues nothing), then the payload; then
// app::receive_push finds the repository and records the delivery with its pipeline in
// one transaction, so a redelivery racing the first one still makes one pipeline.
#include "app/pipelines.h"
#include "codec.h"
#include "push_event.h"
#include "hooks_and_verdicts.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

Response handle_push(Context& ctx, const Request& req) {
  HeaderLookup header = [&req](std::string_view name) { return req.header(name); };
  auto source = push_source(header);
  if (!source.ok()) return http::error_response(source.error());
  KPORT_HTTP_TRY(verify_push(*source, header, req.body, ctx.config.hook_secret));
  auto ev = parse_push(*source, header, req.body);
  if (!ev.ok()) return http::error_response(ev.error());
  if (!ev->is_push && !ev->is_pull && !ev->is_close) {
    const std::string note = ev->action.empty() ? "only push, pull request and merge request events start pipelines"
                                                : "a pull or merge request '" + ev->action +
                                                      "' does not change its head: nothing to validate";
    return http::json_response(
        202, json::object{{"outcome", "ignored"}, {"event", ev->event}, {"delivery", ev->delivery_id}, {"note", note}});
  }
  auto got = app::receive_push(ctx, *ev);
  if (!got.ok()) return http::error_response(got.error());
  const db::PushDelivery& d = got->delivery;
  const db::PushOutcome& out = got->outcome;
  json::object body{{"delivery", d.delivery_id},
                    {"source", d.source},
                    {"repo", d.repo},
                    {"ref", d.ref},
                    {"commit", d.after_sha},
                    {"outcome", out.outcome},
                    {"duplicate", out.duplicate},
                    {"forced", d.forced},
                    {"superseded_jobs", out.superseded_jobs},
                    {"stale", out.stale}};
  body["pipeline"] = out.pipeline ? to_json(*out.pipeline) : json::value(nullptr);
  if (!d.note.empty() && !out.duplicate) body["note"] = d.note;
  if (out.duplicate) return http::json_ok(body);
  return http::json_response(out.outcome == "pipeline" ? 201 : 202, body);
}

}  // namespace

void add_hook_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "POST", "/api/v1/hooks/push", [&ctx](const Request& req) { return handle_push(ctx, req); });
}

}  // namespace kport::coordinator
