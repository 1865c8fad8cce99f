// `kport status [REV]`: a commit's verdict against its closest validated ancestor, one
// line per reason. REV is a sha (7+ hex digits) or a pushed branch; without it, the
// newest pushed commit. Exit 0 pass, 1 fail, 4 still pending (after --wait, if given),
// 5 insufficient data (a series without enough A/A history, or a machine failure).
#include <chrono>
#include <ostream>
#include <thread>

#include "commands.h"
#include "kport/api/pipeline.h"
#include "kport/api/verdict.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace {

constexpr int k_exit_pending = 4;
constexpr int k_exit_insufficient = 5;

void declare(Options& o) { o.add("wait", "", "0", "status: seconds to wait for a pending verdict to become final"); }

int run_status(Context& ctx) {
  auto& err = ctx.err;
  if (!check_args(ctx, status_command, 0, 1)) return k_exit_usage;
  std::string rev = ctx.args.empty() ? std::string() : ctx.args[0];
  if (rev.empty()) {
    // No REV: the newest pushed commit.
    auto latest = ctx.api.call("GET", "/api/v1/pipelines?reason=push&limit=1");
    if (!latest.error.empty()) return report(err, "status", "cannot find the latest push", latest);
    auto page = read_answer(latest, api::read_pipeline_page);
    if (!page.ok()) return unreadable(err, "status", "GET /api/v1/pipelines", page.error());
    if (page->items.empty()) {
      err << "kport status: no commit has been pushed yet; name one: kport status REV\n";
      return k_exit_usage;
    }
    rev = page->items.front().commit;
  }
  auto wait = ctx.opts.integer("wait", 0, 86'400);
  if (!wait.ok()) {
    err << "kport status: " << wait.error().message << "\n";
    return k_exit_usage;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(*wait);
  Reply r;
  api::CommitVerdict v;
  for (;;) {
    r = ctx.api.call("GET", "/api/v1/commits/" + encode(rev) + "/verdict");
    if (!r.error.empty()) return report(err, "status", "no verdict for " + rev, r);
    auto read = read_answer(r, api::read_commit_verdict);
    if (!read.ok()) return unreadable(err, "status", "the verdict of " + rev, read.error());
    v = std::move(*read);
    if (v.status != api::VerdictStatus::pending || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  if (ctx.json) {
    print_json(ctx, r.body);
  } else {
    ctx.out << v.commit << ": " << api::to_string(v.status)
            << (v.baseline ? " (compared with " + v.baseline->substr(0, 12) + ")"
                           : " (no validated ancestor to compare with)")
            << "\n";
    for (const auto& reason : v.reasons) ctx.out << "  " << reason.kind << "  " << reason.message << "\n";
    for (const auto& w : v.waiting) ctx.out << "  waiting: " << w << "\n";
    for (const auto& n : v.notes) ctx.out << "  note: " << n << "\n";
    for (const auto& u : v.insufficient_data)
      ctx.out << "  insufficient data: " << u.series.instance << " " << u.series.dtype << " " << u.series.shape
              << " on " << u.target << " / " << u.series.gpu_model << ": " << u.series.summary << "\n";
    for (const auto& f : v.flaky)
      ctx.out << "  flaky (not counted): " << f.instance << " " << f.dtype << " " << f.shape << " on " << f.gpu_model
              << ": " << f.status << "\n";
    for (const auto& i : v.infrastructure) ctx.out << "  infrastructure: " << i.message << "\n";
  }
  switch (v.status) {
    case api::VerdictStatus::pass: return k_exit_ok;
    case api::VerdictStatus::fail: return k_exit_failed;
    case api::VerdictStatus::insufficient_data: return k_exit_insufficient;
    case api::VerdictStatus::pending: break;
  }
  return k_exit_pending;
}

}  // namespace

extern const Command status_command = {
    "status", "[REV] [--wait SECONDS]",
    "a commit's verdict against its closest validated ancestor; exit 0 pass, 1 fail, 4 pending,"
    " 5 insufficient data",
    declare, run_status};

}  // namespace kport::cli
