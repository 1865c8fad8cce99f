// Triggered and pushed pipelines: the reasons whose jobs are builds of every target.
#include "pipelines.h"

#include "claim_broker.h"
#include "codec.h"
#include "kport/common/log.h"

namespace kport::coordinator::app {
namespace json = boost::json;

namespace {

// Wakes parked claims and tells event subscribers; every new pipeline goes through here.
void announce(Context& ctx, const db::Pipeline& p) {
  ctx.broker->notify();
  ctx.events->publish("pipelines", "pipeline", json::serialize(to_json(p)));
  log::info("pipeline created", {{"pipeline", p.id},
                                 {"reason", std::string(db::to_string(p.reason))},
                                 {"commit", p.commit_sha},
                                 {"jobs", p.jobs_total}});
}

// The pipeline that already validates `sha`, if any.
Result<std::optional<db::Pipeline>> existing_pipeline(Context& ctx, const std::string& sha) {
  db::PipelineFilter pf;
  pf.commit_sha = sha;
  pf.limit = 1;
  auto earlier = ctx.store->list_pipelines(pf);
  if (!earlier.ok()) return std::move(earlier).error();
  if (earlier->items.empty()) return std::optional<db::Pipeline>{};
  return std::optional<db::Pipeline>(earlier->items.front());
}

Result<std::vector<std::string>> all_targets(Context& ctx) {
  auto all = ctx.store->list_targets();
  if (!all.ok()) return std::move(all).error();
  std::vector<std::string> names;
  for (const auto& t : *all) names.push_back(t.name);
  return names;
}

// The registered repository a push names: by name first, then by any of its URLs.
Result<db::Repository> find_repository(Context& ctx, const PushEvent& ev) {
  auto repos = ctx.store->list_repositories();
  if (!repos.ok()) return std::move(repos).error();
  for (const auto& r : *repos)
    if (!ev.repo_name.empty() && r.name == ev.repo_name) return r;
  for (const auto& r : *repos)
    for (const auto& u : ev.repo_urls)
      if (r.url == u) return r;
  const std::string named =
      ev.repo_name.empty() ? (ev.repo_urls.empty() ? std::string("?") : ev.repo_urls.front()) : ev.repo_name;
  return make_error(Errc::not_found, "repository '" + named +
                                         "' is not registered; POST /api/v1/repositories {name, url} with that name");
}

db::PushDelivery delivery_of(const PushEvent& ev, const std::string& repo) {
  db::PushDelivery d;
  d.delivery_id = ev.delivery_id;
  d.source = ev.source;
  d.repo = repo;
  d.ref = ev.ref;
  d.before_sha = ev.before;
  d.after_sha = ev.after;
  d.deleted = ev.deleted;
  d.forced = ev.forced;
  for (const auto& c : ev.commits)
    d.commits.push_back(db::Commit{c.sha, repo, c.parent, c.message, c.author, c.time_ms});
  return d;
}

// A delete or a rewind cancels the ref's queued work, so it is acted on only once the
// repository says it happened: the signature covers the body, not its freshness, and a
// replayed event (with a fresh delivery id) whose `before` happens to be the recorded
// head would otherwise cancel live work. The registered URL is asked, never one the
// payload names. conflict when the repository disagrees, unavailable when it cannot say.
//
// A pull request's new head is not asked: its ref lives on the forge, not always in the
// registered repository, and the store acts on it only when its `before` is the head it
// recorded for the request (a replay names an older one and is stale).
Status confirm_ref_update(Context& ctx, const PushEvent& ev, const db::Repository& repo) {
  if ((!ev.deleted && !ev.forced) || ev.is_pull) return {};
  const std::string what =
      ev.deleted ? "delete of " + ev.ref : "force push of " + ev.ref + " to " + ev.after.substr(0, 12);
  if (!ctx.ref_lookup)
    return make_error(Errc::unavailable,
                      "the " + what + " cannot be confirmed: this coordinator has no way to ask the repository");
  auto now = ctx.ref_lookup(repo.url, ev.ref);
  if (!now.ok())
    return make_error(Errc::unavailable, "the " + what + " is not acted on until the repository confirms it, and " +
                                             repo.url + " cannot be asked now (" + now.error().message +
                                             "); deliver it again later");
  const std::string nothing = "; nothing changed (delivery " + ev.delivery_id + ")";
  if (ev.deleted && *now)
    return make_error(Errc::conflict, "the " + what + " is not confirmed by the repository: " + repo.name +
                                          " still has " + ev.ref + " at " + (*now)->substr(0, 12) + nothing);
  if (!ev.deleted && !*now)
    return make_error(Errc::conflict, "the " + what + " is not confirmed by the repository: " + repo.name + " has no " +
                                          ev.ref + nothing);
  if (!ev.deleted && **now != ev.after)
    return make_error(Errc::conflict, "the " + what + " is not confirmed by the repository: " + repo.name + " has " +
                                          ev.ref + " at " + (*now)->substr(0, 12) + ", not " + ev.after.substr(0, 12) +
                                          nothing);
  return {};
}

}  // namespace

Result<Triggered> trigger(Context& ctx, const TriggerRequest& rq) {
  if (!builds_from_scratch(rq.origin.reason))
    return make_error(Errc::unprocessable, "a " + std::string(db::to_string(rq.origin.reason)) +
                                               " pipeline checks the builds a GPU model needs and is opened by"
                                               " POST /api/v1/revalidations {gpu_model, driver}, not queued directly");
  std::vector<std::string> targets = rq.targets;
  if (targets.empty()) {
    auto all = all_targets(ctx);
    if (!all.ok()) return std::move(all).error();
    targets = std::move(*all);
    if (targets.empty())
      return make_error(Errc::unprocessable,
                        "no targets are known yet: name 'targets' or register them with PUT /api/v1/targets/{target}");
  }
  for (const auto& t : targets) {
    auto known = ctx.store->get_target(t);
    if (!known.ok()) return std::move(known).error();
    if (!*known) return make_error(Errc::not_found, "target '" + t + "' is not known; GET /api/v1/targets lists them");
  }
  const db::NewPipeline np = plan_builds(rq.origin, targets, ctx.config.max_attempts, rq.payload_json);
  auto p = ctx.store->create_pipeline(np);
  if (!p.ok() && p.error().code == Errc::conflict && np.once_per_commit) {
    // Another push of the commit won: answer with its pipeline, as a webhook would.
    auto earlier = existing_pipeline(ctx, rq.origin.commit_sha);
    if (!earlier.ok()) return std::move(earlier).error();
    if (*earlier) return Triggered{**earlier, false, p.error().message};
  }
  if (!p.ok()) return std::move(p).error();
  announce(ctx, *p);
  return Triggered{std::move(*p), true, ""};
}

Result<PushReceived> receive_push(Context& ctx, const PushEvent& ev) {
  auto repo = find_repository(ctx, ev);
  if (!repo.ok()) return std::move(repo).error();
  if (auto confirmed = confirm_ref_update(ctx, ev, *repo); !confirmed.ok()) {
    log::warn(
        "push not confirmed by the repository",
        {{"delivery", ev.delivery_id}, {"repo", repo->name}, {"ref", ev.ref}, {"reason", confirmed.error().message}});
    return std::move(confirmed).error();
  }
  PushReceived out;
  out.delivery = delivery_of(ev, repo->name);
  if (ev.is_pull && ev.forced && is_null_sha(ev.before)) {
    // Gitea's synchronized names no previous head: the one recorded for the request is it.
    auto head = ctx.store->ref_head(repo->name, ev.ref);
    if (!head.ok()) return std::move(head).error();
    if (*head) out.delivery.before_sha = **head;
  }
  db::PushDelivery& d = out.delivery;
  std::optional<db::NewPipeline> pipeline;
  if (ev.is_close) {
    d.closed = true;
    d.note = ev.source + (ev.source == "gitlab" ? " merge request !" : " pull request #") +
             std::to_string(ev.pull_number) + " closed without merging: its jobs are cancelled";
  } else if (ev.deleted) {
    d.note = "branch deleted";
  } else if (ev.ref.rfind("refs/heads/", 0) != 0 && !ev.is_pull) {
    d.note = "only branch pushes are validated, not " + ev.ref;
  } else {
    auto targets = all_targets(ctx);
    if (!targets.ok()) return std::move(targets).error();
    if (targets->empty()) {
      d.note = "no targets are known yet: nothing to build (PUT /api/v1/targets/{target})";
    } else {
      const std::string what = ev.is_pull
                                   ? ev.source + (ev.source == "gitlab" ? " merge request !" : " pull request #") +
                                         std::to_string(ev.pull_number) + " " + ev.action + " into " + ev.base_ref
                                   : ev.source + " push of " + ev.ref + (ev.forced ? " (forced)" : "");
      PipelineOrigin origin{db::PipelineReason::push, repo->name, ev.ref, ev.after,
                            what + ", delivery " + ev.delivery_id};
      pipeline = plan_builds(origin, *targets, ctx.config.max_attempts);
    }
  }
  auto recorded = ctx.store->record_push(d, pipeline);
  if (!recorded.ok()) return std::move(recorded).error();
  out.outcome = std::move(*recorded);
  if (out.outcome.duplicate) {
    log::info("push delivery repeated", {{"delivery", d.delivery_id}, {"repo", d.repo}});
    return out;
  }
  d.note = out.outcome.note;  // the store's, when it found the commit already validated
  if (out.outcome.pipeline && out.outcome.outcome == "pipeline") announce(ctx, *out.outcome.pipeline);
  if (out.outcome.superseded_jobs > 0) {
    ctx.broker->notify();
    ctx.events->publish("jobs", "job",
                        json::serialize(json::object{{"ref", d.ref}, {"cancelled", out.outcome.superseded_jobs}}));
  }
  log::info("push received", {{"delivery", d.delivery_id},
                              {"source", d.source},
                              {"repo", d.repo},
                              {"ref", d.ref},
                              {"commit", d.after_sha},
                              {"outcome", out.outcome.outcome},
                              {"forced", d.forced},
                              {"superseded_jobs", out.outcome.superseded_jobs},
                              {"stale", out.outcome.stale}});
  return out;
}

}  // namespace kport::coordinator::app
