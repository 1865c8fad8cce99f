// `kport runners`: who is connected, what they can do and what they are doing.
#include <ostream>

#include "commands.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

void declare(Options& o) { o.add_flag("all", "", false, "runners: include runners that left"); }

int run_runners(Context& ctx) {
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

extern const Command runners_command = {"runners", "[--all]", "list runners: role, GPU, state, current job", declare,
                                        run_runners};

}  // namespace kport::cli
