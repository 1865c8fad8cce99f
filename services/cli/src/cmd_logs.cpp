// `kport logs JOB`: a job's log as the runner streamed it; --follow keeps reading new
// chunks until the job ends.
#include <chrono>
#include <optional>
#include <ostream>
#include <thread>

#include "commands.h"
#include "kport/api/job.h"
#include "kport/api/job_report.h"
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
  const std::string job_path = "/api/v1/jobs/" + id;
  // The job's status, read strictly; an error is printed and its exit code answered.
  Reply job;
  std::string status;
  auto read_job = [&]() -> std::optional<int> {
    job = ctx.api.call("GET", job_path);
    if (!job.error.empty()) return report(ctx.err, "logs", "job " + id, job);
    auto info = read_answer(job, api::read_job_info);
    if (!info.ok()) return unreadable(ctx.err, "logs", "GET " + job_path, info.error());
    status = info->status;
    return std::nullopt;
  };
  if (auto rc = read_job()) return *rc;
  auto poll = ctx.opts.integer("poll-ms", 1, 10'000'000);
  std::int64_t after = 0;
  json::array all;
  for (;;) {
    const std::string log_path = job_path + "/log?after=" + std::to_string(after);
    auto r = ctx.api.call("GET", log_path);
    if (!r.error.empty()) return report(ctx.err, "logs", "cannot read the log of job " + id, r);
    auto log = read_answer(r, api::read_job_log);
    if (!log.ok()) return unreadable(ctx.err, "logs", "GET " + log_path, log.error());
    for (const auto& c : log->chunks) {
      after = std::max(after, c.seq);
      if (ctx.json)
        all.push_back(api::to_json(c));
      else
        ctx.out << c.text << std::flush;
    }
    if (!ctx.opts.flag("follow") || finished(status)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(poll.ok() ? *poll : 1000));
    // The job's state is read before the next chunks, so nothing written before the end is missed.
    if (auto rc = read_job()) return *rc;
  }
  if (ctx.json) print_json(ctx, json::object{{"job", job.body}, {"chunks", std::move(all)}});
  if (ctx.opts.flag("follow") && !ctx.json) ctx.err << "job " << id << " " << status << "\n";
  return ctx.opts.flag("follow") && status != "succeeded" ? k_exit_failed : k_exit_ok;
}

}  // namespace

extern const Command logs_command = {"logs", "JOB [--follow]", "print a job's log (--follow: until the job ends)",
                                     declare, run_logs};

}  // namespace kport::cli
