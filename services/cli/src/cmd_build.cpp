// `kport build`: queue, follow, report. Progress goes to stderr (one rewritten line on
// a terminal, a line per change otherwise); the table and verdict go to stdout.
#include <unistd.h>

#include <chrono>
#include <ostream>
#include <thread>

#include "commands.h"
#include "kport/api/build_record.h"
#include "kport/api/pipeline.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

void declare(Options& o) {
  o.add("timeout", "KPORT_CLI_TIMEOUT", "7200", "build: seconds to follow the job before giving up")
      .add("poll-ms", "", "1000", "build, logs --follow: milliseconds between polls");
}

int run_build(Context& ctx) {
  const auto& o = ctx.opts;
  auto& err = ctx.err;
  if (!check_args(ctx, build_command, 0, 0)) return k_exit_usage;
  std::string commit = o.get("commit"), target = o.get("target"), repo = o.get("repo");
  if (commit.empty() || target.empty()) {
    err << "kport build: --commit REV and --target TARGET are required, e.g. kport build --commit 3f2a9c1 --target "
           "sm_100a\n";
    return k_exit_usage;
  }
  if (!is_target(target)) {
    err << "kport build: '" << target << "' is not an nvcc target; expected sm_<number>[a|f], e.g. sm_90a\n";
    return k_exit_usage;
  }
  auto timeout = o.integer("timeout", 1, 10'000'000), poll_ms = o.integer("poll-ms", 1, 10'000'000);
  if (!timeout.ok() || !poll_ms.ok()) {
    err << "kport build: " << (timeout.ok() ? poll_ms.error() : timeout.error()).message << "\n";
    return k_exit_usage;
  }
  if (int rc = pick_repo(ctx.api, repo, "build", err); rc != k_exit_ok) return rc;
  api::TriggerRequest rq;
  rq.commit = commit;
  rq.repo = repo;
  rq.targets = {target};
  rq.reason = api::PipelineReason::manual;
  rq.note = "kport build --commit " + commit + " --target " + target;
  json::value body = api::to_json(rq);
  auto p = ctx.api.call("POST", "/api/v1/pipelines", &body);
  if (!p.error.empty()) return report(err, "build", "the coordinator refused the build", p);
  auto pipeline = read_answer(p, api::read_pipeline_answer);
  if (!pipeline.ok()) return unreadable(err, "build", "POST /api/v1/pipelines", pipeline.error());
  if (pipeline->jobs.empty()) {
    err << "kport build: the pipeline has no build job\n";
    return k_exit_failed;
  }
  const std::int64_t job = pipeline->jobs.front().id;
  err << "queued pipeline " << pipeline->pipeline.id << ", build job " << job << " (" << commit << " on " << target
      << ")\n";

  const bool tty = ::isatty(2);
  auto start = std::chrono::steady_clock::now();
  auto limit = std::chrono::seconds(*timeout);
  std::string status, failure, last_line;
  json::value j;
  for (;;) {
    auto r = ctx.api.call("GET", "/api/v1/jobs/" + std::to_string(job));
    if (!r.error.empty()) {
      if (tty) err << "\n";
      return report(err, "build", "cannot follow job " + std::to_string(job), r);
    }
    auto info = read_answer(r, api::read_job_info);
    if (!info.ok()) {
      if (tty) err << "\n";
      return unreadable(err, "build", "GET /api/v1/jobs/" + std::to_string(job), info.error());
    }
    j = r.body;
    status = info->status;
    failure = info->failure_reason.value_or("");
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count();
    std::string line = "[job " + std::to_string(job) + " " + target + "] " + status;
    if (info->attempt > 0) line += " (attempt " + std::to_string(info->attempt) + ")";
    if (tty)
      err << "\r" << line << " " << secs << " s   " << std::flush;
    else if (line != last_line)
      err << line << "\n";
    last_line = line;
    if (status == "succeeded" || status == "failed" || status == "cancelled") break;
    if (std::chrono::steady_clock::now() - start > limit) {
      err << (tty ? "\n" : "") << "kport build: job " << job << " is still " << status << " after " << limit.count()
          << " s (is a build runner for " << target << " online? kport runners)\n";
      return k_exit_failed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(*poll_ms));
  }
  if (tty) err << "\n";
  auto b = ctx.api.call("GET", "/api/v1/builds?target=" + encode(target) + "&limit=1000");
  json::array mine;
  if (b.error.empty()) {
    auto page = read_answer(b, api::read_build_page);
    if (!page.ok()) return unreadable(err, "build", "GET /api/v1/builds", page.error());
    // The records as the coordinator wrote them: the table and --json show every field.
    const auto& items = b.body.as_object().at("items").as_array();
    for (std::size_t i = 0; i < page->items.size(); ++i)
      if (page->items[i].job == job) mine.push_back(items[i]);
  }
  if (ctx.json) {
    print_json(ctx, json::object{{"job", j}, {"records", mine}});
  } else {
    if (!mine.empty()) ctx.out << format_build_table(mine);
    if (status == "succeeded")
      ctx.out << "build of " << commit << " for " << target << " succeeded (" << mine.size() << " records)\n";
    else
      ctx.out << "build of " << commit << " for " << target << " " << status << ": " << failure << "\n";
  }
  return status == "succeeded" ? k_exit_ok : k_exit_failed;
}

}  // namespace

extern const Command build_command = {"build", "--commit REV --target TARGET [--repo NAME]",
                                      "queue a build, follow it, print the per-variant table", declare, run_build};

}  // namespace kport::cli
