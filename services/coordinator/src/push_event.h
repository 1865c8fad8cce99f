// Push webhooks as GitHub, Gitea and GitLab send them (and deploy/git-hooks/post-receive,
// which speaks GitHub's form): which sender, is it authentic, what was pushed.
//
// Pure functions over headers and the raw body; no I/O. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/result.h"

namespace kport::coordinator {

// Looks up a request header by name (case-insensitive); empty when absent.
using HeaderLookup = std::function<std::string_view(std::string_view)>;

struct PushedCommit {
  std::string sha;
  std::optional<std::string> parent;  // from "parents" when sent, else the previous commit of the push
  std::string message, author;
  std::int64_t time_ms = 0;
};

struct PushEvent {
  std::string source;       // github, gitea or gitlab
  std::string event;        // the sender's event name: push, Push Hook, ping, ...
  std::string delivery_id;  // the sender's delivery id, else "sha256:<hex of the body>"
  bool is_push = false;     // false: another event (ping, issues, ...) to acknowledge and ignore
  // A pull request (GitHub, Gitea) or merge request (GitLab) whose head is to be
  // validated: opened, reopened, or a new head (synchronize / synchronized / update with
  // new commits), as a push of its head to refs/pull/N/head (GitLab
  // refs/merge-requests/N/head) whose one commit is the head with the base as parent, so
  // the verdict compares it with the base. A new head supersedes the old (forced, with
  // `before` the previous head when the sender names it). Other actions are ignored.
  bool is_pull = false;
  // A pull or merge request closed without being merged (GitHub, Gitea: closed with
  // merged false; GitLab: close): its ref's queued and running jobs are cancelled, its
  // report concludes cancelled. `ref` and `after` are set as for is_pull.
  bool is_close = false;
  std::int64_t pull_number = 0;
  std::string action;                  // the sender's action word
  std::string base_sha;                // the base branch's head the request targets
  std::string base_ref;                // refs/heads/<base branch>
  std::string repo_name;               // repository.full_name or project.path_with_namespace
  std::vector<std::string> repo_urls;  // every clone/web URL the payload names
  std::string ref, before, after;
  bool deleted = false;               // after is all zeros, or "deleted": true
  bool forced = false;                // "forced": true (GitHub and the post-receive hook say so)
  std::vector<PushedCommit> commits;  // oldest first, ending with `after` when it is known
};

// Which sender the headers name: gitea (checked first: Gitea also sends X-GitHub-*
// headers), gitlab or github; invalid_argument when none.
Result<std::string> push_source(const HeaderLookup& header);

// Checks the body against `secret`: X-Hub-Signature-256 "sha256=<hex>" (github),
// X-Gitea-Signature "<hex>" (gitea), X-Gitlab-Token equal to the secret (gitlab). All
// comparisons take constant time. unauthorized when the signature is missing or wrong.
Status verify_push(std::string_view source, const HeaderLookup& header, std::string_view body, std::string_view secret);

// Parses a verified body. invalid_argument / bad_json naming the field for a payload
// that is not a push event of that sender. Pull and merge request events are parsed
// too (is_pull, or is_close for one closed unmerged); one whose action does not change
// the head (a merge among them) comes back with none of is_push, is_pull, is_close.
Result<PushEvent> parse_push(std::string_view source, const HeaderLookup& header, std::string_view body);

// "2026-11-29T17:45:00Z" / "+01:00" offsets to Unix ms; nullopt when not ISO 8601.
std::optional<std::int64_t> parse_iso8601_ms(std::string_view text);

// True for 40 (or 64) lowercase hex digits; all zeros is a sha too (the null object).
bool is_full_sha(std::string_view s);
bool is_null_sha(std::string_view s);

}  // namespace kport::coordinator
