// The noise of a series, learned from its own A/A history, and the band a change must
// leave to count as a regression on it.
//
// A series is (GPU model, driver, instance, dtype, shape): figures of it vary from one
// process to the next even when the code does not. Figures of the same code (the same
// harness binary: a result and its re-measure, repeated pipelines of one build) are A/A
// measurements; their spread around each other is the series' noise, sigma_aa, relative
// to the median. A change between two commits counts only when it leaves
//
//   band = max(floor, k_eff * sqrt(s_now^2 + s_before^2)),
//   s_x  = max(sigma_aa, standard error of figure x's own median),
//   k_eff = k * (1 + 1 / degrees)        (fewer figures, wider band),
//
// and the series' minimum detectable effect (MDE) is that band for two ordinary figures,
// max(floor, k_eff * sqrt(2) * sigma_aa). With fewer than min_degrees degrees of freedom
// (sum over codes of figures - 1) the series has insufficient data: no band, no guess.
//
// Pure functions over plain values; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace kport::porting {

struct NoisePolicy {
  int min_degrees = 3;   // A/A degrees of freedom a series needs before it judges anything
  double k = 3.0;        // standard deviations a change must exceed
  double floor = 0.005;  // never count a relative change smaller than this (0.5 %)
};

// The key a series is known by.
struct SeriesKey {
  std::string gpu_model, driver, instance, dtype, shape;
  friend bool operator<(const SeriesKey& a, const SeriesKey& b) {
    return std::tie(a.gpu_model, a.driver, a.instance, a.dtype, a.shape) <
           std::tie(b.gpu_model, b.driver, b.instance, b.dtype, b.shape);
  }
  friend bool operator==(const SeriesKey& a, const SeriesKey& b) { return !(a < b) && !(b < a); }
};

// One passing, stable, timed figure of a series and the code that produced it (the
// harness sha256, or the commit and target when the result names no harness).
struct AaFigure {
  std::string code;
  double median_us = 0;
};

struct NoiseModel {
  SeriesKey series;
  int figures = 0;       // figures in the history
  int codes = 0;         // distinct codes with two figures or more (the A/A groups)
  int degrees = 0;       // sum over those groups of (figures - 1)
  bool enough = false;   // degrees >= policy.min_degrees
  double sigma_rel = 0;  // robust A/A standard deviation of one figure, relative (enough only)
  double k_eff = 0;      // the multiplier used, k * (1 + 1 / degrees)
  double mde_rel = 0;    // minimum detectable effect, relative (enough only)
  int needed = 0;        // more degrees of freedom to go, 0 once enough
};

// Learns the noise of one series from its figures. Residuals from each code's mean,
// scaled by sqrt(n / (n - 1)) so a pair weighs like any group, give sigma by
// 1.4826 * their median absolute value: one wild figure does not move it.
NoiseModel learn_noise(const SeriesKey& series, const std::vector<AaFigure>& history, const NoisePolicy& policy = {});

// A figure's relative standard error of the median from its sample spread (1.2533 sd /
// sqrt(samples), over the median); nullopt without stddev or samples.
std::optional<double> median_standard_error(std::optional<double> median_us, std::optional<double> stddev_us,
                                            std::optional<std::int64_t> samples);

// The relative band a change between two figures of `model`'s series must leave; nullopt
// when the model has insufficient data. `se_*` are the figures' own standard errors.
std::optional<double> change_band(const NoiseModel& model, std::optional<double> se_before,
                                  std::optional<double> se_now, const NoisePolicy& policy = {});

// One line for pages and reports: "sigma 0.8 %, MDE 3.4 % from 12 A/A degrees" or
// "insufficient data: 1 of 3 A/A degrees of freedom".
std::string describe(const NoiseModel& model, const NoisePolicy& policy = {});

}  // namespace kport::porting
