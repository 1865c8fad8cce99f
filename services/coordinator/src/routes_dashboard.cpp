// /api/v1/dashboard/...: one request per dashboard page, shaped for it, so a page paints
// from a single answer. Each route reads summaries (dashboard.h), never the whole
// result history, and the JSON views live in dashboard_views.cpp. Answers are reused
// until an event says the data changed (dashboard_cache.h).
#include <algorithm>
#include <map>

#include "app/bisections.h"
#include "bringup_stages.h"
#include "codec.h"
#include "context.h"
#include "dashboard_cache.h"
#include "dashboard_views.h"
#include "families.h"
#include "verdict.h"

namespace kport::coordinator {
namespace json = boost::json;
using http::Request;
using http::Response;

namespace {

constexpr std::size_t k_recent_pipelines = 10;
constexpr int k_recent_results = 15;
constexpr std::size_t k_changes_per_group = 200;
// Bounds what events do not announce: runners going quiet, awaiting-runner states.
constexpr std::int64_t k_cache_max_age_ms = 5000;

// Whether a family's figures are GB/s rather than TFLOP/s: as its library declares it.
bool memory_bound(const Context& ctx, std::string_view family) {
  if (!ctx.families) return false;
  const auto known = ctx.families->current();
  const porting::OpFamily* f = known->find(family);
  return f && f->bound() == porting::Bound::memory;
}

bool hex_sha(std::string_view s) {
  if (s.size() < 7 || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Error unknown_target(std::string_view name) {
  return make_error(Errc::not_found, "target '" + std::string(name) + "' is not known; GET /api/v1/targets lists them");
}

// The results a target's matrix cites, loaded by id (a primary-key read each).
Result<std::map<std::int64_t, db::ResultRecord>> evidence_of(Context& ctx, const db::TargetBoard& board) {
  std::map<std::int64_t, db::ResultRecord> out;
  for (const auto& v : board.variants)
    for (const auto& id : {v.pass_result_id, v.fail_result_id}) {
      if (!id || out.count(*id)) continue;
      auto r = ctx.store->get_result(*id);
      if (!r.ok()) return std::move(r).error();
      if (*r) out.emplace(*id, std::move(**r));
    }
  return out;
}

Response overview(Context& ctx) {
  auto targets = ctx.store->list_targets();
  if (!targets.ok()) return http::error_response(targets.error());
  json::array rows;
  for (const auto& t : *targets) {
    auto board = ctx.store->target_board(t.name);
    if (!board.ok()) return http::error_response(board.error());
    if (!*board) continue;
    // One row per library that built the target: the one built last first.
    std::vector<db::TargetBoard> boards{**board};
    for (const auto& repo : (*board)->repositories) {
      if ((*board)->repo == repo) continue;
      auto other = ctx.store->target_board(t.name, std::nullopt, repo);
      if (!other.ok()) return http::error_response(other.error());
      if (*other) boards.push_back(std::move(**other));
    }
    for (const auto& b : boards) {
      const porting::BringupStages stages = stages_of(b);
      rows.push_back(json::object{{"name", t.name},
                                  {"arch", t.arch},
                                  {"toolkit", t.toolkit},
                                  {"is_new", t.is_new},
                                  {"repo", b.repo ? json::value(*b.repo) : json::value(nullptr)},
                                  {"progress", counts_json(stages.counts)},
                                  {"families", families_json(stages)}});
    }
  }
  auto runners = ctx.store->list_runners();
  if (!runners.ok()) return http::error_response(runners.error());
  std::int64_t online = 0, busy = 0;
  json::object by_role{{"build", 0}, {"gpu", 0}};
  for (const auto& r : *runners) {
    if (!r.online) continue;
    ++online;
    busy += r.current_job.has_value();
    by_role[db::to_string(r.role)] = by_role[db::to_string(r.role)].as_int64() + 1;
  }
  db::PipelineFilter pf;
  pf.limit = static_cast<int>(k_recent_pipelines);
  auto pipelines = ctx.store->list_pipelines(pf);
  if (!pipelines.ok()) return http::error_response(pipelines.error());
  auto queue = ctx.store->queue_stats();
  if (!queue.ok()) return http::error_response(queue.error());
  // The latest results, as GET /api/v1/results?limit=15 lists them: the page paints
  // from this one answer.
  db::ResultFilter rf;
  rf.limit = k_recent_results;
  auto results = ctx.store->list_results(rf);
  if (!results.ok()) return http::error_response(results.error());
  return http::json_ok(json::object{{"targets", std::move(rows)},
                                    {"runners",
                                     {{"online", online},
                                      {"busy", busy},
                                      {"registered", static_cast<std::int64_t>(runners->size())},
                                      {"online_by_role", std::move(by_role)}}},
                                    {"queue", to_json(*queue)},
                                    {"pipelines", page_to_json(*pipelines).as_object()["items"]},
                                    {"results", page_to_json(*results).as_object()["items"]}});
}

Response target_page(Context& ctx, std::string_view name, const std::optional<std::string>& repo) {
  auto board = ctx.store->target_board(name, std::nullopt, repo);
  if (!board.ok()) return http::error_response(board.error());
  if (!*board) return http::error_response(unknown_target(name));
  auto evidence = evidence_of(ctx, **board);
  if (!evidence.ok()) return http::error_response(evidence.error());
  return http::json_ok(target_board_json(**board, stages_of(**board), *evidence));
}

// The commit's verdict and, beside it, its per-result diff: the same inputs, the same
// baseline and the same policy, so the page and `kport status` say the same thing.
Response commit_page(Context& ctx, const std::string& sha) {
  if (!hex_sha(sha))
    return http::error_response(
        make_error(Errc::invalid_argument, "'" + sha + "' is not a commit sha (7..64 lowercase hex digits)"));
  auto commit = ctx.store->get_commit(sha);
  if (!commit.ok()) return http::error_response(commit.error());
  auto mine = ctx.store->verdict_inputs(sha);
  if (!mine.ok()) return http::error_response(mine.error());
  if (!*commit && mine->results.empty() && mine->builds.empty() && mine->jobs.empty())
    return http::error_response(
        make_error(Errc::not_found, "commit " + sha + " is not known to kport and has no results"));
  porting::FlakePolicy flakes;
  flakes.release_after = ctx.config.flake_release_after;
  auto c = verdict_case(*ctx.store, sha, *mine, flakes);
  if (!c.ok()) return http::error_response(c.error());
  const Verdict verdict = decide(*c);
  json::object out = commit_diff_json(c->mine.results, c->base.results, verdict.policy, k_changes_per_group, &c->noise);
  out["verdict"] = to_json(verdict);
  out["commit"] = *commit ? to_json(**commit) : json::value(json::object{{"sha", sha}});
  out["parent"] = *commit && (*commit)->parent_sha ? json::value(*(*commit)->parent_sha) : json::value(nullptr);
  out["baseline"] = c->baseline ? json::value(*c->baseline) : json::value(nullptr);
  out["results"] = static_cast<std::int64_t>(c->mine.results.size());
  out["baseline_results"] = static_cast<std::int64_t>(c->base.results.size());
  db::BisectionFilter bf;
  bf.commit = sha;
  bf.limit = 20;
  auto bisections = ctx.store->list_bisections(bf);
  if (!bisections.ok()) return http::error_response(bisections.error());
  json::array bis;
  for (const auto& b : bisections->items) bis.push_back(app::bisection_json(b));
  out["bisections"] = std::move(bis);
  return http::json_ok(out);
}

// One library's instance of a name (an instance is named within its library): the one of
// `repo` when asked (else one of no library), otherwise the first by library name; the
// answer names its library and every library that publishes the name.
Response kernel_page(Context& ctx, const Request& req, const std::optional<std::string>& repo) {
  std::string instance(req.param("instance"));
  auto known = ctx.store->list_kernel_instances();
  if (!known.ok()) return http::error_response(known.error());
  std::vector<const db::KernelInstance*> named;
  for (const auto& k : *known)
    if (k.name == instance) named.push_back(&k);
  if (named.empty())
    return http::error_response(
        make_error(Errc::not_found, "kernel instance '" + instance + "' is not known; GET /api/v1/kernels lists them"));
  const db::KernelInstance* it = nullptr;
  for (const auto* k : named)
    if (repo ? (k->repo == *repo || (k->repo.empty() && !it)) : (!it || k->repo < it->repo)) it = k;
  if (!it)
    return http::error_response(make_error(Errc::not_found, "kernel instance '" + instance +
                                                                "' is not known in library '" + *repo +
                                                                "'; GET /api/v1/kernels lists each library's"));
  json::array libraries;
  std::vector<std::string> names;
  for (const auto* k : named) names.push_back(k->repo);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) libraries.emplace_back(n);
  // Rows of another library never join this one's history: only an instance of no
  // library whose name no library publishes reads every row of the name.
  const std::optional<std::string> of =
      (named.size() > 1 || !it->repo.empty()) ? std::optional<std::string>(it->repo) : std::nullopt;
  auto configs = ctx.store->measured_configs(instance, of);
  if (!configs.ok()) return http::error_response(configs.error());
  std::string dtype(req.query_or("dtype")), shape(req.query_or("shape"));
  // Without a choice, the first configuration measured is shown, so a bare link works.
  if ((dtype.empty() || shape.empty()) && !configs->empty()) {
    auto pick = std::find_if(configs->begin(), configs->end(),
                             [&](const auto& c) { return dtype.empty() || c.first == dtype; });
    if (pick == configs->end()) pick = configs->begin();
    if (dtype.empty()) dtype = pick->first;
    if (shape.empty()) shape = pick->second;
  }
  json::array config_list;
  for (const auto& [d, s] : *configs) config_list.push_back(json::object{{"dtype", d}, {"shape", s}});
  json::array series, noise;
  if (!dtype.empty() && !shape.empty()) {
    auto points = ctx.store->kernel_history(instance, dtype, shape, of);
    if (!points.ok()) return http::error_response(points.error());
    auto peaks = ctx.store->gpu_peaks(it->family, dtype);
    if (!peaks.ok()) return http::error_response(peaks.error());
    series = kernel_series_json(*points, *peaks, memory_bound(ctx, it->family));
    // One index range per GPU model the page charts.
    for (const auto& sv : series) {
      db::SeriesFilter f;
      f.gpu_model = std::string(sv.at("gpu_model").as_string());
      f.family = it->family;
      f.instance = instance;
      f.dtype = dtype;
      f.shape = shape;
      f.repo = of;
      auto figures = ctx.store->series_history(f);
      if (!figures.ok()) return http::error_response(figures.error());
      for (const auto& [key, model] : noise_book(*figures)) noise.push_back(to_json(model));
    }
  }
  return http::json_ok(json::object{
      {"instance", instance},
      {"repo", it->repo},
      {"libraries", std::move(libraries)},
      {"family", it->family},
      {"variant", it->variant},
      {"dtype", dtype},
      {"shape", shape},
      {"configs", std::move(config_list)},
      {"series", std::move(series)},
      {"noise", std::move(noise)},
      {"peak_rule",
       "best throughput measured on the GPU for this op and dtype, by any kernel or the vendor baseline"}});
}

Response runners_page(Context& ctx, bool all) {
  auto runners = ctx.store->list_runners(all);
  if (!runners.ok()) return http::error_response(runners.error());
  json::array items;
  for (const auto& r : *runners) {
    json::object o = to_json(r).as_object();
    o["job"] = nullptr;
    if (r.current_job) {
      auto job = ctx.store->get_job(*r.current_job);
      if (!job.ok()) return http::error_response(job.error());
      if (*job) o["job"] = to_json(**job);
    }
    items.push_back(std::move(o));
  }
  return http::json_ok(json::object{{"items", std::move(items)}});
}

}  // namespace

void add_dashboard_routes(http::Router& router, Context& ctx) {
  auto cache = std::make_shared<DashboardCache>(*ctx.events, k_cache_max_age_ms);
  add_blocking(router, ctx, "GET", "/api/v1/dashboard/overview", [&ctx, cache](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    return cache->get("overview", [&] { return overview(ctx); });
  });
  add_blocking(router, ctx, "GET", "/api/v1/dashboard/targets/{target}", [&ctx, cache](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    std::string name(req.param("target"));
    auto repo_asked = repo_query(req, ctx);
    if (!repo_asked.ok()) return http::error_response(repo_asked.error());
    const std::optional<std::string> repo = std::move(*repo_asked);
    return cache->get("target/" + name + (repo ? "?repo=" + *repo : std::string()),
                      [&] { return target_page(ctx, name, repo); });
  });
  add_blocking(router, ctx, "GET", "/api/v1/dashboard/commits/{sha}", [&ctx, cache](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    std::string sha(req.param("sha"));
    return cache->get("commit/" + sha, [&] { return commit_page(ctx, sha); });
  });
  add_blocking(router, ctx, "GET", "/api/v1/dashboard/kernels/{instance}", [&ctx, cache](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    auto repo_asked = repo_query(req, ctx);
    if (!repo_asked.ok()) return http::error_response(repo_asked.error());
    const std::optional<std::string> repo = std::move(*repo_asked);
    std::string key = "kernel/" + std::string(req.param("instance")) + "?" + std::string(req.query_or("dtype")) + "&" +
                      std::string(req.query_or("shape")) + (repo ? "&repo=" + *repo : std::string());
    return cache->get(key, [&] { return kernel_page(ctx, req, repo); });
  });
  // Runners change state with time alone (heartbeats publish nothing): always fresh.
  add_blocking(router, ctx, "GET", "/api/v1/dashboard/runners", [&ctx](const Request& req) {
    KPORT_AUTH(require_reader(req, ctx));
    return runners_page(ctx, req.query_or("all") == "1");
  });
}

}  // namespace kport::coordinator
