// The verdict's own rule (porting::classify with each series' noise model, porting/noise.h)
// over A/A figures of one GPU: how often it would call a regression where the code did
// not change, and how often it finds an effect applied to the later figure of a pair.
//
//   kport-bench-aa FIGURES.tsv [--effect E]... [--floor F] [--k K]   (extract.py writes FIGURES.tsv)
//
// Each case's figures come from several harness processes (passes) on several machine
// starts; each start built its own harness, so a start is one "code" of the A/A history,
// as the coordinator groups figures by harness sha256. For every ordered pair of figures
// (before, now) from different processes, the series' noise is learned from the case's
// other figures, and the pair is classified as a verdict classifies it. A suspected
// regression counts, as in a verdict, only when its re-measure (the next process of the
// same start after `now`) is beyond the band too; a pair whose `now` is its start's last
// process has no re-measure and is classified only. With --effect E the `now` figure and
// its re-measure are scaled by 1 + E (median and spread) before classifying: the share
// of pairs found is the detection rate of an effect of E.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
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

struct Tally {
  long pairs = 0, judged = 0, suspected = 0, counted = 0, insufficient = 0, remeasured = 0;
  long paired = 0, confirmed = 0;  // A/B/A/B confirmations possible, and those beyond the band
  double min_mde = 1e9, max_mde = 0, sum_mde = 0;
  long mde_n = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kport-bench-aa FIGURES.tsv [--effect E ...]\n";
    return 2;
  }
  std::vector<double> effects{0.0};
  VerdictPolicy policy;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--effect")
      effects.push_back(std::stod(argv[i + 1]));
    else if (flag == "--floor")  // another noise floor than the verdict's (NoisePolicy::floor)
      policy.noise.floor = std::stod(argv[i + 1]);
    else if (flag == "--k")  // another multiplier than the verdict's (NoisePolicy::k)
      policy.noise.k = std::stod(argv[i + 1]);
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
  // Per effect, per duration class (by the case's median figure).
  const char* classes[] = {">= 50 us", "10-50 us", "< 10 us"};
  for (double effect : effects) {
    Tally t[3];
    std::map<std::string, int> alarms;           // cases with a counted A/A regression (re-measure)
    std::map<std::string, int> confirmed_cases;  // ... confirmed A/B/A/B
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
      const SeriesKey series{"gpu", "driver", key, "", ""};
      for (std::size_t i = 0; i < f.size(); ++i)
        for (std::size_t j = i + 1; j < f.size(); ++j) {
          ++k.pairs;
          // The re-measure: the next process of now's start.
          const std::size_t r = j + 1 < f.size() && f[j + 1].start == f[j].start ? j + 1 : f.size();
          std::vector<AaFigure> history;
          for (std::size_t h = 0; h < f.size(); ++h)
            if (h != i && h != j && h != r)
              history.push_back(AaFigure{"start" + std::to_string(f[h].start), f[h].median_us});
          const NoiseModel model = learn_noise(series, history, policy.noise);
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
          if (ch != Change::regressed) continue;
          ++k.suspected;
          if (r == f.size()) continue;
          ++k.remeasured;
          const ResultFact again = fact(key, f[r], 1.0 + effect);
          if (classify(&before, again, policy, &model) == Change::regressed) {
            ++k.counted;
            ++alarms[key];
          }
          // Confirmation as A/B/A/B on now's machine: two more processes of its start, the
          // first standing for the baseline's harness, the second for the change's.
          std::size_t a = f.size(), b = f.size();
          for (std::size_t h = 0; h < f.size(); ++h) {
            if (h == i || h == j || f[h].start != f[j].start) continue;
            if (a == f.size())
              a = h;
            else if (b == f.size())
              b = h;
          }
          if (b == f.size()) continue;
          ++k.paired;
          const ResultFact base = fact(key, f[a], 1.0), change = fact(key, f[b], 1.0 + effect);
          if (classify(&base, change, policy, &model) == Change::regressed) {
            ++k.confirmed;
            ++confirmed_cases[key];
          }
        }
    }
    std::printf("effect %+.1f %% (noise floor %.2f %%, k %.1f):\n", 100 * effect, 100 * policy.noise.floor,
                policy.noise.k);
    for (int c = 0; c < 3; ++c) {
      const Tally& k = t[c];
      std::printf(
          "  %-9s pairs %6ld  judged %6ld  insufficient %4ld  suspected %6ld (%.2f %%)  with a re-measure %6ld  "
          "counted "
          "%6ld (%.2f %% of those)  A/B/A/B %6ld confirmed %6ld (%.2f %%)  MDE mean %.2f %% [%.2f, %.2f]\n",
          classes[c], k.pairs, k.judged, k.insufficient, k.suspected, k.judged ? 100.0 * k.suspected / k.judged : 0.0,
          k.remeasured, k.counted, k.remeasured ? 100.0 * k.counted / k.remeasured : 0.0, k.paired, k.confirmed,
          k.paired ? 100.0 * k.confirmed / k.paired : 0.0, k.mde_n ? 100 * k.sum_mde / k.mde_n : 0.0,
          k.mde_n ? 100 * k.min_mde : 0.0, 100 * k.max_mde);
    }
    if (effect == 0) {
      std::printf("  cases with a counted A/A regression: re-measured %zu, A/B/A/B-confirmed %zu, of %zu\n",
                  alarms.size(), confirmed_cases.size(), cases.size());
      int shown = 0;
      for (const auto& [key, n] : alarms)
        if (shown++ < 15) std::printf("    %s: %d pairs\n", key.c_str(), n);
    }
  }
  return 0;
}
