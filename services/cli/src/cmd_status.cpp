// `kport status [REV]`: a commit's verdict against its closest validated ancestor, one
// line per reason. REV is a sha (7+ hex digits) or a pushed branch; without it, the
// newest pushed commit. Exit 0 pass, 1 fail, 4 still pending (after --wait, if given),
// 5 insufficient data (a series without enough A/A history, or a machine failure).
#include <chrono>
#include <ostream>
#include <thread>

#include "commands.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

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
    const auto* items = latest.body.is_object() ? latest.body.as_object().if_contains("items") : nullptr;
    if (!items || !items->is_array() || items->as_array().empty()) {
      err << "kport status: no commit has been pushed yet; name one: kport status REV\n";
      return k_exit_usage;
    }
    rev = str(items->as_array()[0], "commit");
  }
  auto wait = ctx.opts.integer("wait", 0, 86'400);
  if (!wait.ok()) {
    err << "kport status: " << wait.error().message << "\n";
    return k_exit_usage;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(*wait);
  Reply r;
  for (;;) {
    r = ctx.api.call("GET", "/api/v1/commits/" + encode(rev) + "/verdict");
    if (!r.error.empty()) return report(err, "status", "no verdict for " + rev, r);
    if (str(r.body, "status") != "pending" || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  const std::string status = str(r.body, "status");
  if (ctx.json) {
    print_json(ctx, r.body);
  } else {
    std::string baseline = str(r.body, "baseline");
    ctx.out << str(r.body, "commit") << ": " << status
            << (baseline.empty() ? " (no validated ancestor to compare with)"
                                 : " (compared with " + baseline.substr(0, 12) + ")")
            << "\n";
    auto list = [&](std::string_view key) -> const json::array& {
      static const json::array none;
      const auto* v = r.body.is_object() ? r.body.as_object().if_contains(key) : nullptr;
      return v && v->is_array() ? v->as_array() : none;
    };
    for (const auto& reason : list("reasons"))
      ctx.out << "  " << str(reason, "kind") << "  " << str(reason, "message") << "\n";
    for (const auto& w : list("waiting"))
      if (w.is_string()) ctx.out << "  waiting: " << std::string_view(w.as_string()) << "\n";
    for (const auto& n : list("notes"))
      if (n.is_string()) ctx.out << "  note: " << std::string_view(n.as_string()) << "\n";
    for (const auto& u : list("insufficient_data"))
      ctx.out << "  insufficient data: " << str(u, "instance") << " " << str(u, "dtype") << " " << str(u, "shape")
              << " on " << str(u, "target") << " / " << str(u, "gpu_model") << ": " << str(u, "summary") << "\n";
    for (const auto& f : list("flaky"))
      ctx.out << "  flaky (not counted): " << str(f, "instance") << " " << str(f, "dtype") << " " << str(f, "shape")
              << " on " << str(f, "gpu_model") << ": " << str(f, "status") << "\n";
    for (const auto& i : list("infrastructure")) ctx.out << "  infrastructure: " << str(i, "message") << "\n";
  }
  if (status == "pass") return k_exit_ok;
  if (status == "fail") return k_exit_failed;
  if (status == "insufficient_data") return k_exit_insufficient;
  return k_exit_pending;
}

}  // namespace

extern const Command status_command = {
    "status", "[REV] [--wait SECONDS]",
    "a commit's verdict against its closest validated ancestor; exit 0 pass, 1 fail, 4 pending,"
    " 5 insufficient data",
    declare, run_status};

}  // namespace kport::cli
