// The noise of a series, learned from its own A/A history, and the bands a change must
// leave: to be suspected, and to be confirmed.
//
// A series is (GPU model, driver, instance, dtype, shape): figures of it vary from one
// process to the next even when the code does not, and more from one machine (or one boot
// of it) to the next. Figures of the same code (the same harness binary: a result and its
// re-measure, repeated pipelines of one build) are A/A measurements; their spread around
// each other is the series' noise, sigma_aa, relative to the median.
//
// A slowdown is judged in two steps, because a figure and its baseline's were usually
// taken on different machines, days apart, while a difference measured on one GPU with
// the two harnesses interleaved (A/B/A/B) is the code's alone:
//
//   screen:  a first figure against its baseline's is suspected (and re-measured) when
//            it leaves  max(floor, screen_k * k_eff' * sqrt(s_now^2 + s_before^2));
//   confirm: the interleaved pair of the re-measure counts when the change's side is
//            slower than the baseline's side by more than
//            max(confirm_floor, k_eff' * confirm_k * sigma_aa * sqrt(2 f(n)),
//                k_w * s_w * sqrt(2 f(n))),
//
//   s_x  = max(sigma_aa, standard error of figure x's own median),
//   k_eff' = 1 + 1 / degrees                (fewer figures, wider band),
//   n    = the rounds each side is made of, each a process of its own; f(n) the variance
//          of their combined figure in units of one round's: 1 for one round, 1/2 for two
//          (their mean), 1.25/n for three or more (their median),
//   s_w  = the pooled relative spread of the pair's own round medians around their side's
//          mean (today's noise of this machine), k_w = confirm_k * (1 + 1 / its degrees).
//
// The confirm band takes the series' whole A/A spread, machine to machine included, for
// a pair that shares its machine: a safe upper bound of the noise it has, so a series
// whose figures wander between boots needs a larger effect to count. The series' minimum
// detectable effect (MDE) is the larger of the two bands for ordinary figures (two
// figures for the screen; two rounds a side, quiet, for the pair). With fewer than
// min_degrees degrees of freedom (sum over codes of figures - 1) the series has
// insufficient data: no band, no guess.
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
  int min_degrees = 3;          // A/A degrees of freedom a series needs before it judges anything
  double screen_k = 2.0;        // standard deviations a first figure must leave to be suspected
  double floor = 0.005;         // a relative change smaller than this is no change at all (0.5 %)
  double confirm_k = 3.0;       // standard deviations an interleaved pair must leave to count
  double confirm_floor = 0.01;  // never count a confirmed slowdown smaller than this (1 %)
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
  double k_eff = 0;      // the confirm multiplier used, confirm_k * (1 + 1 / degrees)
  double mde_rel = 0;    // minimum detectable effect, relative (enough only): the larger band
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

// The relative band a change between two figures of `model`'s series must leave to be
// suspected (the screen); nullopt when the model has insufficient data. `se_*` are the
// figures' own standard errors.
std::optional<double> change_band(const NoiseModel& model, std::optional<double> se_before,
                                  std::optional<double> se_now, const NoisePolicy& policy = {});

// The relative band the change's side of an interleaved pair (A/B/A/B on one GPU) must
// leave, slower than the baseline's side, for a suspected slowdown to count; nullopt when
// the model has insufficient data. `base_rounds`, `change_rounds`: each side's round
// medians (microseconds); when a side's are not known, `rounds` says how many there were
// (1 when not known either) and only the series' noise is used.
std::optional<double> confirm_band(const NoiseModel& model, const std::vector<double>& base_rounds,
                                   const std::vector<double>& change_rounds, const NoisePolicy& policy = {},
                                   int rounds = 1);

// One line for pages and reports: "sigma 0.80 %, MDE 3.40 % from 12 A/A degrees" or
// "insufficient data: 1 of 3 A/A degrees of freedom".
std::string describe(const NoiseModel& model, const NoisePolicy& policy = {});

}  // namespace kport::porting
