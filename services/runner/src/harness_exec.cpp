#include "harness_exec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "kport/common/json_fields.h"
#include "kport/common/process.h"

namespace kport::runner {
namespace json = boost::json;

namespace {

// A quick command's answer (list, device, --plan) is one JSON object on stdout; anything
// else there is unreadable, never a guess at where it starts. check and bench reports are
// read by api::parse_harness_report.
std::optional<json::object> parse_answer(const std::string& out) {
  boost::system::error_code ec;
  auto doc = json::parse(out, ec);
  if (ec || !doc.is_object()) return std::nullopt;
  return std::move(doc.as_object());
}

// A number as the shortest text that reads back the same (what a command line shows).
std::string number_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// The input seed of one of the runner's round documents (a harness entry as printed).
std::optional<std::uint64_t> seed_of(const json::object& entry) {
  auto e = api::parse_harness_entry(entry);
  return e.ok() ? e->seed : std::nullopt;
}

std::uint64_t fresh_seed() {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

using json_fields::number_at;
using json_fields::str;

std::string excerpt(const std::string& text) {
  std::string e = text.size() > 400 ? text.substr(0, 400) + "..." : text;
  while (!e.empty() && (e.back() == '\n' || e.back() == ' ')) e.pop_back();
  return e;
}

}  // namespace

Harness::RunResult Harness::run(const std::vector<std::string>& args, std::chrono::seconds limit, int stage) {
  std::vector<std::string> argv{m_opt.harness.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  kport::ProcessOptions o;
  o.timeout = limit;
  o.env = m_opt.env;
  o.cancel = m_opt.cancel;
  o.output_limit = 64u << 20;
  o.split_streams = true;
  RunResult r;
  auto t0 = std::chrono::steady_clock::now();
  auto out = machine().run_process(argv, o);
  m_seconds[stage] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!out.ok()) {
    // Not the case's fault (nothing of it ran): the stage stops, and the job goes back.
    r.unstartable = make_error(out.error().code, "cannot start " + m_opt.harness.string() + ": " + out.error().message);
    return r;
  }
  std::string label = args.front();
  int listed = 0;
  for (std::size_t i = 1; i + 1 < args.size(); ++i) {
    if (args[i] == "--instance" || args[i] == "--dtype" || args[i] == "--shape") label += " " + args[i + 1];
    listed += args[i] == "--case";
  }
  if (listed > 0) label += " (" + std::to_string(listed) + " case(s))";
  if (!out->stderr_text.empty()) m_log(label + ": stderr: " + excerpt(out->stderr_text));
  auto report = api::parse_harness_report(out->stdout_text);
  const bool readable = report.ok();
  if (readable)
    r.entries = std::move(report->results);
  else if (parse_answer(out->stdout_text))
    r.unreadable = report.error();  // JSON, but not a report read here
  if (out->cancelled) {
    r.status = "cancelled";
    r.message = "cancelled";
    return r;
  }
  if (out->timed_out) {
    r.status = "timeout";
    r.message = "killed after " + std::to_string(limit.count()) + " s without finishing";
    if (!out->stderr_text.empty()) r.message += "; stderr: " + excerpt(out->stderr_text);
    return r;
  }
  if ((out->exit_code == 0 || out->exit_code == 1) && readable) {
    r.clean = true;
    return r;
  }
  std::string why;
  if (readable && report->error_code) why = *report->error_code + ": " + report->error_message.value_or("");
  switch (out->exit_code) {
    case 5: r.status = "timeout"; break;
    default: r.status = "crashed"; break;
  }
  if (out->exit_code >= 128)
    r.message = "killed by signal " + std::to_string(out->exit_code - 128);
  else
    r.message = "exited with " + std::to_string(out->exit_code);
  if (!why.empty())
    r.message += " (" + why + ")";
  else if (r.unreadable)
    r.message += "; " + r.unreadable->message;
  else if (!readable && out->truncated)
    r.message += "; its output passed the 64 MiB capture, so the report was cut";
  else if (!readable)
    r.message += out->stdout_text.empty() ? "; printed no JSON report on stdout"
                                          : "; printed no JSON report on stdout: " + excerpt(out->stdout_text);
  if (!out->stderr_text.empty()) r.message += "; stderr: " + excerpt(out->stderr_text);
  return r;
}

Result<Harness::Answer> Harness::ask(const std::vector<std::string>& args, std::chrono::seconds limit) {
  std::vector<std::string> argv{m_opt.harness.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  kport::ProcessOptions o;
  o.timeout = limit;
  o.env = m_opt.env;
  o.split_streams = true;
  auto out = machine().run_process(argv, o);
  if (!out.ok()) return std::move(out).error();
  Answer a{std::move(*out), std::nullopt};
  a.doc = parse_answer(a.out.stdout_text);
  return a;
}

Result<json::object> Harness::list() {
  auto a = ask({"list"}, std::chrono::seconds(120));
  if (!a.ok()) return std::move(a).error();
  if (a->out.exit_code != 0 || !a->doc)
    return make_error(Errc::unprocessable, m_opt.harness.filename().string() + " list exited with " +
                                               std::to_string(a->out.exit_code) +
                                               (a->doc ? "" : " and printed no JSON: " + excerpt(a->out.output)));
  return *a->doc;
}

Result<json::object> Harness::device() {
  auto a = ask({"device"}, std::chrono::seconds(120));
  if (!a.ok()) return std::move(a).error();
  if (a->out.timed_out) return make_error(Errc::unavailable, "the GPU did not answer `device` within 120 s");
  if (a->out.exit_code != 0 || !a->doc || a->doc->contains("error"))
    return make_error(Errc::unavailable,
                      "`device` exited with " + std::to_string(a->out.exit_code) + ": " + excerpt(a->out.output));
  if (str(*a->doc, "compute_capability").empty())
    return make_error(Errc::unavailable, "`device` named no compute capability: " + excerpt(a->out.output));
  return *a->doc;
}

Result<std::vector<HarnessCase>> Harness::plan(const std::string& command, const std::string& instance) {
  std::vector<std::string> args{command, "--all", "--instance", instance, "--plan"};
  if (command == "bench") args.insert(args.end(), {"--dtype", "all"});  // every dtype the instance runs
  auto a = ask(args, std::chrono::seconds(60));
  if (!a.ok()) return std::move(a).error();
  auto& out = a->out;
  auto& doc = a->doc;
  const json::value* plan = doc ? doc->if_contains("plan") : nullptr;
  if (out.exit_code != 0 || !plan || !plan->is_array())
    return make_error(Errc::unprocessable, command + " --plan for " + instance + " exited with " +
                                               std::to_string(out.exit_code) + ": " + excerpt(out.output));
  std::vector<HarnessCase> cases;
  for (const auto& v : plan->as_array()) {
    if (!v.is_object()) continue;
    const auto& p = v.as_object();
    HarnessCase c{str(p, "instance"), str(p, "family"), str(p, "variant"), str(p, "dtype"), str(p, "shape_text")};
    if (c.instance.empty() || c.dtype.empty() || c.shape.empty())
      return make_error(Errc::unprocessable,
                        command + " --plan for " + instance + " listed a case without instance, dtype or shape");
    cases.push_back(std::move(c));
  }
  return cases;
}

Status Harness::health_check(const std::string& after) {
  auto d = device();
  if (!d.ok())
    return make_error(Errc::unavailable, "GPU failed its health check after " + after + ": " + d.error().message);
  m_log("GPU healthy after " + after);
  return {};
}

std::vector<std::string> Harness::flags(const std::string& stage) const {
  std::vector<std::string> f{"--timeout-s", number_text(m_opt.kernel_timeout_s)};
  if (stage == "check") return f;
  const BenchSampling& b = m_opt.sampling;
  const bool screen = stage == "screen";
  f.insert(f.end(), {"--time-cap-ms",
                     number_text(screen ? b.screen_time_cap_ms : b.time_cap_ms),
                     "--warmup-ms",
                     number_text(screen ? b.screen_warmup_ms : b.warmup_ms),
                     "--later-warmup-ms",
                     number_text(screen ? b.screen_warmup_ms : b.later_warmup_ms),
                     "--min-samples",
                     std::to_string(screen ? b.screen_min_samples : b.min_samples),
                     "--max-rse",
                     number_text(screen ? b.screen_max_rse : b.max_rse),
                     "--max-duty",
                     number_text(b.max_duty),
                     "--throttle-threshold",
                     number_text(b.throttle_threshold),
                     "--throttle-recovery-ms",
                     number_text(b.throttle_recovery_ms),
                     "--sample-gap-ms",
                     number_text(b.sample_gap_ms),
                     "--l2-flush",
                     b.l2_flush});
  if (screen) f.insert(f.end(), {"--warmup-calls", "2", "--no-baseline"});
  if (stage == "bench-again") f.push_back("--no-baseline");
  return f;
}

Status Harness::run_cases(const std::string& stage, const std::vector<HarnessCase>& cases, std::uint64_t seed,
                          std::map<std::string, CaseOutcome*>& slot, std::map<std::string, json::object>* entries) {
  const bool check = stage == "check";
  const std::string command = check ? "check" : "bench";
  const int stage_index = check ? 0 : stage == "screen" ? 1 : 2;
  std::vector<std::string> common = flags(stage);
  // The single-case command that gives a case the same inputs and settings as this run:
  // the harness takes a lone case's --seed as its input seed.
  auto replay = [&](const HarnessCase& c, std::uint64_t case_seed) {
    std::vector<std::string> args{
        command, "--instance", c.instance, "--dtype", c.dtype, "--shape", c.shape, "--seed", std::to_string(case_seed)};
    args.insert(args.end(), common.begin(), common.end());
    return args;
  };
  auto apply = [&](const api::HarnessEntry& e, const RunResult& r) -> CaseOutcome* {
    auto it = slot.find(e.key());
    if (it == slot.end()) return nullptr;
    CaseOutcome& out = *it->second;
    const std::string& verdict = e.verdict;
    const std::string& reason = e.reason;
    const auto case_seed = e.seed;
    if (check) {
      out.seed = case_seed;
      out.check_args = case_seed ? replay(out.c, *case_seed) : std::vector<std::string>{};
      out.check = e;
      if (verdict == "passed" || verdict == "failed" || verdict == "unsupported")
        out.status = verdict;
      else
        out.status = !r.clean && r.status == "timeout" ? "timeout" : "crashed";
      out.message = reason;
    } else if (verdict == "measured") {
      json::object entry = e.raw;
      entry["replay"] = json::value_from(case_seed ? replay(out.c, *case_seed) : std::vector<std::string>{});
      (*entries)[out.c.key()] = std::move(entry);
    } else if (verdict == "unsupported") {
      out.message = "not timed: " + reason;
    } else {
      out.status = !r.clean && r.status == "timeout" ? "timeout" : "crashed";
      out.message = "bench: " + (reason.empty() ? verdict : reason);
    }
    return &out;
  };
  auto case_limit = std::min<std::chrono::seconds>(
      m_opt.process_timeout,
      std::max<std::chrono::seconds>(std::chrono::seconds(60),
                                     std::chrono::seconds(static_cast<long>(2 * m_opt.kernel_timeout_s) + 30)));
  // A report this runner cannot read is the harness's version, not a case's fault: every
  // case would read the same, so the stage stops and says which version came.
  auto unreadable = [&](const Error& e) -> Status {
    return make_error(Errc::unprocessable, m_opt.harness.filename().string() + " " + command + ": " + e.message);
  };
  // Runs `c` alone, so that a fault it causes is its own.
  auto alone = [&](const HarnessCase& c) -> Status {
    if (cancelled()) return make_error(Errc::conflict, "cancelled");
    std::vector<std::string> args{command,   "--instance", c.instance, "--dtype",           c.dtype,
                                  "--shape", c.shape,      "--seed",   std::to_string(seed)};
    args.insert(args.end(), common.begin(), common.end());
    RunResult r = run(args, case_limit, stage_index);
    if (r.status == "cancelled") return make_error(Errc::conflict, "cancelled");
    if (r.unstartable) return *r.unstartable;
    if (r.unreadable) return unreadable(*r.unreadable);
    CaseOutcome* o = nullptr;
    for (const auto& e : r.entries) o = apply(e, r);
    CaseOutcome& out = *slot.at(c.key());
    if (!r.clean) {
      out.status = r.status;
      std::string where = check ? "" : "bench: ";
      out.message = o && !out.message.empty() ? out.message + "; " + r.message : where + r.message;
      m_log(stage + " " + c.instance + " " + c.dtype + " " + c.shape + ": " + r.status + ", " + r.message);
      KPORT_TRY(health_check(stage + " " + c.instance + " " + c.dtype + " " + c.shape));
    } else if (!o) {
      out.status = "crashed";
      out.message = command + " reported no result for the case";
    }
    return {};
  };
  std::vector<HarnessCase> pending = cases;
  while (!pending.empty()) {
    if (cancelled()) return make_error(Errc::conflict, "cancelled");
    if (pending.size() == 1) {
      KPORT_TRY(alone(pending.front()));
      break;
    }
    std::vector<std::string> args{command};
    for (const auto& c : pending) args.insert(args.end(), {"--case", c.spec()});
    args.insert(args.end(), {"--seed", std::to_string(seed)});
    args.insert(args.end(), common.begin(), common.end());
    RunResult r = run(args, m_opt.process_timeout, stage_index);
    if (r.status == "cancelled") return make_error(Errc::conflict, "cancelled");
    if (r.unstartable) return *r.unstartable;
    if (r.unreadable) return unreadable(*r.unreadable);
    std::set<std::string> reported;
    for (const auto& e : r.entries)
      if (auto* o = apply(e, r)) reported.insert(o->c.key());
    std::erase_if(pending, [&](const HarnessCase& c) { return reported.count(c.key()) > 0; });
    if (pending.empty()) break;
    if (r.clean) {
      m_log(stage + ": the report left out " + std::to_string(pending.size()) + " planned case(s); running them alone");
      for (const auto& c : pending) KPORT_TRY(alone(c));
      break;
    }
    // The harness runs cases in the order given, so the first one unreported is where the
    // process ended: that case alone, then the rest in a new process.
    m_log(stage + " " + pending.front().instance + ": " + r.status + ", " + r.message + "; " +
          std::to_string(pending.size()) + " case(s) unreported: " + pending.front().dtype + " " +
          pending.front().shape + " runs alone, the rest in a new process");
    KPORT_TRY(health_check(stage + " " + pending.front().instance));
    KPORT_TRY(alone(pending.front()));
    pending.erase(pending.begin());
  }
  return {};
}

Result<std::vector<CaseOutcome>> Harness::check(const std::vector<HarnessCase>& cases) {
  std::vector<CaseOutcome> done;
  done.reserve(cases.size());
  std::map<std::string, CaseOutcome*> slot;
  for (const auto& c : cases) {
    if (slot.count(c.key())) continue;
    done.push_back(CaseOutcome{c, "", "", api::HarnessEntry{}, {}, {}, std::nullopt, std::nullopt, {}, {}});
  }
  for (auto& d : done) slot[d.c.key()] = &d;
  std::vector<HarnessCase> unique;
  for (const auto& d : done) unique.push_back(d.c);
  // One seed for the run: the check derives each case's from it.
  const std::uint64_t seed = m_opt.seed ? *m_opt.seed : fresh_seed();
  KPORT_TRY(run_cases("check", unique, seed, slot, nullptr));
  return done;
}

namespace {

double median_ms(const json::object& e) { return number_at(e, {"timing", "median_ms"}).value_or(0.0); }

// The relative noise of a screen's median: its relative standard error, at least 0.5 %
// (what one process's placement and GPU state add between processes).
double screen_noise(const json::object& e) {
  const double rse = number_at(e, {"timing", "rse"}).value_or(0.0);
  return std::max(0.005, rse);
}

void mark_precision(json::object& bench, const char* precision) {
  if (auto* t = bench.if_contains("timing"); t && t->is_object()) t->as_object()["precision"] = precision;
}

}  // namespace

Status Harness::time(std::vector<CaseOutcome>& outcomes, const std::set<std::string>& to_time) {
  std::map<std::string, CaseOutcome*> slot;
  std::vector<HarnessCase> timed;
  for (auto& o : outcomes)
    if (o.status == "passed" && to_time.count(o.c.key())) {
      slot[o.c.key()] = &o;
      timed.push_back(o.c);
    }
  if (timed.empty()) return {};
  // Every round and screen times the same inputs, so figures differ only by process and GPU state.
  const std::uint64_t seed = m_opt.seed ? *m_opt.seed : fresh_seed();
  std::map<std::string, std::vector<const HarnessCase*>> by_problem;
  for (const auto& c : timed) by_problem[c.problem()].push_back(&c);

  // Screen: where instances compete, every contested case in one process, the competitors
  // of a problem one after the other (the harness makes a problem's inputs once for all of
  // them, and they are timed in the same minute of the GPU's life).
  std::set<std::string> precise_keys;
  std::map<std::string, json::object> screens;
  if (m_opt.sampling.screen) {
    std::vector<HarnessCase> contested;
    for (const auto& [problem, cs] : by_problem)
      if (cs.size() >= 2)
        for (const auto* c : cs) contested.push_back(*c);
    if (!contested.empty()) KPORT_TRY(run_cases("screen", contested, seed, slot, &screens));
    m_screened += static_cast<int>(screens.size());
  }
  for (const auto& [problem, cs] : by_problem) {
    const json::object* lead = nullptr;
    for (const auto* c : cs)
      if (auto it = screens.find(c->key()); it != screens.end() && slot.at(c->key())->status == "passed")
        if (!lead || median_ms(it->second) < median_ms(*lead)) lead = &it->second;
    for (const auto* c : cs) {
      if (slot.at(c->key())->status != "passed") continue;
      auto it = screens.find(c->key());
      if (!lead || it == screens.end()) {
        // Not screened (no competitor, or screening off) or its screen reported nothing:
        // measured precisely.
        if (it == screens.end()) precise_keys.insert(c->key());
        continue;
      }
      const double noise = std::sqrt(std::pow(screen_noise(it->second), 2) + std::pow(screen_noise(*lead), 2));
      const double margin = std::max(m_opt.sampling.screen_margin, 4.0 * noise);
      if (median_ms(it->second) <= median_ms(*lead) * (1.0 + margin)) precise_keys.insert(c->key());
    }
  }

  // Precise rounds over every case that may decide an answer, one process per round, a
  // problem's cases one after the other as in the screen.
  std::vector<HarnessCase> precise;
  for (const auto& [problem, cs] : by_problem)
    for (const auto* c : cs)
      if (precise_keys.count(c->key())) precise.push_back(*c);
  std::map<std::string, std::vector<json::object>> rounds, paired_rounds;
  // The vendor baseline (cuBLAS, a copy) is timed in a process's first round only: later
  // rounds repeat the instances' figures, and the baseline's one figure is what a ratio needs.
  bool first_round = true;
  auto one_round = [&](const std::vector<HarnessCase>& which) -> Status {
    const std::string stage = first_round ? "bench" : "bench-again";
    first_round = false;
    std::map<std::string, json::object> got;
    if (!m_opt.paired_harness.empty()) {
      // A, then B: the baseline's round first, with outcomes of its own (a fault of the
      // baseline's code is not this commit's).
      std::map<std::string, CaseOutcome> scratch;
      std::map<std::string, CaseOutcome*> scratch_slot;
      for (const auto& c : which) scratch_slot[c.key()] = &(scratch[c.key()] = *slot.at(c.key()));
      std::map<std::string, json::object> base;
      std::swap(m_opt.harness, m_opt.paired_harness);
      const Status ran = run_cases(stage, which, seed, scratch_slot, &base);
      std::swap(m_opt.harness, m_opt.paired_harness);
      KPORT_TRY(ran);
      for (auto& [key, e] : base) paired_rounds[key].push_back(std::move(e));
    }
    KPORT_TRY(run_cases(stage, which, seed, slot, &got));
    for (auto& [key, e] : got) rounds[key].push_back(std::move(e));
    return {};
  };
  KPORT_TRY(one_round(precise));
  std::vector<HarnessCase> again;
  for (const auto& c : precise)
    if (rounds.count(c.key()) && slot.at(c.key())->status == "passed") again.push_back(c);
  const int round_count = m_opt.paired_harness.empty() ? m_opt.sampling.rounds
                                                       : std::max(m_opt.sampling.rounds, m_opt.sampling.paired_rounds);
  for (int r = 1; r < round_count && !again.empty(); ++r) KPORT_TRY(one_round(again));
  // Re-measure: cases whose rounds disagree get more rounds, one at a time, until a
  // majority of their rounds agrees or the budget is spent.
  const double floor = m_opt.sampling.round_agreement_floor;
  for (int extra = 0; round_count > 1 && extra < m_opt.sampling.remeasure_rounds; ++extra) {
    std::vector<HarnessCase> unsettled;
    for (const auto& c : again)
      if (auto it = rounds.find(c.key()); it != rounds.end() && slot.at(c.key())->status == "passed" &&
                                          combine_bench_rounds(it->second, floor).contains("unstable"))
        unsettled.push_back(c);
    if (unsettled.empty()) break;
    m_log("bench: the rounds of " + std::to_string(unsettled.size()) + " case(s) disagree (" +
          unsettled.front().instance + " " + unsettled.front().dtype + " " + unsettled.front().shape +
          (unsettled.size() > 1 ? ", ..." : "") + "); re-measuring, round " + std::to_string(extra + 1) +
          " of at most " + std::to_string(m_opt.sampling.remeasure_rounds));
    KPORT_TRY(one_round(unsettled));
  }

  // The figures: precise rounds combined; the rest keep their screen, with the baseline
  // the precise rounds measured for the same problem.
  std::map<std::string, json::object> baselines;
  for (auto& [key, list] : rounds) {
    CaseOutcome& o = *slot.at(key);
    if (o.status != "passed" || list.empty()) continue;
    json::object figure = combine_bench_rounds(list, floor);
    mark_precision(figure, "precise");
    if (auto p = paired_rounds.find(key); p != paired_rounds.end() && !p->second.empty())
      if (auto* t = figure.if_contains("timing"); t && t->is_object()) {
        const json::object base = combine_bench_rounds(p->second, floor);
        const auto* bt = base.if_contains("timing");
        json::object paired{{"commit", m_opt.paired_commit},
                            {"harness_sha256", m_opt.paired_sha256},
                            {"order", "interleaved"},
                            {"rounds", static_cast<std::int64_t>(p->second.size())}};
        if (bt && bt->is_object()) {
          for (const char* k : {"median_ms", "stddev_ms", "samples"})
            if (const auto* v = bt->as_object().if_contains(k)) paired[k] = *v;
          // The medians of the rounds its figure kept, as the change's own are under
          // timing.rounds: the pair's spread is today's noise of this GPU.
          json::array kept;
          if (const auto* rs = bt->as_object().if_contains("rounds"); rs && rs->is_array())
            for (const auto& x : rs->as_array()) {
              if (!x.is_object() || x.as_object().contains("outlier")) continue;
              if (const auto* m = x.as_object().if_contains("median_ms")) kept.push_back(*m);
            }
          paired["round_medians_ms"] = std::move(kept);
        }
        paired["unstable"] = base.contains("unstable");
        t->as_object()["paired"] = std::move(paired);
      }
    if (auto it = screens.find(key); it != screens.end())
      if (auto* t = figure.if_contains("timing"); t && t->is_object())
        t->as_object()["screen"] = json::object{{"median_ms", median_ms(it->second)},
                                                {"samples", number_at(it->second, {"timing", "samples"}).value_or(0.0)},
                                                {"rse", number_at(it->second, {"timing", "rse"}).value_or(0.0)}};
    if (const auto* b = figure.if_contains("baseline"); b && b->is_object() && b->as_object().contains("timing"))
      baselines.emplace(o.c.problem(), b->as_object());
    // The first round's command: later rounds leave the baseline out.
    o.bench_args = json::value_to<std::vector<std::string>>(list.front().at("replay"));
    o.bench_seed = seed_of(list.front());
    figure.erase("replay");
    o.bench = std::move(figure);
    ++m_precise;
  }
  for (auto& [key, e] : screens) {
    CaseOutcome& o = *slot.at(key);
    if (o.status != "passed" || !o.bench.empty() || precise_keys.count(key)) continue;
    json::object figure = e;
    mark_precision(figure, "screen");
    if (auto it = baselines.find(o.c.problem()); it != baselines.end()) {
      figure["baseline"] = it->second;
      const double base = number_at(it->second, {"timing", "median_ms"}).value_or(0.0);
      if (base > 0 && median_ms(figure) > 0) figure["ratio"] = base / median_ms(figure);
    }
    o.bench_args = json::value_to<std::vector<std::string>>(e.at("replay"));
    o.bench_seed = seed_of(e);
    figure.erase("replay");
    o.bench = std::move(figure);
  }
  return {};
}

}  // namespace kport::runner
