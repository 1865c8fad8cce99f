// Git watch: a watched branch whose head has no pipeline yet gets one. The coordinator's
// pipelines are the memory, so a commit is validated once whichever way it arrived
// (webhook, post-receive hook or this poll).
#include <filesystem>

#include "impl.h"
#include "kport/api/pipeline.h"
#include "kport/api/repository.h"
#include "kport/common/log.h"

namespace kport::watcher {
namespace json = boost::json;

Result<git::CommitInfo> Watcher::Impl::branch_head(const WatchedRepo& repo, const std::string& branch) {
  auto it = workspaces.find(repo.url);
  if (it == workspaces.end()) {
    auto ws =
        git::Workspace::open(repo.url, git::workspace_dir(std::filesystem::path(config.workdir) / "repos", repo.url));
    if (!ws.ok()) return std::move(ws).error();
    it = workspaces.emplace(repo.url, std::move(*ws)).first;
    fetched[repo.url] = it->second.cloned();  // a fresh clone is up to date, a reused one is not
  }
  if (!fetched[repo.url]) {
    KPORT_TRY(it->second.fetch());
    fetched[repo.url] = true;
  }
  auto sha = it->second.resolve("refs/remotes/origin/" + branch);
  if (!sha.ok())
    return make_error(sha.error().code, repo.name + " has no branch '" + branch + "': " + sha.error().message);
  return it->second.commit_info(*sha);
}

Status Watcher::Impl::record_commit(const std::string& repo, const git::CommitInfo& c) {
  auto r = api.post("/api/v1/commits",
                    api::to_json(api::CommitInput{c.sha, repo, c.parent, c.summary, c.author, c.time_ms}));
  if (!r.ok()) return std::move(r).error();
  return {};
}

void Watcher::Impl::watch_git(Report& report) {
  for (const auto& repo : config.repos) {
    for (const auto& branch : repo.branches) {
      auto head = branch_head(repo, branch);
      if (!head.ok()) {
        report.errors.push_back("git: " + head.error().message);
        continue;
      }
      const std::string lookup = "/api/v1/pipelines?limit=1&commit=" + head->sha;
      auto answer = api.get(lookup);
      auto known = answer.ok() ? read_answer(*answer, "GET " + lookup, api::read_pipeline_page)
                               : Result<api::PipelinePage>(answer.error());
      if (!known.ok()) {
        report.errors.push_back("git: " + known.error().message);
        continue;
      }
      if (!known->items.empty()) continue;
      if (auto st = record_commit(repo.name, *head); !st.ok()) {
        report.errors.push_back("git: " + st.error().message);
        continue;
      }
      api::TriggerRequest rq;
      rq.commit = head->sha;
      rq.repo = repo.name;
      rq.ref = "refs/heads/" + branch;
      rq.reason = api::PipelineReason::push;
      rq.note = "git watch: new commit on " + branch + ": " + head->summary;
      auto posted = api.post("/api/v1/pipelines", api::to_json(rq));
      auto p = posted.ok() ? read_answer(*posted, "POST /api/v1/pipelines", api::read_pipeline_answer)
                           : Result<api::PipelineAnswer>(posted.error());
      if (!p.ok()) {
        report.errors.push_back("git: " + p.error().message);
        continue;
      }
      log::info("new commit",
                {{"repo", repo.name}, {"branch", branch}, {"commit", head->sha}, {"pipeline", p->pipeline.id}});
      report.new_commits.push_back(repo.name + " " + branch + " " + head->sha);
    }
  }
}

}  // namespace kport::watcher
