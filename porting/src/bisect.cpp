// The ends are probed again before anything is searched: a verdict compares figures
// taken hours apart, on whichever runner was free, with the toolkit and driver of the
// day. A search is only worth its builds when the bad end still differs from the good end
// now; when it does not, the question is what moved instead, and the answer is a cause
// class, not a commit. Timed probes are judged against the fresh ends' figures for the
// same reason.
#include "kport/porting/bisect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace kport::porting {

const char* to_string(BisectKind k) {
  switch (k) {
    case BisectKind::perf_regression: return "perf_regression";
    case BisectKind::numerics_failure: return "numerics_failure";
    case BisectKind::build_failure: return "build_failure";
  }
  return "?";
}

const char* to_string(BisectCause c) {
  switch (c) {
    case BisectCause::code: return "code";
    case BisectCause::toolkit: return "toolkit";
    case BisectCause::driver: return "driver";
    case BisectCause::runner: return "runner";
    case BisectCause::noise: return "noise";
  }
  return "?";
}

const char* to_string(ProbeOutcome o) {
  switch (o) {
    case ProbeOutcome::pending: return "pending";
    case ProbeOutcome::good: return "good";
    case ProbeOutcome::bad: return "bad";
    case ProbeOutcome::ambiguous: return "ambiguous";
    case ProbeOutcome::skipped: return "skipped";
  }
  return "?";
}

std::optional<BisectKind> bisect_kind_from(const std::string& text) {
  for (auto k : {BisectKind::perf_regression, BisectKind::numerics_failure, BisectKind::build_failure})
    if (text == to_string(k)) return k;
  return std::nullopt;
}

std::optional<BisectCause> bisect_cause_from(const std::string& text) {
  for (auto c : {BisectCause::code, BisectCause::toolkit, BisectCause::driver, BisectCause::runner, BisectCause::noise})
    if (text == to_string(c)) return c;
  return std::nullopt;
}

namespace {

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f%%", v * 100);
  return buf;
}

std::string short_sha(const std::string& s) { return s.substr(0, 12); }

// A case's figure over every finished probe of a commit that timed it.
struct Aggregate {
  bool present = false, failing = false, passing = false;
  int figures = 0;
  double mean_us = 0;
  double se_rel = 0;  // of the mean, relative
};

Aggregate aggregate(const std::vector<const ProbeFact*>& probes, const BisectCase& c, const BisectPolicy& policy) {
  Aggregate a;
  double sum = 0, own = 0;
  for (const ProbeFact* p : probes) {
    if (!p->finished) continue;
    for (const auto& o : p->cases) {
      if (o.key != c.key || !o.present) continue;
      a.present = true;
      if (o.failing) {
        a.failing = true;
        continue;
      }
      a.passing = true;
      if (!o.median_us || *o.median_us <= 0) continue;
      sum += *o.median_us;
      own = std::max(own, o.se_rel.value_or(0));
      ++a.figures;
    }
  }
  if (a.figures > 0) {
    a.mean_us = sum / a.figures;
    // One figure's noise is the series' A/A spread (what moves between processes) or its
    // own standard error, whichever is larger; averaging n probes divides it by sqrt(n).
    const double one = std::max({policy.min_sigma_rel, c.sigma_rel, own});
    a.se_rel = one / std::sqrt(static_cast<double>(a.figures));
  }
  return a;
}

std::vector<const ProbeFact*> probes_of(const BisectInput& in, const std::string& commit) {
  std::vector<const ProbeFact*> out;
  for (const auto& p : in.probes)
    if (p.commit == commit) out.push_back(&p);
  return out;
}

int finished_count(const std::vector<const ProbeFact*>& probes) {
  int n = 0;
  for (const ProbeFact* p : probes) n += p->finished ? 1 : 0;
  return n;
}

// The ends' figures a timed probe is judged against: the fresh probes of the ends when
// they timed the case, else the verdict's figures.
struct Ends {
  std::optional<double> good_us, bad_us;
};

Ends ends_of(const BisectInput& in, const BisectCase& c, const BisectPolicy& policy) {
  Ends e{c.good_us, c.bad_us};
  if (in.commits.size() < 2) return e;
  const Aggregate g = aggregate(probes_of(in, in.commits.front()), c, policy);
  const Aggregate b = aggregate(probes_of(in, in.commits.back()), c, policy);
  if (g.figures > 0 && b.figures > 0) {
    e.good_us = g.mean_us;
    e.bad_us = b.mean_us;
  }
  return e;
}

ProbeOutcome judge_case(const BisectInput& in, const std::vector<const ProbeFact*>& probes, const BisectCase& c,
                        const BisectPolicy& policy) {
  const Aggregate a = aggregate(probes, c, policy);
  if (!a.present) return ProbeOutcome::skipped;
  if (in.kind != BisectKind::perf_regression) return a.failing ? ProbeOutcome::bad : ProbeOutcome::good;
  if (a.figures == 0) return ProbeOutcome::skipped;  // failed its check: not the question asked here
  const Ends e = ends_of(in, c, policy);
  if (!e.good_us || !e.bad_us || *e.good_us <= 0) return ProbeOutcome::skipped;
  const double mid = (*e.good_us + *e.bad_us) / 2;
  const double band = a.se_rel * *e.good_us;
  if (std::abs(a.mean_us - mid) <= band) return ProbeOutcome::ambiguous;
  const bool nearer_bad = (a.mean_us > mid) == (*e.bad_us > *e.good_us);
  return nearer_bad ? ProbeOutcome::bad : ProbeOutcome::good;
}

ProbeOutcome combine(const std::vector<ProbeOutcome>& per_case) {
  bool any_good = false, any_ambiguous = false;
  for (auto o : per_case) {
    if (o == ProbeOutcome::bad) return ProbeOutcome::bad;
    any_ambiguous = any_ambiguous || o == ProbeOutcome::ambiguous;
    any_good = any_good || o == ProbeOutcome::good;
  }
  if (any_ambiguous) return ProbeOutcome::ambiguous;
  return any_good ? ProbeOutcome::good : ProbeOutcome::skipped;
}

// What moved between the good end's first evidence and its probe today.
BisectCause moved(const ProbeEnv& first, const ProbeEnv& now) {
  auto differs = [](const std::string& a, const std::string& b) { return !a.empty() && !b.empty() && a != b; };
  if (differs(first.toolkit, now.toolkit)) return BisectCause::toolkit;
  if (differs(first.driver, now.driver)) return BisectCause::driver;
  if (differs(first.runner, now.runner)) return BisectCause::runner;
  return BisectCause::noise;
}

// The environment of the latest finished probe.
ProbeEnv env_of(const std::vector<const ProbeFact*>& probes) {
  ProbeEnv env;
  for (const ProbeFact* p : probes)
    if (p->finished) env = p->env;
  return env;
}

BisectStep done(BisectCause cause, std::string why) {
  BisectStep s;
  s.action = BisectStep::Action::done;
  s.cause = cause;
  s.why = std::move(why);
  return s;
}

// The bad end compared with the good end now, timed cases: the fresh effect over the
// verdict's, with its noise. Reproduces when that share is beyond one half by more than
// the noise, does not when below it by as much, ambiguous between.
ProbeOutcome reproduces(const BisectInput& in, const BisectPolicy& policy, std::string& detail) {
  std::vector<ProbeOutcome> per_case;
  for (const auto& c : in.cases) {
    const Aggregate g = aggregate(probes_of(in, in.commits.front()), c, policy);
    const Aggregate b = aggregate(probes_of(in, in.commits.back()), c, policy);
    if (!c.good_us || !c.bad_us || *c.good_us <= 0 || g.figures == 0 || b.figures == 0) {
      per_case.push_back(ProbeOutcome::skipped);
      continue;
    }
    const double first = *c.bad_us / *c.good_us - 1;
    const double now = b.mean_us / g.mean_us - 1;
    if (first == 0) {
      per_case.push_back(ProbeOutcome::good);
      continue;
    }
    const double share = now / first;
    const double noise = std::sqrt(g.se_rel * g.se_rel + b.se_rel * b.se_rel) / std::abs(first);
    detail += (detail.empty() ? "" : ", ") + c.key + ": " + pct(first) + " then, " + pct(now) + " now";
    per_case.push_back(share - 0.5 > noise   ? ProbeOutcome::bad
                       : 0.5 - share > noise ? ProbeOutcome::good
                                             : ProbeOutcome::ambiguous);
  }
  return combine(per_case);
}

}  // namespace

ProbeOutcome judge(const BisectInput& in, const std::vector<const ProbeFact*>& probes, const BisectPolicy& policy) {
  if (finished_count(probes) == 0) return ProbeOutcome::pending;
  std::vector<ProbeOutcome> per_case;
  for (const auto& c : in.cases) per_case.push_back(judge_case(in, probes, c, policy));
  return combine(per_case);
}

namespace {

BisectStep search_step(const BisectInput& in, const BisectPolicy& policy) {
  const std::string& good = in.commits.front();
  const std::string& bad = in.commits.back();
  const auto good_probes = probes_of(in, good), bad_probes = probes_of(in, bad);

  // 1. Both ends, today.
  if (good_probes.empty() || bad_probes.empty()) {
    BisectStep s;
    s.action = BisectStep::Action::probe;
    if (good_probes.empty()) s.probe.push_back(good);
    if (bad_probes.empty()) s.probe.push_back(bad);
    s.why = "probing both ends again before searching";
    return s;
  }
  const ProbeOutcome g_now = judge(in, good_probes, policy);
  const ProbeOutcome b_now = judge(in, bad_probes, policy);
  const ProbeEnv g_env = env_of(good_probes);
  if (in.kind == BisectKind::perf_regression) {
    std::string detail;
    const ProbeOutcome r = reproduces(in, policy, detail);
    if (r == ProbeOutcome::ambiguous && finished_count(bad_probes) <= policy.max_repeats) {
      BisectStep s;
      s.action = BisectStep::Action::probe;
      s.probe = {good, bad};
      s.why = "the ends differ by about half the slowdown the verdict saw (" + detail + "): probing both again";
      return s;
    }
    if (r != ProbeOutcome::bad) {
      // Not reproduced: the good end moved up (the environment), or nothing moved at all.
      bool good_moved = false;
      for (const auto& c : in.cases) {
        const Aggregate g = aggregate(good_probes, c, policy);
        if (!c.good_us || !c.bad_us || g.figures == 0 || *c.good_us <= 0) continue;
        const double first = *c.bad_us / *c.good_us - 1;
        if (first != 0 && (g.mean_us / *c.good_us - 1) / first > 0.5) good_moved = true;
      }
      if (!good_moved) {
        // The verdict compared figures of two drivers (or toolkits); probed again on one,
        // the ends agree: the slowdown came with the environment.
        const BisectCause then = moved(in.good_env, in.bad_env);
        const ProbeEnv b_env = env_of(bad_probes);
        if (then == BisectCause::toolkit && g_env.toolkit == b_env.toolkit && !g_env.toolkit.empty())
          return done(BisectCause::toolkit, "the slowdown does not reproduce with both ends on toolkit " +
                                                g_env.toolkit + ": it came with toolkit " + in.good_env.toolkit +
                                                " -> " + in.bad_env.toolkit +
                                                (detail.empty() ? "" : " (" + detail + ")"));
        if (then == BisectCause::driver && g_env.driver == b_env.driver && !g_env.driver.empty())
          return done(BisectCause::driver, "the slowdown does not reproduce with both ends on driver " + g_env.driver +
                                               ": it came with driver " + in.good_env.driver + " -> " +
                                               in.bad_env.driver + (detail.empty() ? "" : " (" + detail + ")"));
      }
      const BisectCause cause = good_moved ? moved(in.good_env, g_env) : BisectCause::noise;
      std::string why = good_moved ? "the good end " + short_sha(good) + " is slow now too"
                                   : "the slowdown does not reproduce between the ends";
      // Say which move: the probes ran where the bad end's evidence came from (the
      // bisection's pinned driver), the good end's first figure elsewhere.
      if (good_moved && cause == BisectCause::driver)
        why += " on driver " + g_env.driver + ": it came with driver " + in.good_env.driver + " -> " + g_env.driver;
      if (good_moved && cause == BisectCause::toolkit)
        why +=
            " on toolkit " + g_env.toolkit + ": it came with toolkit " + in.good_env.toolkit + " -> " + g_env.toolkit;
      return done(cause, why + (detail.empty() ? "" : " (" + detail + ")"));
    }
  } else {
    const std::string what = in.kind == BisectKind::build_failure ? "fails to build" : "fails its check";
    if (b_now == ProbeOutcome::good)
      return done(BisectCause::noise, "the bad end " + short_sha(bad) + " passes now: the failure does not reproduce");
    if (b_now == ProbeOutcome::skipped)
      return done(BisectCause::noise, "the bad end " + short_sha(bad) + " could not be checked again");
    if (g_now == ProbeOutcome::bad || g_now == ProbeOutcome::skipped)
      return done(moved(in.good_env, g_env),
                  "the good end " + short_sha(good) +
                      (g_now == ProbeOutcome::bad ? " " + what + " now too" : " could not be checked again"));
  }

  // 2. Binary search between the last good and the first bad commit.
  const int n = static_cast<int>(in.commits.size());
  // The ends are known: good first, bad last (n >= 2 here).
  std::vector<ProbeOutcome> outcome(static_cast<std::size_t>(n), ProbeOutcome::pending);
  std::vector<int> probed(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    if (i == 0 || i == n - 1) {
      outcome[static_cast<std::size_t>(i)] = i == 0 ? ProbeOutcome::good : ProbeOutcome::bad;
      continue;
    }
    const auto ps = probes_of(in, in.commits[static_cast<std::size_t>(i)]);
    probed[static_cast<std::size_t>(i)] = finished_count(ps);
    if (!ps.empty()) outcome[static_cast<std::size_t>(i)] = judge(in, ps, policy);
  }
  int hi = n - 1;
  for (int i = 1; i < n - 1; ++i)
    if (outcome[static_cast<std::size_t>(i)] == ProbeOutcome::bad) {
      hi = i;
      break;
    }
  int lo = 0;
  for (int i = hi - 1; i > 0; --i)
    if (outcome[static_cast<std::size_t>(i)] == ProbeOutcome::good) {
      lo = i;
      break;
    }
  std::vector<int> candidates;
  for (int i = lo + 1; i < hi; ++i) {
    const auto o = outcome[static_cast<std::size_t>(i)];
    if (o == ProbeOutcome::pending) candidates.push_back(i);
    if (o == ProbeOutcome::ambiguous && probed[static_cast<std::size_t>(i)] <= policy.max_repeats) {
      BisectStep s;
      s.action = BisectStep::Action::probe;
      s.probe = {in.commits[static_cast<std::size_t>(i)]};
      s.why = short_sha(in.commits[static_cast<std::size_t>(i)]) + " sits between the ends' figures: probing it again";
      return s;
    }
  }
  if (!candidates.empty()) {
    const int mid = lo + (hi - lo) / 2;
    int pick = candidates.front();
    for (int c : candidates)
      if (std::abs(c - mid) < std::abs(pick - mid)) pick = c;
    BisectStep s;
    s.action = BisectStep::Action::probe;
    s.probe = {in.commits[static_cast<std::size_t>(pick)]};
    s.why = std::to_string(hi - lo - 1) + " commit(s) left between " +
            short_sha(in.commits[static_cast<std::size_t>(lo)]) + " (good) and " +
            short_sha(in.commits[static_cast<std::size_t>(hi)]) + " (bad)";
    return s;
  }

  // 3. Done: the first bad commit, with the unjudged ones that could be it instead.
  BisectStep s = done(BisectCause::code, "");
  s.first_bad = in.commits[static_cast<std::size_t>(hi)];
  s.last_good = in.commits[static_cast<std::size_t>(lo)];
  for (int i = lo + 1; i < hi; ++i) s.suspects.push_back(in.commits[static_cast<std::size_t>(i)]);
  s.suspects.push_back(*s.first_bad);
  for (int i = 0; i < n; ++i)
    if (outcome[static_cast<std::size_t>(i)] != ProbeOutcome::pending)
      s.judged.emplace_back(in.commits[static_cast<std::size_t>(i)], outcome[static_cast<std::size_t>(i)]);
  if (in.kind == BisectKind::perf_regression) {
    const auto lo_probes = probes_of(in, *s.last_good), hi_probes = probes_of(in, *s.first_bad);
    for (const auto& c : in.cases) {
      const Aggregate g = aggregate(lo_probes, c, policy), b = aggregate(hi_probes, c, policy);
      if (g.figures == 0 || b.figures == 0) continue;
      CaseEffect e{c.key, g.mean_us, b.mean_us, b.mean_us / g.mean_us - 1, 0};
      e.uncertainty = policy.z * std::sqrt(g.se_rel * g.se_rel + b.se_rel * b.se_rel) * (1 + e.effect);
      s.effects.push_back(std::move(e));
    }
    std::sort(s.effects.begin(), s.effects.end(),
              [](const CaseEffect& a, const CaseEffect& b) { return std::abs(a.effect) > std::abs(b.effect); });
    if (!s.effects.empty()) {
      s.effect = s.effects.front().effect;
      s.uncertainty = s.effects.front().uncertainty;
    }
  }
  s.why = "first bad commit " + short_sha(*s.first_bad) + " after " + short_sha(*s.last_good) +
          (s.suspects.size() > 1
               ? " (or one of the " + std::to_string(s.suspects.size() - 1) + " unjudged commits before it)"
               : "") +
          (s.effect ? ": " + pct(*s.effect) + " +- " + pct(*s.uncertainty).substr(1) : "");
  return s;
}

BisectStep stop(bool cancelled, std::string why) {
  BisectStep s;
  s.action = BisectStep::Action::stop;
  s.cancelled = cancelled;
  s.why = std::move(why);
  return s;
}

std::string probe_name(const ProbeFact& p) {
  return "the probe of " + short_sha(p.commit) +
         (p.pipeline > 0 ? " (pipeline " + std::to_string(p.pipeline) + ")" : std::string()) +
         (p.end_reason.empty() ? std::string() : ": " + p.end_reason);
}

}  // namespace

BisectStep next_step(const BisectInput& in, const BisectPolicy& policy) {
  if (in.commits.size() < 2) return done(BisectCause::noise, "nothing to search: fewer than two commits");
  if (in.cases.empty()) return done(BisectCause::noise, "nothing to search: no case to follow");
  // A cancelled probe stops the search at once, whatever else is still open.
  for (const auto& p : in.probes)
    if (p.finished && p.end == ProbeEnd::cancelled) return stop(true, "stopped: " + probe_name(p) + " was cancelled");
  for (const auto& p : in.probes)
    if (!p.finished) {
      BisectStep s;
      s.action = BisectStep::Action::wait;
      s.why = "waiting for the probe of " + short_sha(p.commit);
      return s;
    }
  // Probes that measured nothing: a cancelled one stops the search; one that failed on
  // the machine is probed again, a bounded number of times in a row per commit.
  std::map<std::string, std::vector<const ProbeFact*>> machine;  // per commit, since its last completed probe
  for (const auto& p : in.probes) {
    if (p.end == ProbeEnd::infrastructure)
      machine[p.commit].push_back(&p);
    else
      machine.erase(p.commit);
  }
  BisectStep again;
  again.action = BisectStep::Action::probe;
  for (const auto& [commit, failed] : machine) {
    if (static_cast<int>(failed.size()) > policy.infrastructure_retries)
      return stop(false, "stopped: " + probe_name(*failed.back()) + ", failed on the machine " +
                             std::to_string(failed.size()) + " times in a row");
    again.probe.push_back(commit);
    again.why += (again.why.empty() ? "probing again, " : "; ") + probe_name(*failed.back()) +
                 " failed on the machine, not the commit";
  }
  if (!again.probe.empty()) return again;
  BisectInput measured = in;
  measured.probes.clear();
  for (const auto& p : in.probes)
    if (p.end == ProbeEnd::completed) measured.probes.push_back(p);
  return search_step(measured, policy);
}

}  // namespace kport::porting
