// `kport best`: the best kernel for a GPU, op, dtype and shape, with its evidence.
#include <ostream>

#include "commands.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

void declare(Options& o) {
  o.add("gpu", "KPORT_GPU", "", "best: GPU model, e.g. \"NVIDIA H200\"")
      .add("op", "", "gemm", "best: op family, one the coordinator knows (kport families lists them)")
      .add("dtype", "", "bf16", "best: data type, e.g. bf16")
      .add("shape", "", "", "best: problem shape, e.g. m=4096,n=4096,k=4096")
      .add("arch", "", "", "best: arch of a GPU kport has not seen, e.g. 10.0 (provisional answer)");
}

// A figure in microseconds: `key` of `v` ("median_us" of the evidence, "estimate_us" of a
// ranked instance), "-" when absent.
std::string us(const json::value& v, std::string_view key = "median_us") {
  std::string figure = cell(v, key);
  return figure == "-" ? figure : figure + " us";
}

std::string short_sha(std::string sha) { return sha.size() > 12 ? sha.substr(0, 12) : sha; }

bool flag(const json::value& v, std::string_view key) {
  const auto* x = v.is_object() ? v.as_object().if_contains(key) : nullptr;
  return x && x->is_bool() && x->as_bool();
}

const json::array& list(const json::value& v, std::string_view key) {
  static const json::array k_empty;
  const auto* x = v.is_object() ? v.as_object().if_contains(key) : nullptr;
  return x && x->is_array() ? x->as_array() : k_empty;
}

// The headline in words: what kport recommends and how far to trust it.
std::string headline(const json::value& b) {
  std::string kind = str(b, "kind"), best = str(b, "best");
  if (kind == "measured") return best + " (measured)";
  if (kind == "provisional")
    return best +
           " (provisional: nothing comparable was measured on this GPU; ranked by speed relative to the vendor "
           "baseline on " +
           str(b, "evidence_gpu_model") + ")";
  if (kind == "unranked") return "no best (unranked: the candidates below have no comparable measurement)";
  return best.empty() ? "no answer (" + kind + ")" : best + " (" + kind + ")";
}

int run_best(Context& ctx) {
  const auto& o = ctx.opts;
  if (!check_args(ctx, best_command, 0, 0)) return k_exit_usage;
  if (o.get("gpu").empty() || o.get("shape").empty()) {
    ctx.err
        << "kport best: --gpu and --shape are required, e.g. kport best --gpu \"NVIDIA H200\" --op gemm --dtype bf16 "
           "--shape m=4096,n=4096,k=4096\n";
    return k_exit_usage;
  }
  std::string q = "/api/v1/best?gpu=" + encode(o.get("gpu")) + "&op=" + encode(o.get("op")) +
                  "&dtype=" + encode(o.get("dtype")) + "&shape=" + encode(o.get("shape"));
  if (!o.get("arch").empty()) q += "&arch=" + encode(o.get("arch"));
  if (!o.get("target").empty()) q += "&target=" + encode(o.get("target"));
  if (!o.get("repo").empty()) q += "&repo=" + encode(o.get("repo"));
  auto r = ctx.api.call("GET", q);
  if (!r.error.empty()) return report(ctx.err, "best", "", r);
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  const auto& b = r.body;
  if (!b.is_object()) {
    ctx.err << "kport best: the coordinator's answer is not a JSON object\n";
    return k_exit_unavailable;
  }
  const std::string asked = str(b.as_object().contains("query") ? b.at("query") : b, "shape");
  ctx.out << o.get("op") << " " << o.get("dtype") << " " << asked << " on " << o.get("gpu") << ": " << headline(b)
          << "\n";
  if (const auto* qy = b.as_object().if_contains("query"); qy && !str(*qy, "repo").empty())
    ctx.out << "library: " << str(*qy, "repo") << "\n";
  if (!str(b, "reason").empty()) ctx.out << str(b, "reason") << "\n";
  if (!str(b, "matched_shape").empty() && str(b, "matched_shape") != asked)
    ctx.out << "nearest measured shape: " << str(b, "matched_shape") << "\n";
  if (const auto* e = b.as_object().if_contains("evidence"); e && e->is_object()) {
    std::string commits;
    for (const auto& c : list(*e, "commits"))
      if (c.is_string()) commits += (commits.empty() ? "" : ", ") + short_sha(std::string(c.as_string()));
    ctx.out << "evidence: " << str(*e, "gpu_model") << ", commit " << commits << ", driver " << str(*e, "driver")
            << ", " << list(*e, "results").size() << (list(*e, "results").size() == 1 ? " result, " : " results, ")
            << cell(*e, "samples") << " samples, measured " << str(*e, "measured") << "\n";
  }
  for (const auto& n : list(b, "notes"))
    if (n.is_string()) ctx.out << "note: " << n.as_string() << "\n";
  // An answer from another shape ranks by each figure moved to the asked shape: that
  // estimate first, then the median measured at the stand-in shape it came from.
  const bool moved = str(b, "ranked_by") == "estimate_us";
  std::vector<std::vector<std::string>> rows;
  for (const auto& x : list(b, "ranking")) {
    static const json::value k_none;
    const auto* ev = x.is_object() ? x.as_object().if_contains("evidence") : nullptr;
    const json::value& e = ev ? *ev : k_none;
    std::string tie = flag(x, "tie_with_best") ? "tie" : "";
    if (flag(e, "unstable")) tie += tie.empty() ? "unstable" : ", unstable";
    bool ranked = flag(x, "ranked");
    rows.push_back({cell(x, "instance"), cell(x, "variant"), us(e), e.is_object() ? cell(e, "ratio") : "-",
                    cell(e, "samples"), ranked ? cell(x, "slowdown") : "unranked", tie, cell(e, "gpu_model"),
                    e.is_object() ? short_sha(str(e, "commit")) : "-", cell(e, "result")});
    if (moved) rows.back().insert(rows.back().begin() + 2, us(x, "estimate_us"));
  }
  std::vector<std::string> header = {"instance", "variant", "median",      "vs baseline", "samples",
                                     "slowdown", "",        "measured on", "commit",      "result"};
  if (moved) {
    header[2] = "median there";
    header.insert(header.begin() + 2, "estimate here");
  }
  if (!rows.empty()) ctx.out << format_table(header, rows);
  if (!list(b, "excluded").empty()) {
    ctx.out << "out of the ranking:\n";
    for (const auto& x : list(b, "excluded")) ctx.out << "  " << str(x, "instance") << ": " << str(x, "reason") << "\n";
  }
  // Not measured at this shape: the command that asks for a measurement.
  if (const auto* m = b.as_object().if_contains("measure"); m && m->is_object() && m->as_object().contains("body")) {
    const auto& ask = m->at("body");
    ctx.out << "not measured at this shape; to measure it: kport best-request --gpu \"" << str(ask, "gpu") << "\" --op "
            << str(ask, "op") << " --dtype " << str(ask, "dtype") << " --shape " << str(ask, "shape")
            << (str(ask, "repo").empty() ? std::string() : " --repo " + str(ask, "repo")) << "\n";
  }
  return str(b, "best").empty() ? k_exit_failed : k_exit_ok;
}

}  // namespace

extern const Command best_command = {"best", "--gpu MODEL --shape SHAPE [--op gemm] [--dtype bf16] [--repo NAME]",
                                     "the best kernel for a GPU and shape, with evidence", declare, run_best};

}  // namespace kport::cli
