#include "harness_exec.h"

#include <algorithm>
#include <map>
#include <optional>

#include "kport/common/json_fields.h"
#include "kport/porting/subprocess.h"

namespace kport::runner {
namespace json = boost::json;

namespace {

// The harness prints one JSON document; stderr shares the captured text, so the document
// is found as the span from the first line that opens an object to the last '}'.
std::optional<json::object> find_document(const std::string& text) {
  boost::system::error_code ec;
  auto whole = json::parse(text, ec);
  if (!ec && whole.is_object()) return whole.as_object();
  std::size_t start = std::string::npos;
  for (std::size_t at = 0; at < text.size();) {
    if (text[at] == '{' && (at == 0 || text[at - 1] == '\n')) {
      start = at;
      break;
    }
    auto nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  auto end = text.rfind('}');
  if (start == std::string::npos || end == std::string::npos || end < start) return std::nullopt;
  auto doc = json::parse(std::string_view(text).substr(start, end - start + 1), ec);
  if (ec || !doc.is_object()) return std::nullopt;
  return doc.as_object();
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
  RunResult r;
  auto t0 = std::chrono::steady_clock::now();
  auto out = porting::run_process(argv, o);
  m_seconds[args.front() == "bench" ? 1 : 0] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!out.ok()) {
    r.status = "crashed";
    r.message = "cannot start " + m_opt.harness.string() + ": " + out.error().message;
    return r;
  }
  auto doc = find_document(out->output);
  if (doc) {
    if (const auto* list = doc->if_contains("results"); list && list->is_array())
      for (const auto& e : list->as_array())
        if (e.is_object()) r.entries.push_back(e.as_object());
    if (const auto* s = doc->if_contains("seed"); s && s->is_number()) r.seed = s->to_number<std::uint64_t>();
  }
  if (out->cancelled) {
    r.status = "cancelled";
    r.message = "cancelled";
    return r;
  }
  if (out->timed_out) {
    r.status = "timeout";
    r.message = "killed after " + std::to_string(limit.count()) + " s without finishing";
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
  else if (!doc) r.message += out->output.empty() ? "; printed nothing" : "; printed no JSON report: " + excerpt(out->output);
  return r;
}

Result<Harness::Answer> Harness::ask(const std::vector<std::string>& args, std::chrono::seconds limit) {
  std::vector<std::string> argv{m_opt.harness.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  porting::ProcessOptions o;
  o.timeout = limit;
  o.env = m_opt.env;
  auto out = porting::run_process(argv, o);
  if (!out.ok()) return std::move(out).error();
  Answer a{std::move(*out), std::nullopt};
  a.doc = find_document(a.out.output);
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

Status Harness::run_cases(const std::string& command, const std::string& instance, const std::vector<HarnessCase>& cases, bool grid,
                          std::vector<CaseOutcome>& done) {
  const bool bench = command == "bench";
  std::map<std::string, CaseOutcome*> slot;
  if (!bench) {
    done.reserve(done.size() + cases.size());
    for (const auto& c : cases) done.push_back(CaseOutcome{c, "", "", {}, {}, 0});
  }
  for (auto& d : done) slot[d.c.key()] = &d;
  auto apply = [&](const json::object& e, const RunResult& r) -> CaseOutcome* {
    auto it = slot.find(str(e, "dtype") + "|" + str(e, "shape_text"));
    if (it == slot.end()) return nullptr;
    CaseOutcome& out = *it->second;
    std::string verdict = str(e, "verdict");
    std::string reason = str(e, "reason");
    if (const auto* s = e.if_contains("seed"); s && s->is_number() && !bench) out.seed = s->to_number<std::uint64_t>();
    if (!bench) {
      out.check = e;
      if (verdict == "passed" || verdict == "failed" || verdict == "unsupported") out.status = verdict;
      else out.status = !r.clean && r.status == "timeout" ? "timeout" : "crashed";
      out.message = reason;
    } else if (verdict == "measured") {
      out.bench = e;
    } else if (verdict == "unsupported") {
      out.message = "not timed: " + reason;
    } else {
      out.status = !r.clean && r.status == "timeout" ? "timeout" : "crashed";
      out.message = "bench: " + (reason.empty() ? verdict : reason);
    }
    return &out;
  };
  std::vector<std::string> common{"--timeout-s", std::to_string(m_opt.kernel_timeout_s)};
  if (bench) {
    const BenchSampling& b = m_opt.sampling;
    common.insert(common.end(), {"--time-cap-ms", std::to_string(b.time_cap_ms), "--warmup-ms", std::to_string(b.warmup_ms),
                                 "--min-samples", std::to_string(b.min_samples), "--max-rse", std::to_string(b.max_rse),
                                 "--max-duty", std::to_string(b.max_duty), "--throttle-threshold",
                                 std::to_string(b.throttle_threshold)});
  }
  std::vector<HarnessCase> pending = cases;
  if (grid && !cases.empty()) {
    std::vector<std::string> args{command, "--all", "--instance", instance};
    args.insert(args.end(), common.begin(), common.end());
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
    args.insert(args.end(), common.begin(), common.end());
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

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

json::object combine_bench_rounds(const std::vector<json::object>& rounds) {
  if (rounds.empty()) return {};
  if (rounds.size() == 1) return rounds.front();
  json::object out = rounds.front();
  std::vector<double> ours, base;
  json::array detail;
  double samples = 0, stddev = 0, dropped = 0;
  std::optional<double> lowest_mhz, highest_mhz;
  for (const auto& r : rounds) {
    auto m = number_at(r, {"timing", "median_ms"});
    if (!m) continue;
    ours.push_back(*m);
    samples += number_at(r, {"timing", "samples"}).value_or(0);
    stddev = std::max(stddev, number_at(r, {"timing", "stddev_ms"}).value_or(0));
    dropped += number_at(r, {"timing", "discarded_throttled"}).value_or(0);
    if (auto lo = number_at(r, {"timing", "sm_mhz_after_samples", "min"}))
      lowest_mhz = std::min(lowest_mhz.value_or(*lo), *lo);
    if (auto hi = number_at(r, {"timing", "sm_mhz_after_samples", "max"}))
      highest_mhz = std::max(highest_mhz.value_or(*hi), *hi);
    json::object d{{"median_ms", *m}, {"samples", number_at(r, {"timing", "samples"}).value_or(0)}};
    if (auto mhz = number_at(r, {"timing", "sm_mhz_after_samples", "median"})) d["sm_mhz"] = *mhz;
    if (auto b = number_at(r, {"baseline", "timing", "median_ms"})) {
      base.push_back(*b);
      d["baseline_median_ms"] = *b;
    }
    detail.push_back(std::move(d));
  }
  if (ours.empty() || !out.contains("timing") || !out["timing"].is_object()) return out;
  const double first = number_at(rounds.front(), {"timing", "median_ms"}).value_or(ours.front());
  const double combined = median_of(ours);
  auto& t = out["timing"].as_object();
  t["median_ms"] = combined;
  t["samples"] = samples;
  t["stddev_ms"] = stddev;
  t["discarded_throttled"] = dropped;
  if (lowest_mhz && highest_mhz && t.contains("sm_mhz_after_samples") && t["sm_mhz_after_samples"].is_object()) {
    auto& mhz = t["sm_mhz_after_samples"].as_object();  // median stays the first round's
    mhz["min"] = *lowest_mhz;
    mhz["max"] = *highest_mhz;
  }
  t["rounds"] = std::move(detail);
  const auto [lo, hi] = std::minmax_element(ours.begin(), ours.end());
  t["round_spread"] = *lo > 0 ? (*hi - *lo) / *lo : 0.0;
  // Rates are inversely proportional to the time.
  for (const char* k : {"tflops", "gbps"})
    if (auto v = number_at(out, {k}); v && combined > 0) out[k] = *v * first / combined;
  if (base.size() == ours.size() && out.contains("baseline") && out["baseline"].is_object()) {
    const double base_combined = median_of(base);
    auto& b = out["baseline"].as_object();
    const double base_first = number_at(b, {"timing", "median_ms"}).value_or(base_combined);
    if (b.contains("timing") && b["timing"].is_object()) b["timing"].as_object()["median_ms"] = base_combined;
    for (const char* k : {"tflops", "gbps"})
      if (auto v = number_at(b, {k}); v && base_combined > 0) b[k] = *v * base_first / base_combined;
    if (combined > 0) out["ratio"] = base_combined / combined;
  }
  return out;
}

Result<std::vector<CaseOutcome>> Harness::run_instance(const std::string& instance) {
  auto cases = plan("check", instance);
  if (!cases.ok()) return std::move(cases).error();
  std::vector<CaseOutcome> done;
  KPORT_TRY(run_cases("check", instance, *cases, true, done));
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
  KPORT_TRY(run_cases("bench", instance, to_time, to_time.size() == timed->size(), done));
  if (m_opt.sampling.rounds <= 1) return done;
  // Further rounds, each in new processes, for the cases the first round measured.
  std::map<std::string, std::vector<json::object>> rounds;
  std::vector<HarnessCase> again;
  for (const auto& d : done)
    if (!d.bench.empty() && d.status == "passed") {
      rounds[d.c.key()].push_back(d.bench);
      again.push_back(d.c);
    }
  for (int r = 1; r < m_opt.sampling.rounds && !again.empty(); ++r) {
    for (auto& d : done)
      if (rounds.count(d.c.key())) d.bench = {};
    KPORT_TRY(run_cases("bench", instance, again, again.size() == timed->size(), done));
    for (auto& d : done)
      if (auto it = rounds.find(d.c.key()); it != rounds.end() && !d.bench.empty()) it->second.push_back(d.bench);
  }
  for (auto& d : done)
    if (auto it = rounds.find(d.c.key()); it != rounds.end()) d.bench = combine_bench_rounds(it->second);
  return done;
}

}  // namespace kport::runner
