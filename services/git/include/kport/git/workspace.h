// kport::git: cached git workspaces over libgit2 (the only libgit2 user in kport).
//
// A Workspace is one working copy of one repository under a cache directory. open()
// reuses the directory when it already holds a clone of that URL and clones otherwise;
// fetch() updates every branch and tag from the origin (never a re-clone); checkout()
// detaches HEAD at a commit and forces the working tree to match it. URLs may be local
// paths, file:// URLs or anything libgit2 supports without credentials.
//
// Errors (Result): not_found for a commit or ref that does not exist (after a fetch), or
// a repository that does not exist (an absent local path, a server's 404: permanent),
// unavailable when the repository cannot be reached or cloned now (worth a retry), invalid_argument for a
// malformed revision, internal for anything else libgit2 reports; messages carry
// libgit2's own text. A Workspace is not thread-safe; one per thread and directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kport/common/result.h"

namespace kport::git {

struct CommitInfo {
  std::string sha;                    // 40 hex digits
  std::optional<std::string> parent;  // first parent; none for a root commit
  std::string message;                // full message
  std::string summary;                // first line
  std::string author;                 // "Name <email>"
  std::int64_t time_ms = 0;           // author time
};

class Workspace {
 public:
  // Opens `dir` when it is a clone of `url`; clones `url` into it when `dir` is absent
  // or empty. A directory holding another repository is an invalid_argument error.
  static Result<Workspace> open(const std::string& url, const std::filesystem::path& dir);

  ~Workspace();
  Workspace(Workspace&&) noexcept;
  Workspace& operator=(Workspace&&) noexcept;

  // Fetches branches and tags from origin.
  Status fetch();
  // A ref, branch, tag, short or full sha to the full commit sha.
  Result<std::string> resolve(const std::string& rev) const;
  // Whether the commit is present locally.
  bool has_commit(const std::string& sha) const;
  // Detaches HEAD at `rev` (fetching once if it is not present) and forces the tree.
  Result<std::string> checkout(const std::string& rev);
  Result<CommitInfo> commit_info(const std::string& rev) const;
  // The first-parent path from `good` to `bad`, oldest first, both included (a bisection's
  // commits). not_found when `good` is not a first-parent ancestor of `bad` within `limit`
  // commits (a merge's other side, or too far back).
  Result<std::vector<std::string>> first_parent_path(const std::string& good, const std::string& bad,
                                                     std::size_t limit) const;

  const std::filesystem::path& dir() const { return m_dir; }
  // True when open() cloned (false: an existing workspace was reused).
  bool cloned() const { return m_cloned; }

 private:
  struct Repo;
  Workspace(std::unique_ptr<Repo> repo, std::filesystem::path dir, bool cloned);
  std::unique_ptr<Repo> m_repo;
  std::filesystem::path m_dir;
  bool m_cloned = false;
};

// The workspace directory for `url` under `cache_root`: a readable name plus a hash of
// the URL, so two repositories never share a directory.
std::filesystem::path workspace_dir(const std::filesystem::path& cache_root, const std::string& url);

}  // namespace kport::git
