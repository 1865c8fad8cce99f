// The A/A spread is pooled over codes rather than taken across all figures of a series:
// figures of different commits differ by what the commits changed, which is exactly what
// the band must not absorb. The median of absolute residuals keeps one throttled run
// from widening the band of a series for good, and the 1 + 1/degrees factor pays for an
// estimate made from few figures (three pairs can easily read half the true spread).
#include "kport/porting/noise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace kport::porting {

namespace {

constexpr double k_mad_to_sigma = 1.4826;       // normal consistency of the MAD
constexpr double k_median_efficiency = 1.2533;  // sqrt(pi / 2): the median's standard error over the mean's

double median_of(std::vector<double> v) {
  const std::size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  const double hi = v[n / 2];
  if (n % 2) return hi;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2)) + hi) / 2;
}

}  // namespace

NoiseModel learn_noise(const SeriesKey& series, const std::vector<AaFigure>& history, const NoisePolicy& policy) {
  NoiseModel m;
  m.series = series;
  std::map<std::string, std::vector<double>> by_code;
  for (const auto& f : history) {
    if (!(f.median_us > 0) || !std::isfinite(f.median_us)) continue;
    by_code[f.code].push_back(f.median_us);
    ++m.figures;
  }
  std::vector<double> residuals;
  for (const auto& [code, figures] : by_code) {
    const std::size_t n = figures.size();
    if (n < 2) continue;
    ++m.codes;
    m.degrees += static_cast<int>(n - 1);
    double mean = 0;
    for (double x : figures) mean += x;
    mean /= static_cast<double>(n);
    const double scale = std::sqrt(static_cast<double>(n) / static_cast<double>(n - 1));
    for (double x : figures) residuals.push_back(std::abs(x - mean) / mean * scale);
  }
  m.enough = m.degrees >= std::max(1, policy.min_degrees);
  m.needed = m.enough ? 0 : std::max(1, policy.min_degrees) - m.degrees;
  if (!m.enough) return m;
  m.sigma_rel = k_mad_to_sigma * median_of(residuals);
  const double few = 1.0 + 1.0 / m.degrees;
  m.k_eff = policy.confirm_k * few;
  const double screen = std::max(policy.floor, policy.screen_k * few * std::sqrt(2.0) * m.sigma_rel);
  const double confirm = std::max(policy.confirm_floor, m.k_eff * m.sigma_rel);
  m.mde_rel = std::max(screen, confirm);
  return m;
}

std::optional<double> median_standard_error(std::optional<double> median_us, std::optional<double> stddev_us,
                                            std::optional<std::int64_t> samples) {
  if (!median_us || !stddev_us || !samples || *median_us <= 0 || *samples <= 0 || *stddev_us < 0) return std::nullopt;
  return k_median_efficiency * *stddev_us / std::sqrt(static_cast<double>(*samples)) / *median_us;
}

std::optional<double> change_band(const NoiseModel& model, std::optional<double> se_before,
                                  std::optional<double> se_now, const NoisePolicy& policy) {
  if (!model.enough) return std::nullopt;
  // A figure noisier than its series usually is widens the band by its own error; a
  // quieter one cannot narrow it below what the series has shown from run to run.
  const double b = std::max(model.sigma_rel, se_before.value_or(0));
  const double n = std::max(model.sigma_rel, se_now.value_or(0));
  return std::max(policy.floor, policy.screen_k * (1.0 + 1.0 / model.degrees) * std::sqrt(b * b + n * n));
}

std::optional<double> confirm_band(const NoiseModel& model, const std::vector<double>& base_rounds,
                                   const std::vector<double>& change_rounds, const NoisePolicy& policy, int rounds) {
  if (!model.enough) return std::nullopt;
  // A side of n rounds varies less than one figure. The runner combines two rounds by
  // their mean and more by their median, whose variance for normal rounds is about
  // 1.19/n at n = 4 and pi/(2n) for many: 1.25/n errs on the wide side.
  const bool known = !base_rounds.empty() && !change_rounds.empty();
  const int n = std::max(1, known ? static_cast<int>(std::min(base_rounds.size(), change_rounds.size())) : rounds);
  const double f = n == 1 ? 1.0 : n == 2 ? 0.5 : 1.25 / n;
  double band = std::max(policy.confirm_floor, model.k_eff * model.sigma_rel * std::sqrt(2 * f));
  // Today's noise of this machine, from the pair's own rounds: a GPU noisier now than the
  // series' history shows widens the band by it.
  double ss = 0, mean_all = 0;
  int df = 0;
  for (const auto* side : {&base_rounds, &change_rounds}) {
    if (side->size() < 2) continue;
    double mean = 0;
    for (double x : *side) mean += x;
    mean /= static_cast<double>(side->size());
    for (double x : *side) ss += (x - mean) * (x - mean);
    df += static_cast<int>(side->size()) - 1;
    mean_all = mean;
  }
  if (df > 0 && mean_all > 0) {
    const double s_w = std::sqrt(ss / df) / mean_all;
    band = std::max(band, policy.confirm_k * (1.0 + 1.0 / df) * s_w * std::sqrt(2 * f));
  }
  return band;
}

std::string describe(const NoiseModel& m, const NoisePolicy& policy) {
  char buf[160];
  if (!m.enough)
    std::snprintf(buf, sizeof buf, "insufficient data: %d of %d A/A degrees of freedom", m.degrees,
                  std::max(1, policy.min_degrees));
  else
    std::snprintf(buf, sizeof buf, "sigma %.2f %%, MDE %.2f %% from %d A/A degrees of freedom", m.sigma_rel * 100,
                  m.mde_rel * 100, m.degrees);
  return buf;
}

}  // namespace kport::porting
