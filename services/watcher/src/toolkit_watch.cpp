// Toolkit watch: a target the installed nvcc lists and the coordinator has never seen
// is registered and brought up: one new_target pipeline that builds every variant for
// it at the head of the configured branch. The coordinator spawns the checks of each
// successful build for the target's check arches; they wait as awaiting_runner until a
// GPU runner of that arch registers.
#include <set>

#include "impl.h"
#include "kport/api/bringup.h"
#include "kport/api/pipeline.h"
#include "kport/common/log.h"

namespace kport::watcher {
namespace json = boost::json;

void Watcher::Impl::watch_toolkit(Report& report) {
  if (!probe) probe = porting::make_nvcc_probe(config.nvcc);
  auto listing = probe->probe();
  if (!listing.ok()) {
    report.errors.push_back("toolkit: " + listing.error().message);
    return;
  }
  auto catalog = porting::Catalog::from_file(config.catalog);
  if (!catalog.ok()) {
    report.errors.push_back("toolkit: " + catalog.error().message);
    return;
  }
  catalog->join(*listing);
  auto answer = api.get("/api/v1/targets");
  auto known = answer.ok()
                   ? read_answer(*answer, "GET /api/v1/targets",
                                 [](api::Fields& f) { return api::read_list(f, "items", api::read_target_info); })
                   : Result<std::vector<api::TargetInfo>>(answer.error());
  if (!known.ok()) {
    report.errors.push_back("toolkit: " + known.error().message);
    return;
  }
  std::set<std::string> seen;
  for (const auto& t : *known) seen.insert(t.name);
  std::vector<std::string> fresh;
  for (const auto& name : catalog->supported_targets())
    if (!seen.count(name)) fresh.push_back(name);
  if (fresh.empty()) return;

  // Resolve the commit first: a target is registered only when its bring-up can start,
  // so a failure here is retried next round instead of leaving a target never built.
  const WatchedRepo* repo = nullptr;
  for (const auto& r : config.repos)
    if (r.name == config.toolkit_repo) repo = &r;
  if (!repo) {
    report.errors.push_back(
        "toolkit: new targets listed but no repository to build them from (--repos, --toolkit-repo)");
    return;
  }
  const std::string& branch = repo->branches.front();
  auto head = branch_head(*repo, branch);
  if (!head.ok()) {
    report.errors.push_back("toolkit: " + head.error().message);
    return;
  }
  if (auto st = record_commit(repo->name, *head); !st.ok()) {
    report.errors.push_back("toolkit: " + st.error().message);
    return;
  }
  for (const auto& name : fresh) {
    auto entry = catalog->find(name);
    if (!entry.ok()) {
      report.errors.push_back("toolkit: " + entry.error().message);
      continue;
    }
    json::object features{{"max_dynamic_smem_per_block", entry->max_dynamic_smem_per_block}};
    for (const auto& f : entry->features) features[f] = true;
    api::TargetInput target{entry->arch, std::move(features), listing->version, entry->runs_on};
    if (target.check_arches.empty()) target.check_arches.push_back(entry->arch);
    if (auto put = api.put("/api/v1/targets/" + name, api::to_json(target)); !put.ok()) {
      report.errors.push_back("toolkit: " + put.error().message);
      continue;
    }
    api::TriggerRequest rq;
    rq.commit = head->sha;
    rq.repo = repo->name;
    rq.ref = "refs/heads/" + branch;
    rq.reason = api::PipelineReason::new_target;
    rq.targets = {name};
    rq.note =
        "new target " + name + " listed by nvcc " + listing->version + (entry->is_new ? " (features derived)" : "");
    auto posted = api.post("/api/v1/pipelines", api::to_json(rq));
    auto p = posted.ok() ? read_answer(*posted, "POST /api/v1/pipelines", api::read_pipeline_answer)
                         : Result<api::PipelineAnswer>(posted.error());
    if (!p.ok()) {
      report.errors.push_back("toolkit: " + p.error().message);
      continue;
    }
    log::info("new target", {{"target", name},
                             {"arch", entry->arch},
                             {"toolkit", listing->version},
                             {"commit", head->sha},
                             {"pipeline", p->pipeline.id}});
    report.new_targets.push_back(name);
  }
}

}  // namespace kport::watcher
