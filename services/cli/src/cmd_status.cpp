// `kport status REV`: a commit's verdict against its closest validated ancestor, one
// line per reason. Exit 0 pass, 1 fail, 4 still pending (after --wait, if given).
#include <chrono>
#include <ostream>
#include <thread>

#include "commands.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

constexpr int k_exit_pending = 4;

void declare(Options& o) {
  o.add("wait", "", "0", "status: seconds to wait for a pending verdict to become final");
}

int run_status(Context& ctx) {
  auto& err = ctx.err;
  if (!check_args(ctx, status_command, 1, 1)) return k_exit_usage;
  const std::string& rev = ctx.args[0];
  if (rev.size() < 7 || rev.size() > 64 || rev.find_first_not_of("0123456789abcdef") != std::string::npos) {
    err << "kport status: '" << rev << "' is not a commit sha; give 7 to 40 hex digits (git rev-parse REV prints it)\n";
    return k_exit_usage;
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
            << (baseline.empty() ? " (no validated ancestor to compare with)" : " (compared with " + baseline.substr(0, 12) + ")")
            << "\n";
    for (const auto& reason : r.body.at("reasons").as_array()) ctx.out << "  " << str(reason, "kind") << "  " << str(reason, "message") << "\n";
    for (const auto& w : r.body.at("waiting").as_array())
      if (w.is_string()) ctx.out << "  waiting: " << w.as_string() << "\n";
  }
  if (status == "pass") return k_exit_ok;
  if (status == "fail") return k_exit_failed;
  return k_exit_pending;
}

}  // namespace

extern const Command status_command = {"status", "REV [--wait SECONDS]",
                                       "a commit's verdict against its parent; exit 0 pass, 1 fail, 4 pending", declare,
                                       run_status};

}  // namespace kport::cli
