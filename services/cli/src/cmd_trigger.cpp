// `kport trigger REV`: open a pipeline for a commit or ref on some or all targets and
// print its jobs; it does not wait (kport build follows one build, the dashboard the rest).
#include <ostream>

#include "commands.h"
#include "kport/cli/cli.h"
#include "kport/api/pipeline.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

void declare(Options& o) {
  o.add("targets", "", "", "trigger: comma-separated targets (default: --target, else every known target)")
      .add("ref", "", "", "trigger: the ref the commit came from, e.g. refs/heads/main")
      .add("note", "", "", "trigger: a note shown with the pipeline");
}

int run_trigger(Context& ctx) {
  const auto& o = ctx.opts;
  if (!check_args(ctx, trigger_command, 0, 1)) return k_exit_usage;
  std::string commit = ctx.args.empty() ? o.get("commit") : ctx.args[0];
  if (commit.empty()) {
    ctx.err << "kport trigger: name the commit, e.g. kport trigger 3f2a9c1 (a sha, branch or tag)\n";
    return k_exit_usage;
  }
  std::string list = o.get("targets").empty() ? o.get("target") : o.get("targets");
  api::TriggerRequest rq;
  for (std::size_t pos = 0; pos < list.size();) {
    auto comma = list.find(',', pos);
    std::string t = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? list.size() : comma + 1;
    if (t.empty()) continue;
    if (!is_target(t)) {
      ctx.err << "kport trigger: '" << t << "' is not an nvcc target; expected sm_<number>[a|f], e.g. sm_90a\n";
      return k_exit_usage;
    }
    rq.targets.push_back(t);
  }
  std::string repo = o.get("repo");
  if (int rc = pick_repo(ctx.api, repo, "trigger", ctx.err); rc != k_exit_ok) return rc;
  rq.commit = commit;
  rq.repo = repo;
  rq.ref = o.get("ref");
  rq.note = o.get("note").empty() ? "kport trigger " + commit : o.get("note");
  json::value v = api::to_json(rq);
  auto p = ctx.api.call("POST", "/api/v1/pipelines", &v);
  if (!p.error.empty()) return report(ctx.err, "trigger", "the coordinator refused the pipeline", p);
  auto answer = read_answer(p, api::read_pipeline_answer);
  if (!answer.ok()) return unreadable(ctx.err, "trigger", "POST /api/v1/pipelines", answer.error());
  if (ctx.json) {
    print_json(ctx, p.body);
    return k_exit_ok;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& j : answer->jobs)
    rows.push_back({std::to_string(j.id), j.kind, j.target, j.status.empty() ? "-" : j.status});
  ctx.out << "pipeline " << answer->pipeline.id << " for " << commit << " in " << repo << ": " << rows.size() << " job"
          << (rows.size() == 1 ? "" : "s") << "\n"
          << format_table({"job", "kind", "target", "status"}, rows);
  return k_exit_ok;
}

}  // namespace

extern const Command trigger_command = {"trigger", "REV [--targets T1,T2] [--repo NAME] [--ref REF]",
                                        "open a pipeline for a commit on some or all targets", declare, run_trigger};

}  // namespace kport::cli
