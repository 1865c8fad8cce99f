// `kport best-request`: ask kport to measure a shape its best-kernel answer was not
// measured at, follow such a request, or list them with the questions most often asked.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ostream>
#include <thread>

#include "commands.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

// --gpu, --op, --dtype and --shape are best's (declared once for both commands).
void declare(Options& o) {
  o.add_flag("list", "", false,
             "best-request: list measure requests (of --gpu, if given) and the most asked unmeasured shapes")
      .add("request-wait", "", "0", "best-request: seconds to wait for the request to be measured or fail");
}

std::string line(const json::value& r) {
  std::string s = "measure request " + cell(r, "id") + ": " + str(r, "op") + " " + str(r, "dtype") + " " +
                  str(r, "shape") + " on " + str(r, "gpu") + ": " + str(r, "state") + " (job " + cell(r, "job") + " " +
                  str(r, "job_status") + ", " + str(r, "target") + ", requested " + cell(r, "requests") + "x, asked " +
                  cell(r, "asked") + "x)";
  if (!str(r, "reason").empty()) s += "\n  " + str(r, "reason");
  if (const auto* m = r.is_object() ? r.as_object().if_contains("measured") : nullptr; m && m->is_object())
    s += "\n  best: " + str(*m, "best") + " (" + str(r, "answer") + ")";
  return s;
}

int exit_for_state(const json::value& r) { return str(r, "state") == "failed" ? k_exit_failed : k_exit_ok; }

int list(Context& ctx) {
  std::string q = "/api/v1/best/requests";
  if (!ctx.opts.get("gpu").empty()) q += "?gpu=" + encode(ctx.opts.get("gpu"));
  auto r = ctx.api.call("GET", q);
  if (!r.error.empty()) return report(ctx.err, "best-request", "list", r);
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  std::vector<std::vector<std::string>> rows;
  if (const auto* items = r.body.is_object() ? r.body.as_object().if_contains("items") : nullptr;
      items && items->is_array())
    for (const auto& x : items->as_array())
      rows.push_back({cell(x, "id"), cell(x, "gpu"), cell(x, "op"), cell(x, "dtype"), cell(x, "shape"),
                      cell(x, "state"), cell(x, "job"), cell(x, "requests"), cell(x, "asked")});
  if (rows.empty())
    ctx.out << "no measure requests\n";
  else
    ctx.out << format_table({"id", "gpu", "op", "dtype", "shape", "state", "job", "requests", "asked"}, rows);
  rows.clear();
  if (const auto* asks = r.body.is_object() ? r.body.as_object().if_contains("unmeasured_asks") : nullptr;
      asks && asks->is_array())
    for (const auto& x : asks->as_array())
      rows.push_back({cell(x, "gpu"), cell(x, "op"), cell(x, "dtype"), cell(x, "shape"), cell(x, "asks")});
  if (!rows.empty()) {
    ctx.out << "most asked without a measurement:\n";
    ctx.out << format_table({"gpu", "op", "dtype", "shape", "asks"}, rows);
  }
  return k_exit_ok;
}

// Polls request `id` until it is measured or failed, or `wait_s` passed.
Reply follow(Context& ctx, const std::string& id, long wait_s, Reply r) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
  const long poll_ms = std::max(10L, std::strtol(ctx.opts.get("poll-ms").c_str(), nullptr, 10));
  while (r.error.empty() && (str(r.body, "state") == "queued" || str(r.body, "state") == "running") &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
    r = ctx.api.call("GET", "/api/v1/best/requests/" + encode(id));
  }
  return r;
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
  std::string id;
  if (ctx.args.size() == 1) {
    id = ctx.args[0];
    r = ctx.api.call("GET", "/api/v1/best/requests/" + encode(id));
    if (!r.error.empty()) return report(ctx.err, "best-request", "request " + id, r);
  } else {
    if (o.get("gpu").empty() || o.get("shape").empty()) {
      ctx.err << "kport best-request: --gpu and --shape are required, e.g. kport best-request --gpu \"NVIDIA H200\" "
                 "--op gemm "
                 "--dtype bf16 --shape m=3000,n=3000,k=3000 (or give a request id, or --list)\n";
      return k_exit_usage;
    }
    json::value body =
        json::object{{"gpu", o.get("gpu")}, {"op", o.get("op")}, {"dtype", o.get("dtype")}, {"shape", o.get("shape")}};
    r = ctx.api.call("POST", "/api/v1/best/requests", &body);
    if (!r.error.empty()) return report(ctx.err, "best-request", "request", r);
    if (str(r.body, "outcome") == "already_measured") {
      if (ctx.json) {
        print_json(ctx, r.body);
        return k_exit_ok;
      }
      const auto& m = r.body.at("measured");
      ctx.out << str(r.body, "op") << " " << str(r.body, "dtype") << " " << str(r.body, "shape") << " on "
              << str(r.body, "gpu") << " is already measured: best " << str(m, "best") << " (" << str(r.body, "answer")
              << ")\n";
      return k_exit_ok;
    }
    id = cell(r.body, "id");
    if (!ctx.json) ctx.out << (str(r.body, "outcome") == "coalesced" ? "already requested; " : "queued; ");
  }
  if (wait_s > 0) {
    r = follow(ctx, id, wait_s, std::move(r));
    if (!r.error.empty()) return report(ctx.err, "best-request", "request " + id, r);
  }
  if (ctx.json)
    print_json(ctx, r.body);
  else
    ctx.out << line(r.body) << "\n";
  return exit_for_state(r.body);
}

}  // namespace

extern const Command best_request_command = {
    "best-request",
    "[ID] | --gpu MODEL --shape SHAPE [--op gemm] [--dtype bf16] [--request-wait S] | --list [--gpu MODEL]",
    "ask kport to measure a shape (admin token), follow a request, or list them", declare, run_best_request};

}  // namespace kport::cli
