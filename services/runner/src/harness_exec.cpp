#include "harness_exec.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <random>

#include "kport/common/json_fields.h"
#include "kport/porting/subprocess.h"

namespace kport::runner {
namespace json = boost::json;

namespace {

// The harness protocol makes stdout one JSON object (whitespace around it allowed);
// anything else there means the report is unreadable, never a guess at where it starts.
std::optional<json::object> parse_report(const std::string& out) {
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

std::optional<std::uint64_t> seed_of(const json::object& o) {
  const auto* s = o.if_contains("seed");
  if (!s) return std::nullopt;
  if (s->is_uint64()) return s->as_uint64();
  if (s->is_int64() && s->as_int64() >= 0) return static_cast<std::uint64_t>(s->as_int64());
  return std::nullopt;
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

Harness::RunResult Harness::run(const std::vector<std::string>& args, std::chrono::seconds limit) {
  std::vector<std::string> argv{m_opt.harness.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  porting::ProcessOptions o;
  o.timeout = limit;
  o.env = m_opt.env;
  o.cancel = m_opt.cancel;
  o.output_limit = 64u << 20;
  o.split_streams = true;
  RunResult r;
  auto t0 = std::chrono::steady_clock::now();
  auto out = porting::run_process(argv, o);
  m_seconds[args.front() == "bench" ? 1 : 0] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!out.ok()) {
    r.status = "crashed";
    r.message = "cannot start " + m_opt.harness.string() + ": " + out.error().message;
    return r;
  }
  std::string label = args.front();
  for (std::size_t i = 1; i + 1 < args.size(); ++i)
    if (args[i] == "--instance" || args[i] == "--dtype" || args[i] == "--shape") label += " " + args[i + 1];
  if (!out->stderr_text.empty()) m_log(label + ": stderr: " + excerpt(out->stderr_text));
  auto doc = parse_report(out->stdout_text);
  if (doc) {
    if (const auto* list = doc->if_contains("results"); list && list->is_array())
      for (const auto& e : list->as_array())
        if (e.is_object()) r.entries.push_back(e.as_object());
  }
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
  if ((out->exit_code == 0 || out->exit_code == 1) && doc) {
    r.clean = true;
    return r;
  }
  std::string why;
  if (doc)
    if (const auto* e = doc->if_contains("error"); e && e->is_object()) why = str(e->as_object(), "code") + ": " + str(e->as_object(), "message");
  switch (out->exit_code) {
    case 5: r.status = "timeout"; break;
    default: r.status = "crashed"; break;
  }
  if (out->exit_code >= 128) r.message = "killed by signal " + std::to_string(out->exit_code - 128);
  else r.message = "exited with " + std::to_string(out->exit_code);
  if (!why.empty()) r.message += " (" + why + ")";
  else if (!doc && out->truncated) r.message += "; its output passed the 64 MiB capture, so the report was cut";
  else if (!doc)
    r.message += out->stdout_text.empty() ? "; printed no JSON report on stdout"
                                          : "; printed no JSON report on stdout: " + excerpt(out->stdout_text);
  if (!out->stderr_text.empty()) r.message += "; stderr: " + excerpt(out->stderr_text);
  return r;
}

Result<Harness::Answer> Harness::ask(const std::vector<std::string>& args, std::chrono::seconds limit) {
  std::vector<std::string> argv{m_opt.harness.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  porting::ProcessOptions o;
  o.timeout = limit;
  o.env = m_opt.env;
  o.split_streams = true;
  auto out = porting::run_process(argv, o);
  if (!out.ok()) return std::move(out).error();
  Answer a{std::move(*out), std::nullopt};
  a.doc = parse_report(a.out.stdout_text);
  return a;
}

Result<json::object> Harness::list() {
  auto a = ask({"list"}, std::chrono::seconds(120));
  if (!a.ok()) return std::move(a).error();
  if (a->out.exit_code != 0 || !a->doc)
    return make_error(Errc::unprocessable, m_opt.harness.filename().string() + " list exited with " + std::to_string(a->out.exit_code) +
                                               (a->doc ? "" : " and printed no JSON: " + excerpt(a->out.output)));
  return *a->doc;
}

Result<json::object> Harness::device() {
  auto a = ask({"device"}, std::chrono::seconds(120));
  if (!a.ok()) return std::move(a).error();
  if (a->out.timed_out) return make_error(Errc::unavailable, "the GPU did not answer `device` within 120 s");
  if (a->out.exit_code != 0 || !a->doc || a->doc->contains("error"))
    return make_error(Errc::unavailable, "`device` exited with " + std::to_string(a->out.exit_code) + ": " + excerpt(a->out.output));
  if (str(*a->doc, "compute_capability").empty())
    return make_error(Errc::unavailable, "`device` named no compute capability: " + excerpt(a->out.output));
  return *a->doc;
}

Result<std::vector<HarnessCase>> Harness::plan(const std::string& command, const std::string& instance) {
  auto a = ask({command, "--all", "--instance", instance, "--plan"}, std::chrono::seconds(60));
  if (!a.ok()) return std::move(a).error();
  auto& out = a->out;
  auto& doc = a->doc;
  const json::value* plan = doc ? doc->if_contains("plan") : nullptr;
  if (out.exit_code != 0 || !plan || !plan->is_array())
    return make_error(Errc::unprocessable, command + " --plan for " + instance + " exited with " + std::to_string(out.exit_code) +
                                               ": " + excerpt(out.output));
  std::vector<HarnessCase> cases;
  for (const auto& v : plan->as_array()) {
    if (!v.is_object()) continue;
    const auto& p = v.as_object();
    HarnessCase c{str(p, "instance"), str(p, "family"), str(p, "variant"), str(p, "dtype"), str(p, "shape_text")};
    if (c.instance.empty() || c.dtype.empty() || c.shape.empty())
      return make_error(Errc::unprocessable, command + " --plan for " + instance + " listed a case without instance, dtype or shape");
    cases.push_back(std::move(c));
  }
  return cases;
}

Status Harness::health_check(const std::string& after) {
  auto d = device();
  if (!d.ok()) return make_error(Errc::unavailable, "GPU failed its health check after " + after + ": " + d.error().message);
  m_log("GPU healthy after " + after);
  return {};
}

std::vector<std::string> Harness::flags(const std::string& command) const {
  std::vector<std::string> f{"--timeout-s", number_text(m_opt.kernel_timeout_s)};
  if (command != "bench") return f;
  const BenchSampling& b = m_opt.sampling;
  f.insert(f.end(), {"--time-cap-ms", number_text(b.time_cap_ms), "--warmup-ms", number_text(b.warmup_ms), "--min-samples",
                     std::to_string(b.min_samples), "--max-rse", number_text(b.max_rse), "--max-duty", number_text(b.max_duty),
                     "--throttle-threshold", number_text(b.throttle_threshold), "--throttle-recovery-ms",
                     number_text(b.throttle_recovery_ms), "--sample-gap-ms", number_text(b.sample_gap_ms), "--l2-flush",
                     b.l2_flush});
  return f;
}

Status Harness::run_cases(const std::string& command, const std::string& instance, const std::vector<HarnessCase>& cases, bool grid,
                          std::uint64_t seed, std::vector<CaseOutcome>& done) {
  const bool bench = command == "bench";
  std::map<std::string, CaseOutcome*> slot;
  if (!bench) {
    done.reserve(done.size() + cases.size());
    for (const auto& c : cases) done.push_back(CaseOutcome{c, "", "", {}, {}, std::nullopt, std::nullopt, {}, {}});
  }
  std::vector<std::string> common = flags(command);
  // The single-case command that gives a case the same inputs and settings as this run:
  // the harness takes a lone case's --seed as its input seed.
  auto replay = [&](const HarnessCase& c, std::uint64_t case_seed) {
    std::vector<std::string> args{command, "--instance", instance, "--dtype", c.dtype, "--shape", c.shape, "--seed",
                                  std::to_string(case_seed)};
    args.insert(args.end(), common.begin(), common.end());
    return args;
  };
  for (auto& d : done) slot[d.c.key()] = &d;
  auto apply = [&](const json::object& e, const RunResult& r) -> CaseOutcome* {
    auto it = slot.find(str(e, "dtype") + "|" + str(e, "shape_text"));
    if (it == slot.end()) return nullptr;
    CaseOutcome& out = *it->second;
    std::string verdict = str(e, "verdict");
    std::string reason = str(e, "reason");
    const auto case_seed = seed_of(e);
    if (!bench) {
      out.seed = case_seed;
      out.check_args = case_seed ? replay(out.c, *case_seed) : std::vector<std::string>{};
      out.check = e;
      if (verdict == "passed" || verdict == "failed" || verdict == "unsupported") out.status = verdict;
      else out.status = !r.clean && r.status == "timeout" ? "timeout" : "crashed";
      out.message = reason;
    } else if (verdict == "measured") {
      out.bench = e;
      out.bench_seed = case_seed;
      out.bench_args = case_seed ? replay(out.c, *case_seed) : std::vector<std::string>{};
    } else if (verdict == "unsupported") {
      out.message = "not timed: " + reason;
    } else {
      out.status = !r.clean && r.status == "timeout" ? "timeout" : "crashed";
      out.message = "bench: " + (reason.empty() ? verdict : reason);
    }
    return &out;
  };
  std::vector<std::string> run_flags{"--seed", std::to_string(seed)};
  run_flags.insert(run_flags.end(), common.begin(), common.end());
  std::vector<HarnessCase> pending = cases;
  if (grid && !cases.empty()) {
    std::vector<std::string> args{command, "--all", "--instance", instance};
    args.insert(args.end(), run_flags.begin(), run_flags.end());
    RunResult r = run(args, m_opt.process_timeout);
    if (r.status == "cancelled") return make_error(Errc::conflict, "cancelled");
    std::map<std::string, bool> reported;
    for (const auto& e : r.entries)
      if (auto* o = apply(e, r)) reported[o->c.key()] = true;
    std::erase_if(pending, [&](const HarnessCase& c) { return reported.count(c.key()) > 0; });
    if (!r.clean) {
      m_log(command + " " + instance + ": " + r.status + ", " + r.message + "; " + std::to_string(pending.size()) +
            " case(s) left run one process each");
      KPORT_TRY(health_check(command + " " + instance));
    } else if (!pending.empty()) {
      m_log(command + " " + instance + ": the report left out " + std::to_string(pending.size()) + " planned case(s); running them alone");
    }
  }
  auto case_limit = std::min<std::chrono::seconds>(
      m_opt.process_timeout, std::max<std::chrono::seconds>(std::chrono::seconds(60),
                                                            std::chrono::seconds(static_cast<long>(2 * m_opt.kernel_timeout_s) + 30)));
  for (const auto& c : pending) {
    if (cancelled()) return make_error(Errc::conflict, "cancelled");
    std::vector<std::string> args{command, "--instance", instance, "--dtype", c.dtype, "--shape", c.shape};
    args.insert(args.end(), run_flags.begin(), run_flags.end());
    RunResult r = run(args, case_limit);
    if (r.status == "cancelled") return make_error(Errc::conflict, "cancelled");
    CaseOutcome* o = nullptr;
    for (const auto& e : r.entries) o = apply(e, r);
    if (!r.clean) {
      CaseOutcome& out = *slot.at(c.key());
      out.status = r.status;
      std::string where = bench ? "bench: " : "";
      out.message = o && !out.message.empty() ? out.message + "; " + r.message : where + r.message;
      m_log(command + " " + instance + " " + c.dtype + " " + c.shape + ": " + r.status + ", " + r.message);
      KPORT_TRY(health_check(command + " " + instance + " " + c.dtype + " " + c.shape));
    } else if (!o) {
      CaseOutcome& out = *slot.at(c.key());
      out.status = "crashed";
      out.message = command + " reported no result for the case";
    }
  }
  return {};
}

Result<std::vector<CaseOutcome>> Harness::run_instance(const std::string& instance) {
  auto cases = plan("check", instance);
  if (!cases.ok()) return std::move(cases).error();
  // One seed for the instance: the check derives each case's from it, and every bench
  // round times the same inputs, so rounds differ only by process and GPU state.
  const std::uint64_t seed = m_opt.seed ? *m_opt.seed : fresh_seed();
  std::vector<CaseOutcome> done;
  KPORT_TRY(run_cases("check", instance, *cases, true, seed, done));
  if (!m_opt.bench) return done;
  auto timed = plan("bench", instance);
  if (!timed.ok()) {
    m_log("cannot plan bench for " + instance + ": " + timed.error().message);
    return done;
  }
  std::map<std::string, const CaseOutcome*> by_key;
  for (const auto& d : done) by_key[d.c.key()] = &d;
  std::vector<HarnessCase> to_time;
  for (const auto& c : *timed)
    if (auto it = by_key.find(c.key()); it != by_key.end() && it->second->status == "passed") to_time.push_back(c);
  KPORT_TRY(run_cases("bench", instance, to_time, to_time.size() == timed->size(), seed, done));
  if (m_opt.sampling.rounds <= 1) return done;
  // Further rounds, each in new processes, for the cases the first round measured.
  std::map<std::string, std::vector<json::object>> rounds;
  std::vector<HarnessCase> again;
  for (const auto& d : done)
    if (!d.bench.empty() && d.status == "passed") {
      rounds[d.c.key()].push_back(d.bench);
      again.push_back(d.c);
    }
  auto one_round = [&](const std::vector<HarnessCase>& which) -> Status {
    std::map<std::string, bool> wanted;
    for (const auto& c : which) wanted[c.key()] = true;
    for (auto& d : done)
      if (wanted.count(d.c.key())) d.bench = {};
    KPORT_TRY(run_cases("bench", instance, which, which.size() == timed->size(), seed, done));
    for (auto& d : done)
      if (auto it = rounds.find(d.c.key()); it != rounds.end() && wanted.count(d.c.key()) && !d.bench.empty())
        it->second.push_back(d.bench);
    return {};
  };
  for (int r = 1; r < m_opt.sampling.rounds && !again.empty(); ++r) KPORT_TRY(one_round(again));
  // Re-measure: cases whose rounds disagree get more rounds, one at a time, until a
  // majority of their rounds agrees or the budget is spent.
  const double floor = m_opt.sampling.round_agreement_floor;
  for (int extra = 0; extra < m_opt.sampling.remeasure_rounds; ++extra) {
    std::vector<HarnessCase> unsettled;
    for (const auto& c : again)
      if (auto it = rounds.find(c.key()); it != rounds.end() && combine_bench_rounds(it->second, floor).contains("unstable"))
        unsettled.push_back(c);
    if (unsettled.empty()) break;
    m_log("bench " + instance + ": the rounds of " + std::to_string(unsettled.size()) + " case(s) disagree (" + unsettled.front().dtype +
          " " + unsettled.front().shape + (unsettled.size() > 1 ? ", ..." : "") + "); re-measuring, round " +
          std::to_string(extra + 1) + " of at most " + std::to_string(m_opt.sampling.remeasure_rounds));
    KPORT_TRY(one_round(unsettled));
  }
  for (auto& d : done)
    if (auto it = rounds.find(d.c.key()); it != rounds.end()) d.bench = combine_bench_rounds(it->second, floor);
  return done;
}

}  // namespace kport::runner
