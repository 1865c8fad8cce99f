// Why a cached workspace and fetch: a kernels repository with history is large, and a
// build runner sees many commits of the same repository; fetching only the new objects
// is what keeps "claim to compiler" short.
#include "kport/git/workspace.h"

#include <git2.h>

#include <mutex>

#include "kport/common/crypto.h"
#include "kport/common/utf8.h"

namespace kport::git {
namespace fs = std::filesystem;

namespace {

// libgit2 must be initialised once per process before first use.
void ensure_init() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

Error lib_error(Errc code, const std::string& what) {
  const ::git_error* e = git_error_last();
  return make_error(code, what + (e && e->message ? ": " + std::string(e->message) : std::string()));
}

std::string oid_hex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, oid);
  return buf;
}

template <typename T, void (*Free)(T*)>
struct Owned {
  T* p = nullptr;
  ~Owned() {
    if (p) Free(p);
  }
};

// A repository that does not exist is a permanent failure (retrying cannot make it
// appear), unlike one that cannot be reached now: a local path that is absent, libgit2's
// GIT_ENOTFOUND, or a server that answers 404 / "not found" for it.
bool repository_missing(const std::string& url, int rc) {
  if (rc == GIT_ENOTFOUND) return true;
  std::string path = url.rfind("file://", 0) == 0 ? url.substr(7) : url;
  std::error_code ec;
  if (!path.empty() && path.front() == '/' && !fs::exists(path, ec)) return true;
  const ::git_error* e = git_error_last();
  if (!e || !e->message) return false;
  const std::string m = e->message;
  return (e->klass == GIT_ERROR_HTTP && m.find("404") != std::string::npos) ||
         m.find("not found") != std::string::npos || m.find("does not exist") != std::string::npos;
}

}  // namespace

struct Workspace::Repo {
  git_repository* repo = nullptr;
  std::string url;
  ~Repo() {
    if (repo) git_repository_free(repo);
  }
};

Workspace::Workspace(std::unique_ptr<Repo> repo, fs::path dir, bool cloned)
    : m_repo(std::move(repo)), m_dir(std::move(dir)), m_cloned(cloned) {}
Workspace::~Workspace() = default;
Workspace::Workspace(Workspace&&) noexcept = default;
Workspace& Workspace::operator=(Workspace&&) noexcept = default;

fs::path workspace_dir(const fs::path& cache_root, const std::string& url) {
  std::string base = fs::path(url).filename().string();
  if (base.empty()) base = fs::path(url).parent_path().filename().string();
  std::string clean;
  for (char c : base) clean += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return cache_root / (clean + "-" + crypto::sha256_hex(url).substr(0, 12));
}

Result<Workspace> Workspace::open(const std::string& url, const fs::path& dir) {
  ensure_init();
  auto repo = std::make_unique<Repo>();
  repo->url = url;
  std::error_code ec;
  bool empty = !fs::exists(dir, ec) || fs::is_empty(dir, ec);
  if (!empty) {
    if (git_repository_open(&repo->repo, dir.c_str()) != 0)
      return lib_error(Errc::invalid_argument, dir.string() + " exists but is not a git workspace");
    Owned<git_remote, git_remote_free> origin;
    if (git_remote_lookup(&origin.p, repo->repo, "origin") != 0 || std::string(git_remote_url(origin.p)) != url)
      return make_error(Errc::invalid_argument, dir.string() + " is a workspace of another repository than " + url);
    return Workspace(std::move(repo), dir, false);
  }
  fs::create_directories(dir.parent_path(), ec);
  git_clone_options opts;
  git_clone_options_init(&opts, GIT_CLONE_OPTIONS_VERSION);
  opts.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;  // checkout() picks the commit
  if (int rc = git_clone(&repo->repo, url.c_str(), dir.c_str(), &opts); rc != 0) {
    Error e = repository_missing(url, rc) ? lib_error(Errc::not_found, "repository " + url + " does not exist")
                                          : lib_error(Errc::unavailable, "cannot clone " + url);
    fs::remove_all(dir, ec);  // a half clone must not be mistaken for a workspace later
    return e;
  }
  return Workspace(std::move(repo), dir, true);
}

Status Workspace::fetch() {
  Owned<git_remote, git_remote_free> origin;
  if (git_remote_lookup(&origin.p, m_repo->repo, "origin") != 0)
    return lib_error(Errc::internal, "workspace has no origin");
  git_fetch_options opts;
  git_fetch_options_init(&opts, GIT_FETCH_OPTIONS_VERSION);
  opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
  opts.prune = GIT_FETCH_PRUNE;
  if (git_remote_fetch(origin.p, nullptr, &opts, "kport fetch") != 0)
    return lib_error(Errc::unavailable, "cannot fetch from " + m_repo->url);
  return {};
}

Result<std::string> Workspace::resolve(const std::string& rev) const {
  if (rev.empty()) return make_error(Errc::invalid_argument, "an empty revision names no commit");
  Owned<git_object, git_object_free> obj;
  // Branch names resolve through their remote-tracking ref in a clone.
  int rc = git_revparse_single(&obj.p, m_repo->repo, rev.c_str());
  if (rc != 0) rc = git_revparse_single(&obj.p, m_repo->repo, ("origin/" + rev).c_str());
  if (rc != 0) return lib_error(Errc::not_found, "revision '" + rev + "' does not exist in " + m_repo->url);
  Owned<git_object, git_object_free> commit;
  if (git_object_peel(&commit.p, obj.p, GIT_OBJECT_COMMIT) != 0)
    return lib_error(Errc::invalid_argument, "revision '" + rev + "' is not a commit");
  return oid_hex(git_object_id(commit.p));
}

bool Workspace::has_commit(const std::string& sha) const { return resolve(sha).ok(); }

Result<std::string> Workspace::checkout(const std::string& rev) {
  auto sha = resolve(rev);
  if (!sha.ok()) {
    KPORT_TRY(fetch());
    sha = resolve(rev);
    if (!sha.ok()) return std::move(sha).error();
  }
  git_oid oid;
  git_oid_fromstr(&oid, sha->c_str());
  Owned<git_commit, git_commit_free> commit;
  if (git_commit_lookup(&commit.p, m_repo->repo, &oid) != 0)
    return lib_error(Errc::internal, "cannot read commit " + *sha);
  git_checkout_options opts;
  git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION);
  opts.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
  if (git_checkout_tree(m_repo->repo, reinterpret_cast<git_object*>(commit.p), &opts) != 0)
    return lib_error(Errc::internal, "cannot check out " + *sha);
  if (git_repository_set_head_detached(m_repo->repo, &oid) != 0)
    return lib_error(Errc::internal, "cannot detach HEAD at " + *sha);
  return sha;
}

Result<CommitInfo> Workspace::commit_info(const std::string& rev) const {
  auto sha = resolve(rev);
  if (!sha.ok()) return std::move(sha).error();
  git_oid oid;
  git_oid_fromstr(&oid, sha->c_str());
  Owned<git_commit, git_commit_free> commit;
  if (git_commit_lookup(&commit.p, m_repo->repo, &oid) != 0)
    return lib_error(Errc::internal, "cannot read commit " + *sha);
  CommitInfo info;
  info.sha = *sha;
  if (git_commit_parentcount(commit.p) > 0) info.parent = oid_hex(git_commit_parent_id(commit.p, 0));
  const char* msg = git_commit_message(commit.p);
  // git stores a message as bytes in whatever encoding its author used; what leaves this
  // library is valid UTF-8 so that every answer built from it is too.
  info.message = utf8::sanitize(msg ? msg : "");
  info.summary = info.message.substr(0, info.message.find('\n'));
  const git_signature* a = git_commit_author(commit.p);
  if (a) {
    info.author = utf8::sanitize(std::string(a->name ? a->name : "") + " <" + (a->email ? a->email : "") + ">");
    info.time_ms = static_cast<std::int64_t>(a->when.time) * 1000;
  }
  return info;
}

Result<std::vector<std::string>> Workspace::first_parent_path(const std::string& good, const std::string& bad,
                                                              std::size_t limit) const {
  auto from = resolve(good);
  if (!from.ok()) return std::move(from).error();
  auto at = resolve(bad);
  if (!at.ok()) return std::move(at).error();
  std::vector<std::string> path{*at};
  while (path.back() != *from) {
    if (path.size() > limit)
      return make_error(Errc::not_found, good.substr(0, 12) + " is not within " + std::to_string(limit) +
                                             " first parents of " + bad.substr(0, 12));
    auto info = commit_info(path.back());
    if (!info.ok()) return std::move(info).error();
    if (!info->parent)
      return make_error(Errc::not_found,
                        good.substr(0, 12) + " is not a first-parent ancestor of " + bad.substr(0, 12));
    path.push_back(*info->parent);
  }
  return std::vector<std::string>(path.rbegin(), path.rend());
}

}  // namespace kport::git
