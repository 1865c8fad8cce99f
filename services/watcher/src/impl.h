// Watcher::Impl: what the three watches share (config, API, workspaces).
#pragma once

#include <map>
#include <memory>

#include "api.h"
#include "kport/git/workspace.h"
#include "kport/porting/catalog.h"
#include "kport/watcher/watcher.h"

namespace kport::watcher {

class Watcher::Impl {
 public:
  Impl(Config c, std::unique_ptr<porting::ToolkitProbe> p);

  Config config;
  Api api;
  std::unique_ptr<porting::ToolkitProbe> probe;
  std::map<std::string, git::Workspace> workspaces;  // by URL, fetched each round

  // The branch's head after a fetch (once per round and URL), with its metadata.
  Result<git::CommitInfo> branch_head(const WatchedRepo& repo, const std::string& branch);
  // Records the commit at the coordinator (idempotent there).
  Status record_commit(const std::string& repo, const git::CommitInfo& c);

  void watch_toolkit(Report& report);
  void watch_fleet(Report& report);
  void watch_git(Report& report);

  std::map<std::string, bool> fetched;  // URL -> fetched this round
};

}  // namespace kport::watcher
