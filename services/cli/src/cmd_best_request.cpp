// `kport best-request`: ask kport to measure a shape its best-kernel answer was not
// measured at (of one library, --repo, where several run the op), follow such a request,
// or list them with the questions most often asked.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <thread>

#include "commands.h"
#include "kport/api/best_request.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

// --gpu, --op, --dtype and --shape are best's (declared once for both commands).
void declare(Options& o) {
  o.add_flag("list", "", false,
             "best-request: list measure requests (of --gpu and --repo, if given) and the most asked unmeasured shapes")
      .add("request-wait", "", "0", "best-request: seconds to wait for the request to be measured or fail");
}

std::string or_dash(const std::string& v) { return v.empty() ? std::string("-") : v; }

std::string line(const api::MeasureRequestInfo& r) {
  std::string s = "measure request " + std::to_string(r.id) + ": " + r.key.op + " " + r.key.dtype + " " + r.key.shape +
                  " on " + r.key.gpu + ": " + r.state + " (job " + std::to_string(r.job) + " " + r.job_status + ", " +
                  r.target + (r.key.repo.empty() ? std::string() : ", library " + r.key.repo) + ", requested " +
                  std::to_string(r.requests) + "x, asked " + std::to_string(r.asked) + "x)";
  if (!r.reason.empty()) s += "\n  " + r.reason;
  if (r.measured) s += "\n  best: " + r.measured->best + " (" + r.answer + ")";
  return s;
}

int list(Context& ctx) {
  std::string q = "/api/v1/best/requests";
  std::string sep = "?";
  for (const char* key : {"gpu", "repo"})
    if (!ctx.opts.get(key).empty()) {
      q += sep + key + "=" + encode(ctx.opts.get(key));
      sep = "&";
    }
  auto r = ctx.api.call("GET", q);
  if (!r.error.empty()) return report(ctx.err, "best-request", "list", r);
  auto page = read_answer(r, api::read_measure_request_page);
  if (!page.ok()) return unreadable(ctx.err, "best-request", "GET " + q, page.error());
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& x : page->items)
    rows.push_back({std::to_string(x.id), or_dash(x.key.gpu), or_dash(x.key.op), or_dash(x.key.dtype),
                    or_dash(x.key.shape), or_dash(x.key.repo), or_dash(x.state), std::to_string(x.job),
                    std::to_string(x.requests), std::to_string(x.asked)});
  if (rows.empty())
    ctx.out << "no measure requests\n";
  else
    ctx.out << format_table({"id", "gpu", "op", "dtype", "shape", "library", "state", "job", "requests", "asked"},
                            rows);
  rows.clear();
  for (const auto& x : page->unmeasured_asks)
    rows.push_back({or_dash(x.key.gpu), or_dash(x.key.op), or_dash(x.key.dtype), or_dash(x.key.shape),
                    or_dash(x.key.repo), std::to_string(x.asks)});
  if (!rows.empty()) {
    ctx.out << "most asked without a measurement:\n";
    ctx.out << format_table({"gpu", "op", "dtype", "shape", "library", "asks"}, rows);
  }
  return k_exit_ok;
}

// GET /api/v1/best/requests/ID, read into `info`; an error is printed and its exit code answered.
std::optional<int> get_request(Context& ctx, const std::string& id, Reply& r, api::MeasureRequestInfo& info) {
  const std::string path = "/api/v1/best/requests/" + encode(id);
  r = ctx.api.call("GET", path);
  if (!r.error.empty()) return report(ctx.err, "best-request", "request " + id, r);
  auto read = read_answer(r, api::read_measure_request_info);
  if (!read.ok()) return unreadable(ctx.err, "best-request", "GET " + path, read.error());
  info = std::move(*read);
  return std::nullopt;
}

// Polls request `id` until it is measured or failed, or `wait_s` passed.
std::optional<int> follow(Context& ctx, const std::string& id, long wait_s, Reply& r, api::MeasureRequestInfo& info) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
  const long poll_ms = std::max(10L, std::strtol(ctx.opts.get("poll-ms").c_str(), nullptr, 10));
  while ((info.state == "queued" || info.state == "running") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
    if (auto rc = get_request(ctx, id, r, info)) return rc;
  }
  return std::nullopt;
}

int run_best_request(Context& ctx) {
  const auto& o = ctx.opts;
  if (!check_args(ctx, best_request_command, 0, 1)) return k_exit_usage;
  char* end = nullptr;
  const long wait_s = std::strtol(o.get("request-wait").c_str(), &end, 10);
  if (*end != '\0' || wait_s < 0 || wait_s > 86'400) {
    ctx.err << "kport best-request: --request-wait must be seconds between 0 and 86400\n";
    return k_exit_usage;
  }
  if (o.flag("list")) return list(ctx);
  Reply r;
  api::MeasureRequestInfo info;
  std::string id;
  if (ctx.args.size() == 1) {
    id = ctx.args[0];
    if (auto rc = get_request(ctx, id, r, info)) return *rc;
  } else {
    if (o.get("gpu").empty() || o.get("shape").empty()) {
      ctx.err << "kport best-request: --gpu and --shape are required, e.g. kport best-request --gpu \"NVIDIA H200\" "
                 "--op gemm "
                 "--dtype bf16 --shape m=3000,n=3000,k=3000 (or give a request id, or --list)\n";
      return k_exit_usage;
    }
    const json::value body = api::to_json(
        api::MeasureRequestInput{o.get("gpu"), o.get("op"), o.get("dtype"), o.get("shape"), o.get("repo")});
    r = ctx.api.call("POST", "/api/v1/best/requests", &body);
    if (!r.error.empty()) return report(ctx.err, "best-request", "request", r);
    auto answer = read_answer(r, api::read_measure_request_answer);
    if (!answer.ok()) return unreadable(ctx.err, "best-request", "POST /api/v1/best/requests", answer.error());
    if (answer->outcome == api::MeasureOutcome::already_measured) {
      if (ctx.json) {
        print_json(ctx, r.body);
        return k_exit_ok;
      }
      const api::MeasureRequestInfo& m = answer->request;
      ctx.out << m.key.op << " " << m.key.dtype << " " << m.key.shape << " on " << m.key.gpu
              << (m.key.repo.empty() ? std::string() : " (library " + m.key.repo + ")") << " is already measured: best "
              << (m.measured ? m.measured->best : std::string()) << " (" << m.answer << ")\n";
      return k_exit_ok;
    }
    info = std::move(answer->request);
    id = std::to_string(info.id);
    if (!ctx.json) ctx.out << (answer->outcome == api::MeasureOutcome::coalesced ? "already requested; " : "queued; ");
  }
  if (wait_s > 0)
    if (auto rc = follow(ctx, id, wait_s, r, info)) return *rc;
  if (ctx.json)
    print_json(ctx, r.body);
  else
    ctx.out << line(info) << "\n";
  return info.state == "failed" ? k_exit_failed : k_exit_ok;
}

}  // namespace

extern const Command best_request_command = {
    "best-request",
    "[ID] | --gpu MODEL --shape SHAPE [--op gemm] [--dtype bf16] [--repo NAME] [--request-wait S] | --list [--gpu "
    "MODEL] [--repo NAME]",
    "ask kport to measure a shape (admin token), follow a request, or list them", declare, run_best_request};

}  // namespace kport::cli
