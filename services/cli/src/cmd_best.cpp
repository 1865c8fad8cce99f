// `kport best`: the best kernel for a GPU, op, dtype and shape, with its evidence.
#include <ostream>

#include "commands.h"
#include "kport/cli/cli.h"

namespace kport::cli {
namespace json = boost::json;

namespace {

void declare(Options& o) {
  o.add("gpu", "KPORT_GPU", "", "best: GPU model, e.g. \"NVIDIA H200\"")
      .add("op", "", "gemm", "best: op family (gemm, attention, rmsnorm, softmax)")
      .add("dtype", "", "bf16", "best: data type, e.g. bf16")
      .add("shape", "", "", "best: problem shape, e.g. m=4096,n=4096,k=4096")
      .add("arch", "", "", "best: arch of a GPU kport has not seen, e.g. 10.0 (provisional answer)");
}

std::string us(const json::value& evidence) {
  if (!evidence.is_object()) return "-";
  return cell(evidence, "median_us") + " us";
}

int run_best(Context& ctx) {
  const auto& o = ctx.opts;
  if (!check_args(ctx, best_command, 0, 0)) return k_exit_usage;
  if (o.get("gpu").empty() || o.get("shape").empty()) {
    ctx.err << "kport best: --gpu and --shape are required, e.g. kport best --gpu \"NVIDIA H200\" --op gemm --dtype bf16 "
               "--shape m=4096,n=4096,k=4096\n";
    return k_exit_usage;
  }
  std::string q = "/api/v1/best?gpu=" + encode(o.get("gpu")) + "&op=" + encode(o.get("op")) + "&dtype=" +
                  encode(o.get("dtype")) + "&shape=" + encode(o.get("shape"));
  if (!o.get("arch").empty()) q += "&arch=" + encode(o.get("arch"));
  if (!o.get("target").empty()) q += "&target=" + encode(o.get("target"));
  auto r = ctx.api.call("GET", q);
  if (!r.error.empty()) return report(ctx.err, "best", "", r);
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  const auto& b = r.body;
  std::string best = str(b, "best");
  ctx.out << o.get("op") << " " << o.get("dtype") << " " << str(b.at("query"), "shape") << " on " << o.get("gpu") << ": "
          << (best.empty() ? "no answer" : best) << " (" << str(b, "kind") << ")\n";
  if (!str(b, "reason").empty()) ctx.out << str(b, "reason") << "\n";
  if (!str(b, "matched_shape").empty() && str(b, "matched_shape") != str(b.at("query"), "shape"))
    ctx.out << "nearest measured shape: " << str(b, "matched_shape") << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& x : b.at("ranking").as_array()) {
    const json::value& e = x.at("evidence");
    std::string tie = x.at("tie_with_best").as_bool() ? "tie" : "";
    rows.push_back({cell(x, "instance"), cell(x, "variant"), us(e), cell(e, "samples"), cell(x, "slowdown"), tie,
                    cell(e, "gpu_model"), cell(e, "result")});
  }
  if (!rows.empty())
    ctx.out << format_table({"instance", "variant", "median", "samples", "slowdown", "", "measured on", "result"}, rows);
  return best.empty() ? k_exit_failed : k_exit_ok;
}

}  // namespace

extern const Command best_command = {"best", "--gpu MODEL --shape SHAPE [--op gemm] [--dtype bf16]",
                                     "the best kernel for a GPU and shape, with evidence", declare, run_best};

}  // namespace kport::cli
