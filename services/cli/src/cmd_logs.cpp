// `kport logs JOB`: a job's log as the runner streamed it; --follow keeps reading new
// chunks until the job ends.
#include <chrono>
#include <ostream>
#include <thread>

#include "commands.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

void declare(Options& o) { o.add_flag("follow", "", false, "logs: keep printing new output until the job ends"); }

bool finished(const std::string& status) {
  return status == "succeeded" || status == "failed" || status == "cancelled";
}

int run_logs(Context& ctx) {
  if (!check_args(ctx, logs_command, 1, 1)) return k_exit_usage;
  const std::string& id = ctx.args[0];
  if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos) {
    ctx.err << "kport logs: '" << id
            << "' is not a job id; job ids are numbers (kport trigger and kport build print them)\n";
    return k_exit_usage;
  }
  auto job = ctx.api.call("GET", "/api/v1/jobs/" + id);
  if (!job.error.empty()) return report(ctx.err, "logs", "job " + id, job);
  auto poll = ctx.opts.integer("poll-ms", 1, 10'000'000);
  std::int64_t after = 0;
  json::array all;
  for (;;) {
    auto r = ctx.api.call("GET", "/api/v1/jobs/" + id + "/log?after=" + std::to_string(after));
    if (!r.error.empty()) return report(ctx.err, "logs", "cannot read the log of job " + id, r);
    for (const auto& c : r.body.as_object().at("chunks").as_array()) {
      after = std::max(after, num(c, "seq"));
      if (ctx.json)
        all.push_back(c);
      else
        ctx.out << str(c, "text") << std::flush;
    }
    if (!ctx.opts.flag("follow") || finished(str(job.body, "status"))) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(poll.ok() ? *poll : 1000));
    // The job's state is read before the next chunks, so nothing written before the end is missed.
    job = ctx.api.call("GET", "/api/v1/jobs/" + id);
    if (!job.error.empty()) return report(ctx.err, "logs", "job " + id, job);
  }
  if (ctx.json) print_json(ctx, json::object{{"job", job.body}, {"chunks", std::move(all)}});
  std::string status = str(job.body, "status");
  if (ctx.opts.flag("follow") && !ctx.json) ctx.err << "job " << id << " " << status << "\n";
  return ctx.opts.flag("follow") && status != "succeeded" ? k_exit_failed : k_exit_ok;
}

}  // namespace

extern const Command logs_command = {"logs", "JOB [--follow]", "print a job's log (--follow: until the job ends)",
                                     declare, run_logs};

}  // namespace kport::cli
