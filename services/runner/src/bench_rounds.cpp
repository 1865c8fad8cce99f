// How bench rounds of one case become one figure: the rule is documented in bench_rounds.h.
#include "bench_rounds.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "kport/common/json_fields.h"

namespace kport::runner {
namespace json = boost::json;
using json_fields::number_at;

// Why this rule: a round is one process, and what differs between processes (memory
// placement, clocks, a neighbour on the machine) is exactly what one round's own samples
// cannot show. Two rounds from the same distribution have medians far closer than one
// sample's spread, so a gap beyond that spread (or beyond 1 %, below which kernels are not
// told apart anyway) means the processes measured different things. A strict majority is
// asked for so that one odd process is outvoted by a re-measure, while a kernel that is
// fast in some processes and slow in others (bimodal) never looks precise. The median of
// the rounds' noises keeps one very noisy round from declaring everything in agreement.

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Round {
  std::size_t index = 0;  // in the input
  double median = 0, stddev = 0, samples = 0;
  std::optional<double> baseline;
};

std::string ms_list(const std::vector<Round>& rs) {
  std::string out;
  for (const auto& r : rs) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", r.median);
    out += (out.empty() ? "" : ", ") + std::string(buf);
  }
  return out + " ms";
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %%", 100 * share);
  return buf;
}

}  // namespace

json::object combine_bench_rounds(const std::vector<json::object>& rounds, double floor) {
  if (rounds.empty()) return {};
  if (rounds.size() == 1) return rounds.front();
  std::vector<Round> all;
  json::array detail;
  double dropped = 0;
  std::optional<double> lowest_mhz, highest_mhz;
  const json::object* first = nullptr;  // the first round with a timing: the figure's other fields
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const auto& r = rounds[i];
    auto m = number_at(r, {"timing", "median_ms"});
    if (!m) continue;
    if (!first) first = &r;
    Round x{i, *m, number_at(r, {"timing", "stddev_ms"}).value_or(0), number_at(r, {"timing", "samples"}).value_or(0),
            number_at(r, {"baseline", "timing", "median_ms"})};
    all.push_back(x);
    dropped += number_at(r, {"timing", "discarded_throttled"}).value_or(0);
    if (auto lo = number_at(r, {"timing", "sm_mhz_after_samples", "min"}))
      lowest_mhz = std::min(lowest_mhz.value_or(*lo), *lo);
    if (auto hi = number_at(r, {"timing", "sm_mhz_after_samples", "max"}))
      highest_mhz = std::max(highest_mhz.value_or(*hi), *hi);
    json::object d{{"median_ms", x.median}, {"stddev_ms", x.stddev}, {"samples", x.samples}};
    if (auto mhz = number_at(r, {"timing", "sm_mhz_after_samples", "median"})) d["sm_mhz"] = *mhz;
    if (x.baseline) d["baseline_median_ms"] = *x.baseline;
    detail.push_back(std::move(d));
  }
  if (!first || !first->contains("timing") || !first->at("timing").is_object()) return rounds.front();
  json::object out = *first;

  // The rounds' own noise, and the largest set of rounds whose medians agree within it.
  std::vector<double> relative;
  for (const auto& r : all) relative.push_back(r.median > 0 ? r.stddev / r.median : 0);
  const double noise = median_of(relative);
  const double allowed = std::max(floor, noise);
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return all[a].median < all[b].median; });
  const auto gap = [&](std::size_t lo, std::size_t hi) {  // positions in `order`
    const double a = all[order[lo]].median, b = all[order[hi]].median;
    return a > 0 ? (b - a) / a : (b > a ? INFINITY : 0.0);
  };
  std::size_t best_lo = 0, best_hi = 0;
  for (std::size_t lo = 0, hi = 0; lo < order.size(); ++lo) {
    hi = std::max(hi, lo);
    // A hair of slack so a gap of exactly `allowed` agrees despite rounding.
    while (hi + 1 < order.size() && gap(lo, hi + 1) <= allowed * (1 + 1e-9)) ++hi;
    const std::size_t n = hi - lo + 1, best_n = best_hi - best_lo + 1;
    if (n > best_n || (n == best_n && gap(lo, hi) < gap(best_lo, best_hi))) best_lo = lo, best_hi = hi;
  }
  const std::size_t agreeing = best_hi - best_lo + 1;
  const bool stable = 2 * agreeing > all.size();
  std::vector<Round> kept;
  if (stable) {
    for (std::size_t p = best_lo; p <= best_hi; ++p) kept.push_back(all[order[p]]);
    std::sort(kept.begin(), kept.end(), [](const Round& a, const Round& b) { return a.index < b.index; });
    for (std::size_t k = 0; k < all.size(); ++k) {
      bool in = std::any_of(kept.begin(), kept.end(), [&](const Round& r) { return r.index == all[k].index; });
      if (!in) detail[k].as_object()["outlier"] = true;
    }
  } else {
    kept = all;
  }

  std::vector<double> ours, base;
  double samples = 0, within = 0, mean = 0;
  for (const auto& r : kept) {
    ours.push_back(r.median);
    if (r.baseline) base.push_back(*r.baseline);
    samples += r.samples;
    within += r.stddev * r.stddev;
    mean += r.median;
  }
  within /= static_cast<double>(kept.size());
  mean /= static_cast<double>(kept.size());
  double between = 0;
  for (double m : ours) between += (m - mean) * (m - mean);
  if (ours.size() > 1) between /= static_cast<double>(ours.size() - 1);

  const double first_median = number_at(*first, {"timing", "median_ms"}).value_or(ours.front());
  const double combined = median_of(ours);
  auto& t = out["timing"].as_object();
  t["median_ms"] = combined;
  t["samples"] = samples;
  t["stddev_ms"] = std::sqrt(within + between);
  t["discarded_throttled"] = dropped;
  if (lowest_mhz && highest_mhz && t.contains("sm_mhz_after_samples") && t["sm_mhz_after_samples"].is_object()) {
    auto& mhz = t["sm_mhz_after_samples"].as_object();  // median stays the first round's
    mhz["min"] = *lowest_mhz;
    mhz["max"] = *highest_mhz;
  }
  t["rounds"] = std::move(detail);
  const double spread = gap(0, order.size() - 1);
  t["round_spread"] = spread;
  t["stability"] = json::object{
      {"rule", "a strict majority of rounds whose medians agree within max(floor, median relative stddev)"},
      {"floor", floor},
      {"noise", noise},
      {"allowed", allowed},
      {"rounds", all.size()},
      {"agreeing", agreeing},
      {"stable", stable}};
  if (!stable) {
    out["unstable"] = true;
    out["unstable_reason"] = "its " + std::to_string(all.size()) + " bench rounds disagree: medians " + ms_list(all) +
                             " are " + percent(spread) + " apart, and no majority of them agrees within " +
                             percent(allowed) + " (the larger of " + percent(floor) +
                             " and the rounds' own relative spread)";
  } else {
    out.erase("unstable");
    out.erase("unstable_reason");
  }
  // Rates are inversely proportional to the time.
  for (const char* k : {"tflops", "gbps"})
    if (auto v = number_at(out, {k}); v && combined > 0) out[k] = *v * first_median / combined;
  // The baseline is timed in a process's first round only (later rounds run without it): its
  // figure is the median of the rounds that kept one, the outvoted rounds' when none did.
  if (base.empty())
    for (const auto& r : all)
      if (r.baseline) base.push_back(*r.baseline);
  if (!base.empty() && out.contains("baseline") && out["baseline"].is_object()) {
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

}  // namespace kport::runner
