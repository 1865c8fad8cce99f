// `kport gpus`: the GPU models kport has seen (GET /api/v1/gpus): arch, drivers, when last
// seen. With --gpu MODEL, whether that model's GPUs time the same cases alike
// (GET /api/v1/gpus/agreement): per pair of GPUs, the cases both timed at one commit against
// the noise of their kind, and their SM clocks. Exit 0 either way: a disagreement is an
// answer, not an error.
#include <ostream>

#include "commands.h"
#include "kport/api/repository.h"
#include "kport/cli/cli.h"

namespace kport::cli {

namespace {

struct PairLine {
  std::vector<std::string> gpus;
  bool agree = false;
  std::string summary;
};

int run_agreement(Context& ctx, const std::string& gpu) {
  auto r = ctx.api.call("GET", "/api/v1/gpus/agreement?gpu=" + encode(gpu));
  if (!r.error.empty()) return report(ctx.err, "gpus", "cannot judge the GPUs of " + gpu, r);
  auto pairs = read_answer(r, [](api::Fields& f) {
    return api::read_list(f, "items", [](api::Fields& p) {
      PairLine x;
      x.gpus = p.str_list("gpus", 2);
      x.agree = p.boolean("agree", false);
      x.summary = p.str("summary", 4096);
      return x;
    });
  });
  if (!pairs.ok()) return unreadable(ctx.err, "gpus", "GET /api/v1/gpus/agreement", pairs.error());
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  if (pairs->empty()) {
    ctx.out << "no case was timed on two GPUs of " << gpu << " at one commit: nothing to compare\n";
    return k_exit_ok;
  }
  for (const auto& p : *pairs) ctx.out << p.summary << "\n";
  return k_exit_ok;
}

int run_gpus(Context& ctx) {
  if (!check_args(ctx, gpus_command, 0, 0)) return k_exit_usage;
  if (const std::string gpu = ctx.opts.get("gpu"); !gpu.empty()) return run_agreement(ctx, gpu);
  auto r = ctx.api.call("GET", "/api/v1/gpus");
  if (!r.error.empty()) return report(ctx.err, "gpus", "cannot list the GPU models", r);
  auto list = read_answer(r, [](api::Fields& f) { return api::read_list(f, "items", api::read_gpu_model_info); });
  if (!list.ok()) return unreadable(ctx.err, "gpus", "GET /api/v1/gpus", list.error());
  if (ctx.json) {
    print_json(ctx, r.body);
    return k_exit_ok;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : *list) {
    std::string drivers;
    for (const auto& d : g.drivers) drivers += (drivers.empty() ? "" : ",") + d;
    rows.push_back({g.name, g.arch.empty() ? "-" : g.arch, drivers.empty() ? "-" : drivers, g.last_seen.value_or("-")});
  }
  ctx.out << format_table({"gpu", "arch", "drivers", "last seen"}, rows);
  ctx.out << list->size() << " GPU model" << (list->size() == 1 ? "" : "s")
          << "; kport gpus --gpu MODEL says whether its GPUs time the same cases alike\n";
  return k_exit_ok;
}

}  // namespace

extern const Command gpus_command = {
    "gpus", "[--gpu MODEL]",
    "list the GPU models seen; with --gpu, whether that model's GPUs time the same cases alike", nullptr, run_gpus};

}  // namespace kport::cli
