// `kport runners`: who is connected, what they can do and what they are doing;
// `kport runners revoke ID` revokes a runner's token (DELETE /api/v1/runners/{id}/token):
// the runner is deregistered and its held job goes back to the queue.
#include <ostream>

#include "commands.h"
#include "kport/api/runner_protocol.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

void declare(Options& o) { o.add_flag("all", "", false, "runners: include runners that left"); }

int revoke(Context& ctx) {
  const std::string& id = ctx.args[1];
  if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos || id == "0" ||
      id[0] == '0') {
    ctx.err << "kport runners: '" << id << "' is not a runner id (a positive integer, as kport runners lists them)\n";
    return k_exit_usage;
  }
  auto r = ctx.api.call("DELETE", "/api/v1/runners/" + id + "/token");
  if (!r.error.empty()) return report(ctx.err, "runners", "cannot revoke runner " + id + "'s token", r);
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  ctx.out << "runner " << id << ": token revoked; the runner is deregistered and a job it held is back in the queue\n";
  return k_exit_ok;
}

int run_runners(Context& ctx) {
  if (ctx.args.size() == 2 && ctx.args[0] == "revoke") return revoke(ctx);
  if (!check_args(ctx, runners_command, 0, 0)) return k_exit_usage;
  auto r = ctx.api.call("GET", std::string("/api/v1/runners") + (ctx.opts.flag("all") ? "?all=1" : ""));
  if (!r.error.empty()) return report(ctx.err, "runners", "cannot list runners", r);
  auto list = read_answer(r, api::read_runner_list);
  if (!list.ok()) return unreadable(ctx.err, "runners", "GET /api/v1/runners", list.error());
  if (ctx.json) {
    const auto* items = r.body.as_object().if_contains("items");
    print_json(ctx, items ? *items : json::value(json::array{}));
    return k_exit_ok;
  }
  std::vector<std::vector<std::string>> rows;
  std::size_t online = 0;
  auto or_dash = [](const std::string& v) { return v.empty() ? std::string("-") : v; };
  for (const api::RunnerInfo& x : list->items) {
    online += x.online;
    std::string gpu = x.capabilities.gpu_model;
    if (!gpu.empty()) gpu += " (" + x.capabilities.arch + ")";
    rows.push_back({std::to_string(x.id), or_dash(x.name), std::string(api::to_string(x.role)),
                    x.online ? "online" : "offline", or_dash(gpu), or_dash(x.capabilities.toolkit),
                    x.current_job ? std::to_string(*x.current_job) : "-", or_dash(x.last_heartbeat.value_or(""))});
  }
  ctx.out << format_table({"id", "name", "role", "state", "gpu", "toolkit", "job", "last heartbeat"}, rows);
  const std::size_t n = list->items.size();
  ctx.out << n << " runner" << (n == 1 ? "" : "s") << ", " << online << " online\n";
  return k_exit_ok;
}

}  // namespace

extern const Command runners_command = {"runners", "[--all] | revoke ID",
                                        "list runners: role, GPU, state, current job; revoke a runner's token", declare,
                                        run_runners};

}  // namespace kport::cli
