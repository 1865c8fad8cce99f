// Why the ref advertisement and not a fetch into a workspace: confirming a push only
// needs to know where the ref points now, and the advertisement is what a fetch itself
// trusts; a workspace would cost a clone per repository on the coordinator's disk.
#include "kport/git/remote.h"

#include <git2.h>

#include <mutex>

namespace kport::git {
namespace {

Error remote_error(const std::string& url, const std::string& what) {
  const ::git_error* e = git_error_last();
  return make_error(Errc::unavailable,
                    "cannot " + what + " " + url + (e && e->message ? ": " + std::string(e->message) : std::string()));
}

struct Remote {
  git_remote* p = nullptr;
  ~Remote() {
    if (p) {
      git_remote_disconnect(p);
      git_remote_free(p);
    }
  }
};

}  // namespace

Result<std::optional<std::string>> remote_ref(const std::string& url, const std::string& ref) {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
  Remote remote;
  if (git_remote_create_detached(&remote.p, url.c_str()) != 0) return remote_error(url, "open");
  git_remote_callbacks callbacks = GIT_REMOTE_CALLBACKS_INIT;
  if (git_remote_connect(remote.p, GIT_DIRECTION_FETCH, &callbacks, nullptr, nullptr) != 0)
    return remote_error(url, "reach");
  const git_remote_head** heads = nullptr;
  std::size_t n = 0;
  if (git_remote_ls(&heads, &n, remote.p) != 0) return remote_error(url, "list the refs of");
  for (std::size_t i = 0; i < n; ++i) {
    if (ref != heads[i]->name) continue;
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, &heads[i]->oid);
    return std::optional<std::string>(hex);
  }
  return std::optional<std::string>{};
}

}  // namespace kport::git
