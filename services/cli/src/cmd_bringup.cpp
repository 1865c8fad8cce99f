// `kport bringup TARGET`: how far every variant got on a target, as a terminal table. The
// stages are the coordinator's (one rule, the same the dashboard shows): those of the
// target's latest commit with a build, or of --commit; of one library (--repo, else the
// one the coordinator picks: the commit's, or the one built last).
#include <ostream>

#include "commands.h"
#include "kport/api/bringup.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace {

std::string mark(bool on) { return on ? "x" : "."; }

int run_bringup(Context& ctx) {
  if (!check_args(ctx, bringup_command, 1, 1)) return k_exit_usage;
  const std::string& target = ctx.args[0];
  if (!is_target(target)) {
    ctx.err << "kport bringup: '" << target << "' is not an nvcc target; expected sm_<number>[a|f], e.g. sm_100a\n";
    return k_exit_usage;
  }
  std::string path = "/api/v1/targets/" + target + "/bringup";
  std::string sep = "?";
  for (const char* key : {"commit", "repo"})
    if (!ctx.opts.get(key).empty()) {
      path += sep + key + "=" + encode(ctx.opts.get(key));
      sep = "&";
    }
  auto r = ctx.api.call("GET", path);
  if (!r.error.empty()) return report(ctx.err, "bringup", "", r);
  auto b = read_answer(r, api::read_bringup_answer);
  if (!b.ok()) return unreadable(ctx.err, "bringup", "GET " + path, b.error());
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  const api::StageCounts& p = b->progress;
  ctx.out << "bring-up of " << target << " (arch " << b->target.arch << ")"
          << (b->repo && !b->repo->empty() ? " for library " + *b->repo : "")
          << (b->commit ? " at " + b->commit->substr(0, 12) : " before its first build") << ": " << p.selected_best
          << " selected, " << p.measured << " measured, " << p.numerics_passed << " numerics pass, " << p.builds
          << " build, of " << p.applicable << " applicable (" << p.variants << " variants)\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& v : b->variants) {
    rows.push_back({v.family + "." + v.variant, v.stage.empty() ? "-" : v.stage, mark(v.built), mark(v.resources_clean),
                    v.numerics_failed ? "F" : mark(v.numerics_passed), mark(v.measured), mark(v.selected_best),
                    std::to_string(v.results_passed) + "/" + std::to_string(v.results_failed), v.reason});
  }
  if (!rows.empty())
    ctx.out << format_table({"variant", "stage", "build", "clean", "numerics", "measured", "best", "pass/fail", "why"},
                            rows);
  if (b->repositories.size() > 1) {
    std::string others;
    for (const auto& lib : b->repositories)
      if (!b->repo || lib != *b->repo) others += (others.empty() ? "" : ", ") + lib;
    ctx.out << "other libraries built for " << target << ": " << others << " (kport bringup " << target
            << " --repo NAME)\n";
  }
  if (!b->commit)
    ctx.out << "no build of " << target << " is recorded yet; kport trigger REV --targets " << target
            << " starts one\n";
  return k_exit_ok;
}

}  // namespace

extern const Command bringup_command = {"bringup", "TARGET [--commit REV] [--repo NAME]",
                                        "bring-up stage of every variant on a target, as a table", nullptr,
                                        run_bringup};

}  // namespace kport::cli
