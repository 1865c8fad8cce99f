// GET /api/v1/dispatch/snapshot?gpu=MODEL: every current figure on one GPU model, the
// rows /api/v1/best hands select_best, in the document kport-dispatch loads
// (kport::dispatch::write_snapshot, the format's one home). An embedding framework
// answers (op, dtype, shape) offline from it with the same rule. One library's instances per
// (op, dtype), as /api/v1/best ranks them: ?repo= picks one; without it an op several
// libraries run on that GPU model is refused, naming them.
#include <map>
#include <set>

#include "best_evidence.h"
#include "context.h"
#include "families.h"
#include "kport/common/clock.h"
#include "kport/dispatch/snapshot_writer.h"

namespace kport::coordinator {
using http::Request;
using http::Response;

namespace {

Response snapshot(const Request& req, Context& ctx) {
  KPORT_AUTH(require_reader(req, ctx));
  std::string gpu(req.query_or("gpu"));
  if (gpu.empty())
    return http::error_response(make_error(
        Errc::invalid_argument,
        "a snapshot needs gpu, e.g. /api/v1/dispatch/snapshot?gpu=NVIDIA%20H200 (GET /api/v1/gpus lists the models)"));
  if (gpu.size() > 256)
    return http::error_response(make_error(Errc::invalid_argument, "gpu name is longer than 256 bytes"));
  auto repo_asked = repo_query(req, ctx);
  if (!repo_asked.ok()) return http::error_response(repo_asked.error());
  const std::optional<std::string> repo = std::move(*repo_asked);
  auto all = ctx.store->gpu_best_candidates(gpu);
  if (!all.ok()) return http::error_response(all.error());
  if (!repo) {
    std::map<std::pair<std::string, std::string>, std::set<std::string>> libraries;  // (op, dtype) -> repos
    for (const auto& c : *all)
      if (!c.repo.empty()) libraries[{c.family, c.dtype}].insert(c.repo);
    for (const auto& [key, names] : libraries) {
      if (names.size() < 2) continue;
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
      return http::error_response(
          make_error(Errc::invalid_argument, "op " + key.first + " " + key.second + " on " + gpu +
                                                 " has instances of several libraries (repositories " + list +
                                                 "), which kport does not rank together; ask for one with repo=NAME"));
    }
  }
  // The library's rows; a row of no library only where the library has none of that instance and shape.
  std::set<std::pair<std::string, std::string>> own;
  for (const auto& c : *all)
    if (!c.repo.empty() && of_library(c.repo, repo)) own.emplace(c.instance, c.shape);
  std::vector<db::BestCandidate> kept;
  for (const auto& c : *all)
    if (of_library(c.repo, repo) && !(c.repo.empty() && own.count({c.instance, c.shape}))) kept.push_back(c);
  const auto* rows = &kept;
  auto models = ctx.store->list_gpu_models();
  if (!models.ok()) return http::error_response(models.error());
  auto model = std::find_if(models->begin(), models->end(), [&](const db::GpuModel& m) { return m.name == gpu; });
  if (model == models->end() && rows->empty())
    return http::error_response(
        make_error(Errc::not_found, "GPU model '" + gpu +
                                        "' has never been seen by kport, so there is nothing to dispatch on; GET "
                                        "/api/v1/gpus lists the models it knows"));

  dispatch::SnapshotSource src;
  src.gpu_model = gpu;
  src.arch = model != models->end() ? model->arch : rows->front().arch;
  src.generated_at_ms = now_unix_ms();
  src.generated_at = iso8601_utc(src.generated_at_ms);
  // Each instance's tiles by the keys its family declares.
  const auto known = ctx.families ? ctx.families->current() : std::make_shared<const porting::FamilySet>();
  auto waves = wave_inputs(*ctx.store, gpu, *known, std::nullopt, repo);
  if (!waves.ok()) return http::error_response(waves.error());
  src.sm_count = waves->sm_count;
  src.geometry = std::move(waves->geometry);
  for (const auto& f : known->all()) {
    src.rules.emplace(f.name, f.shape_rules());
    if (!f.requirements.empty()) src.requirements.emplace(f.name, f.requirements);
  }
  src.figures.reserve(rows->size());
  for (const auto& c : *rows) src.figures.push_back(dispatch::SnapshotFigure{c.family, c.dtype, to_measurement(c)});
  return http::text_response(200, dispatch::write_snapshot(src), "application/json");
}

}  // namespace

void add_dispatch_routes(http::Router& router, Context& ctx) {
  add_blocking(router, ctx, "GET", "/api/v1/dispatch/snapshot",
               [&ctx](const Request& req) { return snapshot(req, ctx); });
}

}  // namespace kport::coordinator
