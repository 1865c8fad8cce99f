// `kport bisect`: the bisections kport ran by itself (a confirmed slowdown, a new numerics
// or build failure with commits between it and its baseline), one in detail, one
// started by hand, or one cancelled by hand (`--cancel ID`).
#include <ostream>
#include <sstream>

#include "commands.h"
#include "kport/api/bisection.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

void declare(Options& o) {
  o.add("kind", "", "", "bisect start: perf_regression, numerics_failure or build_failure")
      .add("bad", "", "", "bisect start: the bad commit (sha, short sha or branch)")
      .add("good", "", "", "bisect start: the good commit (default: the bad commit's validated ancestor)")
      .add("case", "", "",
           "bisect start: the cases to follow, 'INSTANCE DTYPE SHAPE' (or FAMILY.VARIANT for a build failure), "
           "';'-separated (default: those the bad commit's verdict counts)")
      .add("state", "", "", "bisect: list only bisections in this state (running, done, failed, cancelled)")
      .add("cancel", "", "", "bisect --cancel ID: stop a running bisection and cancel its open probe (admin token)")
      .add("reason", "", "", "bisect --cancel: why, kept in its summary");
}

std::string pct(const json::value& v, std::string_view key) {
  const auto* x = v.is_object() ? v.as_object().if_contains(key) : nullptr;
  if (!x || !x->is_number()) return "-";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(2);
  s << x->to_number<double>() * 100 << "%";
  return s.str();
}

std::string short_sha(const std::string& s) { return s.substr(0, 12); }

void print_one(Context& ctx, const json::value& b) {
  auto& o = ctx.out;
  o << "bisection " << cell(b, "id") << " (" << str(b, "origin") << "): " << str(b, "kind") << " on "
    << str(b, "target") << (str(b, "gpu_model").empty() ? "" : " / " + str(b, "gpu_model")) << "\n";
  const auto commits = b.as_object().if_contains("commits");
  o << "  between " << short_sha(str(b, "good")) << " (good) and " << short_sha(str(b, "bad")) << " (bad), "
    << (commits && commits->is_array() ? commits->as_array().size() : 0) << " commits\n";
  o << "  state: " << str(b, "state");
  if (!str(b, "cause").empty()) o << ", cause: " << str(b, "cause");
  o << "\n";
  if (!str(b, "first_bad").empty()) {
    o << "  first bad commit: " << str(b, "first_bad") << "\n";
    if (const auto* s = b.as_object().if_contains("suspects"); s && s->is_array() && s->as_array().size() > 1)
      o << "  (or one of " << s->as_array().size() - 1 << " commits before it that could not be judged)\n";
  }
  if (pct(b, "effect") != "-") o << "  effect: " << pct(b, "effect") << " +- " << pct(b, "uncertainty") << "\n";
  o << "  " << str(b, "summary") << "\n";
  if (const auto* cs = b.as_object().if_contains("cases"); cs && cs->is_array())
    for (const auto& c : cs->as_array()) o << "  case: " << str(c, "key") << "\n";
  std::vector<std::vector<std::string>> rows;
  if (const auto* ps = b.as_object().if_contains("probes"); ps && ps->is_array())
    for (const auto& p : ps->as_array())
      rows.push_back({cell(p, "pipeline"), short_sha(str(p, "commit")), str(p, "status")});
  if (!rows.empty()) o << format_table({"pipeline", "commit", "status"}, rows);
}

int list(Context& ctx) {
  std::string q = "/api/v1/bisections?limit=100";
  if (!ctx.opts.get("commit").empty()) q += "&commit=" + encode(ctx.opts.get("commit"));
  if (!ctx.opts.get("state").empty()) q += "&state=" + encode(ctx.opts.get("state"));
  auto r = ctx.api.call("GET", q);
  if (!r.error.empty()) return report(ctx.err, "bisect", "list", r);
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  std::vector<std::vector<std::string>> rows;
  if (const auto* items = r.body.is_object() ? r.body.as_object().if_contains("items") : nullptr;
      items && items->is_array())
    for (const auto& b : items->as_array())
      rows.push_back({cell(b, "id"), str(b, "kind"), str(b, "target"), cell(b, "gpu_model"), short_sha(str(b, "good")),
                      short_sha(str(b, "bad")), str(b, "state"), cell(b, "cause"),
                      str(b, "first_bad").empty() ? "-" : short_sha(str(b, "first_bad")), pct(b, "effect")});
  if (rows.empty()) {
    ctx.out << "no bisections\n";
    return k_exit_ok;
  }
  ctx.out << format_table({"id", "kind", "target", "gpu", "good", "bad", "state", "cause", "first_bad", "effect"},
                          rows);
  return k_exit_ok;
}

int start(Context& ctx) {
  const auto& o = ctx.opts;
  if (o.get("kind").empty() || o.get("target").empty() || o.get("bad").empty()) {
    ctx.err << "kport bisect start: --kind, --target and --bad are required, e.g. kport bisect start --kind "
               "perf_regression --target sm_90a --gpu \"NVIDIA H200\" --bad main\n";
    return k_exit_usage;
  }
  api::BisectionRequest rq{o.get("kind"), o.get("target"), o.get("bad"), std::nullopt, std::nullopt, std::nullopt};
  if (!o.get("gpu").empty()) rq.gpu_model = o.get("gpu");
  if (!o.get("good").empty()) rq.good = o.get("good");
  if (!o.get("case").empty()) {
    rq.cases.emplace();
    std::string all = o.get("case"), one;
    for (std::istringstream in(all); std::getline(in, one, ';');)
      if (!one.empty()) rq.cases->push_back(one);
  }
  json::value v = api::to_json(rq);
  auto r = ctx.api.call("POST", "/api/v1/bisections", &v);
  if (!r.error.empty()) return report(ctx.err, "bisect", "start", r);
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  const auto* opened = r.body.as_object().if_contains("opened");
  ctx.out << (opened && opened->is_bool() && opened->as_bool() ? "started; " : "already bisected; ");
  print_one(ctx, r.body);
  return k_exit_ok;
}

int cancel(Context& ctx) {
  const std::string id = ctx.opts.get("cancel");
  json::object body;
  if (!ctx.opts.get("reason").empty()) body["reason"] = ctx.opts.get("reason");
  json::value v = std::move(body);
  auto r = ctx.api.call("POST", "/api/v1/bisections/" + encode(id) + "/cancel", &v);
  if (!r.error.empty()) return report(ctx.err, "bisect", "cancel bisection " + id, r);
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  ctx.out << "cancelled; ";
  print_one(ctx, r.body);
  return k_exit_ok;
}

int run_bisect(Context& ctx) {
  if (!check_args(ctx, bisect_command, 0, 1)) return k_exit_usage;
  if (!ctx.opts.get("cancel").empty()) {
    if (!ctx.args.empty()) {
      ctx.err << "kport bisect --cancel ID takes no other argument\n";
      return k_exit_usage;
    }
    return cancel(ctx);
  }
  if (ctx.args.empty()) return list(ctx);
  if (ctx.args[0] == "start") return start(ctx);
  auto r = ctx.api.call("GET", "/api/v1/bisections/" + encode(ctx.args[0]));
  if (!r.error.empty()) return report(ctx.err, "bisect", "bisection " + ctx.args[0], r);
  if (ctx.json)
    print_json(ctx, r.body);
  else
    print_one(ctx, r.body);
  const std::string state = str(r.body, "state");
  return state == "failed" || state == "cancelled" ? k_exit_failed : k_exit_ok;
}

}  // namespace

extern const Command bisect_command = {
    "bisect",
    "[ID] [--commit REV] [--state S] | start --kind KIND --target T --bad REV [--good REV] [--gpu MODEL] "
    "[--case 'INSTANCE DTYPE SHAPE;...'] | --cancel ID [--reason TEXT]",
    "list bisections, show one (first bad commit, effect, cause), start one or cancel one (admin token)", declare,
    run_bisect};

}  // namespace kport::cli
