// The verdict's own rule (porting/noise.h, porting/verdict.h: a screen against the
// baseline's figure, then a confirmation by the baseline's harness timed in interleaved
// rounds on one GPU) over A/A figures of one GPU: how often it would count a regression
// where the code did not change, and how often it finds an effect applied to the change.
//
//   kport-bench-aa FIGURES.tsv [--effect E]... [--screen-k K] [--floor F] [--confirm-k K]
//                  [--confirm-floor F] [--side-rounds N] [--splits 1] (extract.py writes FIGURES.tsv)
//
// Each case's figures come from several harness processes (passes) on several machine
// starts; each start built its own harness, so a start is one "code" of the A/A history,
// as the coordinator groups figures by harness sha256.
//
// Screen: every ordered pair of figures (before, now) from different processes, the
// series' noise learned from the case's other figures, classified as a verdict does; a
// `regressed` pair is a suspect that asks for its re-measure.
// Confirm: every 2N consecutive processes of one start (N = --side-rounds, 2 by default)
// stand for a re-measure's A/B/A/B...: the baseline's side the odd ones, the change's the
// even ones, each combined as the runner combines rounds, the noise learned from the
// case's figures outside the window. Every such window is
// judged whether or not a screen suspected the case (a re-measure times every case of a
// suspected instance), so the false confirmations counted are an upper bound.
// With --effect E the change's figures (`now`, p2, p4) are scaled by 1 + E: a case's
// detection rate is its screen rate times its confirm rate (the re-measure is a later job,
// on whatever machine takes it).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kport/porting/noise.h"
#include "kport/porting/verdict.h"

namespace {

using kport::porting::AaFigure;
using kport::porting::Change;
using kport::porting::CheckOutcome;
using kport::porting::classify;
using kport::porting::confirm_band;
using kport::porting::learn_noise;
using kport::porting::NoiseModel;
using kport::porting::ResultFact;
using kport::porting::SeriesKey;
using kport::porting::VerdictPolicy;

struct AaSample {
  int start = 0, pass = 0;
  double median_us = 0, stddev_us = 0;
  std::int64_t samples = 0;
};

struct Case {
  std::string family;
  std::vector<AaSample> figures;
};

ResultFact fact(const std::string& key, const AaSample& f, double scale) {
  ResultFact r;
  r.instance = key;
  r.status = CheckOutcome::passed;
  r.median_us = f.median_us * scale;
  r.stddev_us = f.stddev_us * scale;
  r.samples = f.samples;
  return r;
}

// One side of an interleaved pair: n rounds of the same harness, combined as the runner
// combines them (the median of their medians; two rounds: their mean).
struct Side {
  double median_us = 0, stddev_us = 0;
  std::int64_t samples = 0;
};
Side side(std::vector<const AaSample*> rounds, double scale) {
  std::sort(rounds.begin(), rounds.end(),
            [](const AaSample* a, const AaSample* b) { return a->median_us < b->median_us; });
  const std::size_t n = rounds.size();
  Side s;
  s.median_us =
      scale * (n % 2 ? rounds[n / 2]->median_us : (rounds[n / 2 - 1]->median_us + rounds[n / 2]->median_us) / 2);
  double var = 0;
  for (const auto* r : rounds) {
    var += r->stddev_us * r->stddev_us;
    s.samples += r->samples;
  }
  s.stddev_us = scale * std::sqrt(var / static_cast<double>(n));
  return s;
}

struct Tally {
  long cases = 0, pairs = 0, judged = 0, insufficient = 0, suspected = 0;
  long windows = 0, confirmed = 0;  // interleaved pairs judged, and those counted
  long cases_confirmed = 0;         // cases with a counted window
  long cases_detect95 = 0;          // cases found in >= 95 % of trials
  double detection = 0;             // sum over cases of screen rate x confirm rate
  double detection_instance = 0;    // ... with the instance's screen rate (any of its cases suspected)
  long cases_detect95_instance = 0;
  double min_mde = 1e9, max_mde = 0, sum_mde = 0;
  long mde_n = 0;
  double max_false = 0;  // the largest confirmed A/A difference
};

bool read_double(const char* text, double& out) {
  char* end = nullptr;
  out = std::strtod(text, &end);
  return end != text && *end == '\0';
}

// A real change, timed interleaved with the unchanged harness on each machine start
// (extract.py --change): per case its effect (the median over starts of the changed
// side's mean over the unchanged side's), and the verdict's rule over it: the screen of
// each changed figure against each A/A figure of the case, and the confirmation of each
// run of N consecutive pairs of one start, N = side_rounds, the runs disjoint (independent
// trials: pairs 1-4, 5-8, ...). The A/A history is the case's.
int judge_change(const std::string& path, std::map<std::string, Case>& aa, const VerdictPolicy& policy,
                 int side_rounds) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "kport-bench-aa: cannot read " << path << "\n";
    return 2;
  }
  struct Pair {
    int start = 0, index = 0;
    AaSample a, b;
    bool has_a = false, has_b = false;
  };
  std::map<std::string, std::map<std::pair<int, int>, Pair>> pairs;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key, start, index, side_name, family, median, stddev, samples;
    if (!std::getline(ls, key, '\t') || !std::getline(ls, start, '\t') || !std::getline(ls, index, '\t') ||
        !std::getline(ls, side_name, '\t') || !std::getline(ls, family, '\t') || !std::getline(ls, median, '\t') ||
        !std::getline(ls, stddev, '\t') || !std::getline(ls, samples, '\t')) {
      std::cerr << "kport-bench-aa: malformed line: " << line << "\n";
      return 2;
    }
    Pair& p = pairs[key][{std::stoi(start), std::stoi(index)}];
    p.start = std::stoi(start);
    p.index = std::stoi(index);
    const AaSample x{p.start, p.index, std::stod(median), std::stod(stddev), std::stoll(samples)};
    if (side_name == "A")
      p.a = x, p.has_a = true;
    else
      p.b = x, p.has_b = true;
  }
  // Per instance: the screen trials in which any of its cases was suspected.
  struct Judged {
    double effect = 0, typical = 0, screen = 0, confirm = 0;
    long windows = 0, confirmed = 0;
    std::set<std::string> trials;
  };
  std::map<std::string, Judged> judged;
  std::map<std::string, std::set<std::string>> by_instance;
  for (auto& [key, ps] : pairs) {
    auto found = aa.find(key);
    if (found == aa.end()) continue;
    const auto& f = found->second.figures;
    const SeriesKey series{"gpu", "driver", key, "", ""};
    std::vector<AaFigure> history;
    for (const auto& x : f) history.push_back(AaFigure{"start" + std::to_string(x.start), x.median_us});
    const NoiseModel model = learn_noise(series, history, policy.noise);
    Judged& j = judged[key];
    std::map<int, std::vector<const Pair*>> by_start;
    for (const auto& [at, p] : ps)
      if (p.has_a && p.has_b) by_start[p.start].push_back(&p);
    std::vector<double> effects;
    for (const auto& [start, list] : by_start) {
      double a = 0, b = 0;
      for (const auto* p : list) a += p->a.median_us, b += p->b.median_us;
      effects.push_back(b / a - 1);
      j.typical = a / static_cast<double>(list.size());
    }
    if (effects.empty()) continue;
    std::sort(effects.begin(), effects.end());
    j.effect = effects[effects.size() / 2];
    long screened = 0, suspected = 0;
    for (const auto& x : f)
      for (const auto& [start, list] : by_start)
        for (const auto* p : list) {
          const ResultFact before = fact(key, x, 1.0), now = fact(key, p->b, 1.0);
          const Change ch = classify(&before, now, policy, &model);
          if (ch == Change::insufficient_data) continue;
          ++screened;
          const std::string trial = std::to_string(x.start) + "." + std::to_string(x.pass) + ":" +
                                    std::to_string(p->start) + "." + std::to_string(p->index);
          j.trials.insert(trial);
          if (ch == Change::regressed) ++suspected, by_instance[key.substr(0, key.find('|'))].insert(trial);
        }
    j.screen = screened ? static_cast<double>(suspected) / static_cast<double>(screened) : 0.0;
    for (const auto& [start, list] : by_start)
      for (std::size_t q = 0; q + static_cast<std::size_t>(side_rounds) <= list.size(); q += side_rounds) {
        std::vector<double> am, bm;
        std::vector<const AaSample*> as, bs;
        for (int r = 0; r < side_rounds; ++r) {
          const Pair& x = *list[q + r];
          am.push_back(x.a.median_us), bm.push_back(x.b.median_us);
          as.push_back(&x.a), bs.push_back(&x.b);
        }
        const auto band = confirm_band(model, am, bm, policy.noise);
        if (!band) continue;
        ++j.windows;
        if (side(bs, 1.0).median_us / side(as, 1.0).median_us - 1 > *band) ++j.confirmed;
      }
    j.confirm = j.windows ? static_cast<double>(j.confirmed) / static_cast<double>(j.windows) : 0.0;
  }
  struct Bin {
    const char* name;
    double lo, hi;
    long cases = 0, windows = 0, confirmed = 0;
    double detection = 0;
  };
  const Bin edges[] = {{"below +0.5 %", -1e9, 0.005},
                       {"+0.5 to +1.5 %", 0.005, 0.015},
                       {"+1.5 to +3 %", 0.015, 0.03},
                       {"+3 to +5 %", 0.03, 0.05},
                       {"above +5 %", 0.05, 1e9}};
  std::vector<Bin> bins[2];  // kernels >= 50 us, and shorter
  for (auto& b : bins) b.assign(std::begin(edges), std::end(edges));
  std::printf("a real change, interleaved with the unchanged harness (%d pairs a side per confirmation):\n",
              side_rounds);
  for (const auto& [key, j] : judged) {
    const auto& any = by_instance[key.substr(0, key.find('|'))];
    long hit = 0;
    for (const auto& t : j.trials) hit += any.count(t);
    const double inst = j.trials.empty() ? 0.0 : static_cast<double>(hit) / static_cast<double>(j.trials.size());
    for (auto& b : bins[j.typical >= 50 ? 0 : 1])
      if (j.effect >= b.lo && j.effect < b.hi) {
        ++b.cases;
        b.windows += j.windows;
        b.confirmed += j.confirmed;
        b.detection += inst * j.confirm;
      }
    std::printf("  %-70s %9.1f us  effect %+6.2f %%  screen %5.1f %% (instance %5.1f %%)  confirmed %ld of %ld\n",
                key.c_str(), j.typical, 100 * j.effect, 100 * j.screen, 100 * inst, j.confirmed, j.windows);
  }
  for (int c = 0; c < 2; ++c)
    for (const auto& b : bins[c])
      if (b.cases)
        std::printf(
            "  %-8s effect %-15s cases %3ld  confirmed %4ld of %4ld windows (%.1f %%)  detected %.1f %% of "
            "trials\n",
            c == 0 ? ">= 50 us" : "< 50 us", b.name, b.cases, b.confirmed, b.windows,
            b.windows ? 100.0 * b.confirmed / b.windows : 0.0, 100 * b.detection / b.cases);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kport-bench-aa FIGURES.tsv [--effect E ...] [--screen-k K] [--floor F] [--confirm-k K] "
                 "[--confirm-floor F] [--side-rounds N] [--splits 1]\n";
    return 2;
  }
  std::vector<double> effects{0.0};
  VerdictPolicy policy;
  int side_rounds = 2;      // rounds of each side of an interleaved pair
  bool splits = false;      // --splits 1: every split of a start's 2n processes into two sides
  std::string change_path;  // --change: interleaved figures of a real change (extract.py --change)
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    double value = 0;
    if (flag == "--change" && i + 1 < argc) {
      change_path = argv[i + 1];
      continue;
    }
    if (i + 1 >= argc || !read_double(argv[i + 1], value)) {
      std::cerr << "kport-bench-aa: " << flag << " needs a number\n";
      return 2;
    }
    if (flag == "--effect")
      effects.push_back(value);
    else if (flag == "--screen-k")
      policy.noise.screen_k = value;
    else if (flag == "--floor")
      policy.noise.floor = value;
    else if (flag == "--confirm-k")
      policy.noise.confirm_k = value;
    else if (flag == "--confirm-floor")
      policy.noise.confirm_floor = value;
    else if (flag == "--side-rounds")
      side_rounds = static_cast<int>(value);
    else if (flag == "--splits")
      splits = value != 0;

    else {
      std::cerr << "kport-bench-aa: unknown option " << flag << "\n";
      return 2;
    }
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "kport-bench-aa: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::map<std::string, Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key, start, pass, family, median, stddev, samples;
    if (!std::getline(ls, key, '\t') || !std::getline(ls, start, '\t') || !std::getline(ls, pass, '\t') ||
        !std::getline(ls, family, '\t') || !std::getline(ls, median, '\t') || !std::getline(ls, stddev, '\t') ||
        !std::getline(ls, samples, '\t')) {
      std::cerr << "kport-bench-aa: malformed line: " << line << "\n";
      return 2;
    }
    Case& c = cases[key];
    c.family = family;
    c.figures.push_back(
        AaSample{std::stoi(start), std::stoi(pass), std::stod(median), std::stod(stddev), std::stoll(samples)});
  }
  const char* classes[] = {">= 50 us", "10-50 us", "< 10 us"};
  std::printf(
      "rule: screen %.1f sd and %.2f %%, confirm %.1f sd and %.2f %% with %d rounds a side, %d A/A degrees at least\n",
      policy.noise.screen_k, 100 * policy.noise.floor, policy.noise.confirm_k, 100 * policy.noise.confirm_floor,
      side_rounds, policy.noise.min_degrees);
  for (double effect : effects) {
    Tally t[3];
    struct Screened {
      std::set<std::string> pairs;  // the screen's trials: (before, now) by start and pass
      double screen = 0, confirm = 0;
      Tally* tally = nullptr;
    };
    std::map<std::string, Screened> screens;
    std::map<std::string, std::set<std::string>> by_instance;  // trials in which a case of it was suspected
    std::map<std::string, std::pair<int, double>> alarms;      // A/A: cases with a confirmed window
    for (auto& [key, c] : cases) {
      auto& f = c.figures;
      std::sort(f.begin(), f.end(), [](const AaSample& a, const AaSample& b) {
        return a.start != b.start ? a.start < b.start : a.pass < b.pass;
      });
      std::vector<double> medians;
      for (const auto& x : f) medians.push_back(x.median_us);
      std::nth_element(medians.begin(), medians.begin() + medians.size() / 2, medians.end());
      const double typical = medians[medians.size() / 2];
      Tally& k = t[typical >= 50 ? 0 : typical >= 10 ? 1 : 2];
      ++k.cases;
      const SeriesKey series{"gpu", "driver", key, "", ""};
      auto history_without = [&](std::vector<std::size_t> out) {
        std::vector<AaFigure> h;
        for (std::size_t x = 0; x < f.size(); ++x)
          if (std::find(out.begin(), out.end(), x) == out.end())
            h.push_back(AaFigure{"start" + std::to_string(f[x].start), f[x].median_us});
        return learn_noise(series, h, policy.noise);
      };
      // Screen.
      long pairs = 0, suspected = 0;
      auto& mine = screens[key];
      for (std::size_t i = 0; i < f.size(); ++i)
        for (std::size_t j = i + 1; j < f.size(); ++j) {
          ++k.pairs;
          const NoiseModel model = history_without({i, j});
          if (model.enough) {
            ++k.mde_n;
            k.sum_mde += model.mde_rel;
            k.min_mde = std::min(k.min_mde, model.mde_rel);
            k.max_mde = std::max(k.max_mde, model.mde_rel);
          }
          const ResultFact before = fact(key, f[i], 1.0), now = fact(key, f[j], 1.0 + effect);
          const Change ch = classify(&before, now, policy, &model);
          if (ch == Change::insufficient_data) {
            ++k.insufficient;
            continue;
          }
          ++k.judged;
          ++pairs;
          const std::string trial = std::to_string(f[i].start) + "." + std::to_string(f[i].pass) + ":" +
                                    std::to_string(f[j].start) + "." + std::to_string(f[j].pass);
          mine.pairs.insert(trial);
          if (ch == Change::regressed) {
            ++k.suspected, ++suspected;
            by_instance[key.substr(0, key.find('|'))].insert(trial);
          }
        }
      // Confirm: every 2n consecutive processes of one start, alternately the baseline's
      // side and the change's; with --splits, every way of taking two sides of n from the
      // first 2n processes of a start (the baseline's side first), which are more trials
      // of the same processes, not independent ones.
      long windows = 0, confirmed = 0;
      double worst = -1;
      const std::size_t w = 2 * static_cast<std::size_t>(side_rounds);
      std::vector<std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> trials;  // (baseline, change)
      for (std::size_t p = 0; p + w <= f.size(); ++p) {
        if (f[p + w - 1].start != f[p].start) continue;
        if (splits && p > 0 && f[p - 1].start == f[p].start) continue;  // one group of 2n per start
        std::vector<std::size_t> group;
        for (std::size_t q = 0; q < w; ++q) group.push_back(p + q);
        if (!splits) {
          trials.emplace_back();
          for (std::size_t q = 0; q < w; ++q) (q % 2 ? trials.back().second : trials.back().first).push_back(p + q);
          continue;
        }
        std::vector<bool> pick(w, false);
        std::fill(pick.begin(), pick.begin() + static_cast<std::ptrdiff_t>(side_rounds), true);
        do {
          trials.emplace_back();
          for (std::size_t q = 0; q < w; ++q)
            (pick[q] ? trials.back().first : trials.back().second).push_back(group[q]);
        } while (std::prev_permutation(pick.begin(), pick.end()));
      }
      std::map<std::vector<std::size_t>, NoiseModel> models;  // by the processes left out
      for (const auto& [a_side, b_side] : trials) {
        std::vector<std::size_t> used = a_side;
        used.insert(used.end(), b_side.begin(), b_side.end());
        std::sort(used.begin(), used.end());
        auto found = models.find(used);
        if (found == models.end()) found = models.emplace(used, history_without(used)).first;
        const NoiseModel& model = found->second;
        std::vector<const AaSample*> as, bs;
        for (std::size_t x : a_side) as.push_back(&f[x]);
        for (std::size_t x : b_side) bs.push_back(&f[x]);
        const Side a = side(as, 1.0), b = side(bs, 1.0 + effect);
        std::vector<double> am, bm;
        for (const auto* x : as) am.push_back(x->median_us);
        for (const auto* x : bs) bm.push_back(x->median_us * (1.0 + effect));
        const auto band = confirm_band(model, am, bm, policy.noise);
        if (!band) continue;
        ++windows;
        const double rel = b.median_us / a.median_us - 1;
        if (rel > *band) {
          ++confirmed;
          worst = std::max(worst, rel);
        }
      }
      k.windows += windows;
      k.confirmed += confirmed;
      if (confirmed) {
        ++k.cases_confirmed;
        if (effect == 0) {
          alarms[key] = {static_cast<int>(confirmed), worst};
          k.max_false = std::max(k.max_false, worst);
        }
      }
      mine.tally = &k;
      mine.screen = pairs ? static_cast<double>(suspected) / static_cast<double>(pairs) : 0.0;
      mine.confirm = windows ? static_cast<double>(confirmed) / static_cast<double>(windows) : 0.0;
    }
    // Detection: a case's screen rate times its confirm rate; and, as the verdict
    // re-measures every case of an instance any of whose cases is suspected, the share of
    // trials in which some case of its instance was suspected times its confirm rate.
    for (auto& [key, sc] : screens) {
      Tally& k = *sc.tally;
      const double rate = sc.screen * sc.confirm;
      k.detection += rate;
      if (rate >= 0.95) ++k.cases_detect95;
      const auto& any = by_instance[key.substr(0, key.find('|'))];
      long hit = 0;
      for (const auto& trial : sc.pairs) hit += any.count(trial);
      const double inst = sc.pairs.empty() ? 0.0 : static_cast<double>(hit) / static_cast<double>(sc.pairs.size());
      k.detection_instance += inst * sc.confirm;
      if (inst * sc.confirm >= 0.95) ++k.cases_detect95_instance;
    }
    std::printf("effect %+.1f %%:\n", 100 * effect);
    for (int c = 0; c < 3; ++c) {
      const Tally& k = t[c];
      if (!k.cases) continue;
      std::printf(
          "  %-9s cases %4ld  screen pairs %6ld judged %6ld (insufficient %4ld) suspected %6ld (%.2f %%)  "
          "interleaved %5ld confirmed %5ld (%.2f %%) in %ld cases  detected %.1f %% of trials, %ld of %ld cases "
          ">= 95 %% (re-measured by instance: %.1f %%, %ld cases >= 95 %%)  MDE mean %.2f %% [%.2f, %.2f]\n",
          classes[c], k.cases, k.pairs, k.judged, k.insufficient, k.suspected,
          k.judged ? 100.0 * k.suspected / k.judged : 0.0, k.windows, k.confirmed,
          k.windows ? 100.0 * k.confirmed / k.windows : 0.0, k.cases_confirmed, 100 * k.detection / k.cases,
          k.cases_detect95, k.cases, 100 * k.detection_instance / k.cases, k.cases_detect95_instance,
          k.mde_n ? 100 * k.sum_mde / k.mde_n : 0.0, k.mde_n ? 100 * k.min_mde : 0.0, 100 * k.max_mde);
    }
    if (effect == 0) {
      std::printf("  cases with a confirmed A/A regression: %zu of %zu\n", alarms.size(), cases.size());
      int shown = 0;
      for (const auto& [key, n] : alarms)
        if (shown++ < 15) std::printf("    %s: %d windows, up to +%.2f %%\n", key.c_str(), n.first, 100 * n.second);
    }
  }
  if (!change_path.empty()) return judge_change(change_path, cases, policy, side_rounds);
  return 0;
}
