// POST /api/v1/hooks/push: push events of GitHub, Gitea, GitLab and the post-receive
// hook. Order matters: the signature is checked before the body is parsed (an
// unauthenticated sender learns nothing and queues nothing), then the payload, then
// the repository; the delivery id deduplicates inside the same transaction that
// creates the pipeline, so a redelivery racing the first one still makes one pipeline.
#include "claim_broker.h"
#include "codec.h"
#include "kport/common/log.h"
#include "push_event.h"
#include "watch.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

// The registered repository a push names: by name first, then by any of its URLs.
Result<db::Repository> find_repository(Context& ctx, const PushEvent& ev) {
  auto repos = ctx.store->list_repositories();
  if (!repos.ok()) return std::move(repos).error();
  for (const auto& r : *repos)
    if (!ev.repo_name.empty() && r.name == ev.repo_name) return r;
  for (const auto& r : *repos)
    for (const auto& u : ev.repo_urls)
      if (r.url == u) return r;
  return make_error(Errc::not_found, "repository '" + (ev.repo_name.empty() ? ev.repo_urls.front() : ev.repo_name) +
                                         "' is not registered; POST /api/v1/repositories {name, url} with that name");
}

// Build jobs for every known target, unless the commit was already validated.
Result<std::optional<db::NewPipeline>> push_pipeline(Context& ctx, const PushEvent& ev, const std::string& repo,
                                                     std::string& note) {
  db::PipelineFilter pf;
  pf.commit_sha = ev.after;
  pf.limit = 1;
  auto earlier = ctx.store->list_pipelines(pf);
  if (!earlier.ok()) return std::move(earlier).error();
  if (!earlier->items.empty()) {
    note = "commit already validated by pipeline " + std::to_string(earlier->items.front().id);
    return std::optional<db::NewPipeline>{};
  }
  auto targets = ctx.store->list_targets();
  if (!targets.ok()) return std::move(targets).error();
  if (targets->empty()) {
    note = "no targets are known yet: nothing to build (PUT /api/v1/targets/{target})";
    return std::optional<db::NewPipeline>{};
  }
  db::NewPipeline np;
  np.reason = db::PipelineReason::push;
  np.repo = repo;
  np.ref = ev.ref;
  np.commit_sha = ev.after;
  np.note = ev.source + " push of " + ev.ref + (ev.forced ? " (forced)" : "") + ", delivery " + ev.delivery_id;
  for (const auto& t : *targets) {
    db::JobSpec spec;
    spec.kind = db::JobKind::build;
    spec.commit_sha = ev.after;
    spec.target = t.name;
    spec.max_attempts = ctx.config.max_attempts;
    np.jobs.push_back(std::move(spec));
  }
  return std::optional<db::NewPipeline>(std::move(np));
}

Response handle_push(Context& ctx, const Request& req) {
  HeaderLookup header = [&req](std::string_view name) { return req.header(name); };
  auto source = push_source(header);
  if (!source.ok()) return http::error_response(source.error());
  KPORT_HTTP_TRY(verify_push(*source, header, req.body, ctx.config.hook_secret));
  auto ev = parse_push(*source, header, req.body);
  if (!ev.ok()) return http::error_response(ev.error());
  if (!ev->is_push)
    return http::json_response(202, json::object{{"outcome", "ignored"}, {"event", ev->event}, {"delivery", ev->delivery_id},
                                                 {"note", "only push events start pipelines"}});
  auto repo = find_repository(ctx, *ev);
  if (!repo.ok()) return http::error_response(repo.error());

  db::PushDelivery d;
  d.delivery_id = ev->delivery_id;
  d.source = ev->source;
  d.repo = repo->name;
  d.ref = ev->ref;
  d.before_sha = ev->before;
  d.after_sha = ev->after;
  d.deleted = ev->deleted;
  d.forced = ev->forced;
  for (const auto& c : ev->commits)
    d.commits.push_back(db::Commit{c.sha, repo->name, c.parent, c.message, c.author, c.time_ms});

  std::optional<db::NewPipeline> pipeline;
  if (ev->deleted) {
    d.note = "branch deleted";
  } else if (ev->ref.rfind("refs/heads/", 0) != 0) {
    d.note = "only branch pushes are validated, not " + ev->ref;
  } else {
    auto p = push_pipeline(ctx, *ev, repo->name, d.note);
    if (!p.ok()) return http::error_response(p.error());
    pipeline = std::move(*p);
  }
  auto out = ctx.store->record_push(d, pipeline);
  if (!out.ok()) return http::error_response(out.error());

  json::object body{{"delivery", d.delivery_id}, {"source", d.source}, {"repo", d.repo}, {"ref", d.ref},
                    {"commit", d.after_sha}, {"outcome", out->outcome}, {"duplicate", out->duplicate},
                    {"forced", d.forced}, {"superseded_jobs", out->superseded_jobs}};
  body["pipeline"] = out->pipeline ? to_json(*out->pipeline) : json::value(nullptr);
  if (!d.note.empty() && !out->duplicate) body["note"] = d.note;
  if (out->duplicate) {
    log::info("push delivery repeated", {{"delivery", d.delivery_id}, {"repo", d.repo}});
    return http::json_ok(body);
  }
  if (out->pipeline && out->outcome == "pipeline") {
    ctx.broker->notify();
    ctx.events->publish("pipelines", "pipeline", json::serialize(to_json(*out->pipeline)));
  }
  if (out->superseded_jobs > 0) ctx.broker->notify();
  log::info("push received", {{"delivery", d.delivery_id}, {"source", d.source}, {"repo", d.repo}, {"ref", d.ref},
                              {"commit", d.after_sha}, {"outcome", out->outcome}, {"forced", d.forced},
                              {"superseded_jobs", out->superseded_jobs}});
  return http::json_response(out->outcome == "pipeline" ? 201 : 202, body);
}

}  // namespace

void add_hook_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "POST", "/api/v1/hooks/push", [&ctx](const Request& req) { return handle_push(ctx, req); });
}

}  // namespace kport::coordinator
