// `kport bringup TARGET`: how far every variant got on a target, as a terminal table. The
// stages are the coordinator's (one rule, the same the dashboard shows): those of the
// target's latest commit with a build, or of --commit.
#include <ostream>

#include "commands.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

bool flag(const json::value& row, std::string_view key) {
  const auto* v = row.as_object().if_contains(key);
  return v && v->is_bool() && v->as_bool();
}

std::string mark(const json::value& row, std::string_view key) { return flag(row, key) ? "x" : "."; }

int run_bringup(Context& ctx) {
  if (!check_args(ctx, bringup_command, 1, 1)) return k_exit_usage;
  const std::string& target = ctx.args[0];
  if (!is_target(target)) {
    ctx.err << "kport bringup: '" << target << "' is not an nvcc target; expected sm_<number>[a|f], e.g. sm_100a\n";
    return k_exit_usage;
  }
  std::string path = "/api/v1/targets/" + target + "/bringup";
  if (!ctx.opts.get("commit").empty()) path += "?commit=" + encode(ctx.opts.get("commit"));
  auto r = ctx.api.call("GET", path);
  if (!r.error.empty()) return report(ctx.err, "bringup", "", r);
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  const auto& p = r.body.at("progress");
  const std::string at = str(r.body, "commit");
  ctx.out << "bring-up of " << target << " (arch " << str(r.body.at("target"), "arch") << ")"
          << (at.empty() ? " before its first build" : " at " + at.substr(0, 12)) << ": " << cell(p, "selected_best")
          << " selected, " << cell(p, "measured") << " measured, " << cell(p, "numerics_passed") << " numerics pass, "
          << cell(p, "builds") << " build, of " << cell(p, "applicable") << " applicable (" << cell(p, "variants")
          << " variants)\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& v : r.body.at("variants").as_array()) {
    rows.push_back({str(v, "family") + "." + str(v, "variant"), cell(v, "stage"), mark(v, "built"),
                    mark(v, "resources_clean"), flag(v, "numerics_failed") ? "F" : mark(v, "numerics_passed"),
                    mark(v, "measured"), mark(v, "selected_best"),
                    cell(v, "results_passed") + "/" + cell(v, "results_failed"), str(v, "reason")});
  }
  if (!rows.empty())
    ctx.out << format_table({"variant", "stage", "build", "clean", "numerics", "measured", "best", "pass/fail", "why"},
                            rows);
  if (at.empty())
    ctx.out << "no build of " << target << " is recorded yet; kport trigger REV --targets " << target
            << " starts one\n";
  return k_exit_ok;
}

}  // namespace

extern const Command bringup_command = {"bringup", "TARGET [--commit REV]",
                                        "bring-up stage of every variant on a target, as a table", nullptr,
                                        run_bringup};

}  // namespace kport::cli
