#include "kport/porting/gpu_agreement.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace kport::porting {
namespace {

// The q-quantile of `v` (nearest rank; v not empty).
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto at = static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1)));
  return v[std::min(at, v.size() - 1)];
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * x);
  return buf;
}

}  // namespace

std::vector<GpuPairAgreement> gpu_agreement(
    std::span<const SameCase> cases, const std::function<std::optional<Bound>(std::string_view family)>& bound_of) {
  struct Acc {
    std::vector<double> ratios, clocks_a, clocks_b;
    std::map<Bound, std::vector<double>> diffs;
  };
  std::map<std::pair<std::string, std::string>, Acc> pairs;
  for (const SameCase& c : cases) {
    if (c.median_a <= 0 || c.median_b <= 0) continue;
    Acc& a = pairs[{c.gpu_a, c.gpu_b}];
    const double ratio = c.median_b / c.median_a;
    a.ratios.push_back(ratio);
    a.diffs[bound_of(c.family).value_or(Bound::compute)].push_back(std::abs(ratio - 1));
    if (c.clock_a > 0) a.clocks_a.push_back(c.clock_a);
    if (c.clock_b > 0) a.clocks_b.push_back(c.clock_b);
  }
  std::vector<GpuPairAgreement> out;
  for (auto& [gpus, a] : pairs) {
    GpuPairAgreement p;
    p.gpu_a = gpus.first;
    p.gpu_b = gpus.second;
    p.cases = static_cast<int>(a.ratios.size());
    p.median_ratio = median_of(a.ratios);
    p.clock_a = median_of(a.clocks_a);
    p.clock_b = median_of(a.clocks_b);
    p.agree = true;
    for (Bound b : {Bound::compute, Bound::memory}) {
      auto it = a.diffs.find(b);
      if (it == a.diffs.end()) continue;
      GpuPairAgreement::ByBound x;
      x.bound = b;
      x.cases = static_cast<int>(it->second.size());
      x.tolerance = b == Bound::compute ? k_gpus_agree_compute : k_gpus_agree_memory;
      x.median_diff = median_of(it->second);
      x.p90_diff = quantile(it->second, 0.9);
      x.within = static_cast<int>(
          std::count_if(it->second.begin(), it->second.end(), [&](double d) { return d <= x.tolerance; }));
      x.agree = x.median_diff <= x.tolerance;
      p.agree = p.agree && x.agree;
      p.bounds.push_back(x);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::string describe(const GpuPairAgreement& p) {
  std::string out = p.gpu_a + " and " + p.gpu_b + (p.agree ? " agree: " : " differ: ");
  out += std::to_string(p.cases) + (p.cases == 1 ? " case" : " cases") + " timed on both";
  for (const auto& b : p.bounds) {
    out += ", ";
    out += to_string(b.bound);
    out += "-bound " + percent(b.median_diff) + " apart at the median (" + (b.agree ? "within " : "beyond ") +
           percent(b.tolerance) + ")";
  }
  const double r = p.median_ratio - 1;
  out += "; " + p.gpu_b + " takes " + percent(std::abs(r)) + (r >= 0 ? " longer than " : " less than ") + p.gpu_a +
         " at the median";
  if (p.clock_a > 0 && p.clock_b > 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "; SM clocks %.0f and %.0f MHz", p.clock_a, p.clock_b);
    out += buf;
  }
  return out;
}

}  // namespace kport::porting
