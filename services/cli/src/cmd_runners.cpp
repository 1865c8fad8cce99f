// `kport runners`: who is connected, what they can do and what they are doing;
// `kport runners revoke ID` revokes a runner's token (DELETE /api/v1/runners/{id}/token):
// the runner is deregistered and its held job goes back to the queue.
#include <ostream>

#include "commands.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

void declare(Options& o) { o.add_flag("all", "", false, "runners: include runners that left"); }

int revoke(Context& ctx) {
  const std::string& id = ctx.args[1];
  if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos || id == "0" || id[0] == '0') {
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
  const auto& items = r.body.as_object().at("items").as_array();
  if (ctx.json) {
    print_json(ctx, items);
    return k_exit_ok;
  }
  std::vector<std::vector<std::string>> rows;
  std::size_t online = 0;
  for (const auto& x : items) {
    const json::value& caps = x.as_object().contains("capabilities") ? x.as_object().at("capabilities") : json::value();
    bool on = x.as_object().contains("online") && x.as_object().at("online").is_bool() && x.as_object().at("online").as_bool();
    online += on;
    std::string gpu = str(caps, "gpu_model");
    if (!gpu.empty()) gpu += " (" + str(caps, "arch") + ")";
    rows.push_back({cell(x, "id"), cell(x, "name"), cell(x, "role"), on ? "online" : "offline", gpu.empty() ? "-" : gpu,
                    cell(caps, "toolkit"), cell(x, "current_job"), cell(x, "last_heartbeat")});
  }
  ctx.out << format_table({"id", "name", "role", "state", "gpu", "toolkit", "job", "last heartbeat"}, rows);
  ctx.out << items.size() << " runner" << (items.size() == 1 ? "" : "s") << ", " << online << " online\n";
  return k_exit_ok;
}

}  // namespace

extern const Command runners_command = {"runners", "[--all] | revoke ID",
                                        "list runners: role, GPU, state, current job; revoke a runner's token", declare,
                                        run_runners};

}  // namespace kport::cli
