// Push webhooks, commit verdicts and GPU/driver revalidations: the coordinator's side of
// kport-watcher and deploy/git-hooks/post-receive.
#pragma once

#include <string>

#include "context.h"
#include "verdict.h"

namespace kport::coordinator {

// POST /api/v1/hooks/push (routes_hooks.cpp).
void add_hook_routes(http::Router& router, Context& ctx);
// GET /api/v1/commits/{sha}/verdict, GET and POST /api/v1/revalidations (routes_verdicts.cpp).
void add_verdict_routes(http::Router& router, Context& ctx);

// The commit's verdict against its closest validated ancestor (verdicts.cpp).
Result<Verdict> commit_verdict(Context& ctx, const std::string& sha);
// Called when a job of the commit ends: queues the re-measures its verdict asks for.
// Never fails the caller; problems are logged.
void review_commit(Context& ctx, std::int64_t job_id);

}  // namespace kport::coordinator
