// kport::git: asking a repository where one of its refs points, without a workspace.
//
// The answer comes from the repository itself: the ref advertisement that starts every
// libgit2 fetch (git ls-remote), so no objects are downloaded and nothing is written on
// disk. URLs as for Workspace (local paths, file://, anything libgit2 supports without
// credentials). Thread-safe: each call uses its own connection.
#pragma once

#include <optional>
#include <string>

#include "kport/common/result.h"

namespace kport::git {

// The commit sha `ref` (a full name: refs/heads/main) points at in the repository at
// `url`; nullopt when the repository has no such ref. unavailable when the repository
// cannot be reached or read, with libgit2's text.
Result<std::optional<std::string>> remote_ref(const std::string& url, const std::string& ref);

}  // namespace kport::git
