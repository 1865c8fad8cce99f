#include "cli.h"

#include <cmath>
#include <exception>

#include "shapes.h"

namespace kport::harness {

namespace {

HarnessError usage(const std::string& what) { return {"usage", what + ". " + usage_text(), k_exit_usage}; }

bool parse_number(const std::string& text, double& out) {
  try {
    std::size_t used = 0;
    out = std::stod(text, &used);
    return used == text.size() && std::isfinite(out);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::string usage_text() {
  return "usage: kport-harness-<target> --version | --help | list | device | "
         "check (--instance NAME --dtype bf16|fp16|fp32|e4m3|e5m2 --shape SPEC | --all [--filter TEXT] "
         "[--dtype D|all] [--shape SPEC] | --case INSTANCE:DTYPE:SHAPE [--case ...]) [--seed S] [--plan] | "
         "bench (same selection) "
         "[--time-cap-ms MS] [--max-rse R] [--warmup-ms MS] [--warmup-calls N] [--later-warmup-ms MS] "
         "[--min-samples N] [--no-baseline] "
         "[--throttle-threshold F] [--throttle-recovery-ms MS] [--sample-gap-ms MS] [--max-duty F] [--no-blocker] "
         "[--l2-flush write|read|off] [--input-sets N|auto] [--trace]; check: [--reference auto|gpu]; "
         "all: [--timeout-s S]. Shapes: gemm m=..,n=..,k=..; gemm_fp8 m=..,n=..,k=..[,scale=0|1|2|3]; grouped_gemm "
         "g=..,m=..,n=..,k=..[,valid=..] (m per group, a multiple of 128 unless valid < m: the masked layout); "
         "grouped_gemm_fp8 g=..,m=..,n=..,k=..[,scale=0|1|2][,valid=..]; "
         "attention "
         "b=..,h=..,l=..,d=..[,causal=1]; "
         "rmsnorm/softmax rows=..,cols=..; a family the library declares: its dims (see `list`)";
}

std::optional<HarnessError> parse_args(const std::vector<std::string>& args, Options& out) {
  Options o;
  if (args.empty()) return usage("no command given");
  o.command = args[0];
  if (o.command != "list" && o.command != "device" && o.command != "check" && o.command != "bench" &&
      o.command != "help" && o.command != "--help" && o.command != "--version")
    return usage("unknown command '" + o.command + "'");
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&](std::string& dst) -> std::optional<HarnessError> {
      if (i + 1 >= args.size()) return usage("option " + a + " needs a value");
      dst = args[++i];
      return std::nullopt;
    };
    const auto number = [&](double& dst, double lo, double hi) -> std::optional<HarnessError> {
      std::string text;
      if (auto e = value(text)) return e;
      if (!parse_number(text, dst) || dst < lo || dst > hi)
        return usage("option " + a + ": '" + text + "' is not a number in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
      return std::nullopt;
    };
    std::optional<HarnessError> err;
    if (a == "--instance")
      err = value(o.instance);
    else if (a == "--filter")
      err = value(o.filter);
    else if (a == "--dtype")
      err = value(o.dtype);
    else if (a == "--shape")
      err = value(o.shape);
    else if (a == "--all")
      o.all = true;
    else if (a == "--case") {
      std::string text;
      err = value(text);
      if (!err) o.cases.push_back(text);
    } else if (a == "--later-warmup-ms")
      err = number(o.later_warmup_ms, 0, 60000);
    else if (a == "--warmup-calls") {
      double v = 0;
      err = number(v, 1, 1000);
      o.warmup_calls = static_cast<int>(v);
    } else if (a == "--no-baseline")
      o.baseline = false;
    else if (a == "--plan")
      o.plan = true;
    else if (a == "--seed") {
      std::string text;
      err = value(text);
      if (!err) {
        try {
          std::size_t used = 0;
          if (!text.empty() && text[0] == '-') throw std::invalid_argument("negative");
          o.seed = std::stoull(text, &used, 0);
          if (used != text.size()) throw std::invalid_argument("trailing");
          o.seed_given = true;
        } catch (const std::exception&) {
          err = usage("--seed: '" + text + "' is not an unsigned integer");
        }
      }
    } else if (a == "--time-cap-ms")
      err = number(o.time_cap_ms, 1, 600000);
    else if (a == "--max-rse")
      err = number(o.max_rse, 1e-6, 1);
    else if (a == "--warmup-ms")
      err = number(o.warmup_ms, 0, 60000);
    else if (a == "--timeout-s")
      err = number(o.timeout_s, 0.1, 86400);
    else if (a == "--throttle-threshold")
      err = number(o.throttle_threshold, 0, 1);
    else if (a == "--throttle-recovery-ms")
      err = number(o.throttle_recovery_ms, 0, 10000);
    else if (a == "--sample-gap-ms")
      err = number(o.sample_gap_ms, 0, 10000);
    else if (a == "--trace")
      o.trace = true;
    else if (a == "--no-blocker")
      o.blocker = false;
    else if (a == "--max-duty")
      err = number(o.max_duty, 0.01, 1);
    else if (a == "--l2-flush") {
      err = value(o.l2_flush);
      if (!err && o.l2_flush != "write" && o.l2_flush != "read" && o.l2_flush != "off")
        err = usage("--l2-flush: '" + o.l2_flush + "' is not one of write, read, off");
    } else if (a == "--input-sets") {
      std::string text;
      err = value(text);
      double v = 0;
      if (!err && text == "auto")
        o.input_sets = 0;
      else if (!err && parse_number(text, v) && v >= 1 && v <= 256 && v == std::floor(v))
        o.input_sets = static_cast<int>(v);
      else if (!err)
        err = usage("--input-sets: '" + text + "' is not auto or a whole number in [1, 256]");
    } else if (a == "--reference") {
      err = value(o.reference);
      if (!err && o.reference != "auto" && o.reference != "gpu")
        err = usage("--reference: '" + o.reference + "' is not one of auto, gpu");
    } else if (a == "--min-samples") {
      double v = 0;
      err = number(v, 1, 100000);
      o.min_samples = static_cast<int>(v);
    } else
      err = usage("unknown option '" + a + "'");
    if (err) return err;
  }
  if (o.command == "check" || o.command == "bench") {
    if (!o.cases.empty()) {
      if (!o.instance.empty() || !o.filter.empty() || !o.dtype.empty() || !o.shape.empty())
        return usage(
            "--case names its instance, dtype and shape: it cannot be combined with "
            "--instance, --filter, --dtype or --shape");
      for (const std::string& c : o.cases) {
        const auto a = c.find(':');
        const auto b = a == std::string::npos ? a : c.find(':', a + 1);
        if (b == std::string::npos || a == 0 || b == a + 1 || b + 1 == c.size())
          return usage("--case '" + c + "' is not INSTANCE:DTYPE:SHAPE");
      }
      o.all = true;
    }
    if (!o.all) {
      if (o.instance.empty()) return usage(o.command + " needs --instance NAME or --all");
      if (o.dtype.empty() || o.dtype == "all")
        return usage(o.command + " --instance needs --dtype bf16|fp16|fp32|e4m3|e5m2");
      if (o.shape.empty()) return usage(o.command + " --instance needs --shape");
    }
    if (!o.dtype.empty() && o.dtype != "all" && !parse_dtype(o.dtype))
      return HarnessError{"unknown_dtype",
                          "unknown dtype '" + o.dtype + "'; use bf16, fp16, fp32, e4m3, e5m2 (or all with --all)",
                          k_exit_usage};
  }
  out = o;
  return std::nullopt;
}

}  // namespace kport::harness
