#include "numerics.h"

#include <cmath>
#include <sstream>

namespace kport::harness {

void compare_host(const float* out, const double* ref, std::size_t n, CompareStats& s, const double* floor) {
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(out[i])) {
      ++s.nonfinite;
      continue;
    }
    const double d = static_cast<double>(out[i]) - ref[i];
    const double magnitude = floor ? std::fmax(std::fabs(ref[i]), floor[i]) : ref[i];
    s.sum_sq_diff += d * d;
    s.sum_sq_ref += magnitude * magnitude;
    s.max_abs_diff = std::fmax(s.max_abs_diff, std::fabs(d));
    s.max_abs_ref = std::fmax(s.max_abs_ref, std::fabs(ref[i]));
    if (floor) s.max_abs_scale = std::fmax(s.max_abs_scale, std::fabs(magnitude));
  }
  s.compared += n;
}

void add_stats(CompareStats& total, const CompareStats& part) {
  total.sum_sq_diff += part.sum_sq_diff;
  total.sum_sq_ref += part.sum_sq_ref;
  total.max_abs_diff = std::fmax(total.max_abs_diff, part.max_abs_diff);
  total.max_abs_ref = std::fmax(total.max_abs_ref, part.max_abs_ref);
  total.max_abs_scale = std::fmax(total.max_abs_scale, part.max_abs_scale);
  total.nonfinite += part.nonfinite;
  total.compared += part.compared;
}

double normwise_error(const CompareStats& s) {
  return s.sum_sq_ref > 0 ? std::sqrt(s.sum_sq_diff / s.sum_sq_ref) : std::sqrt(s.sum_sq_diff);
}

Verdict judge(const CompareStats& s, const Tolerance& tol, double lse_max_abs, unsigned long long lse_nonfinite) {
  std::ostringstream why;
  if (s.nonfinite > 0) {
    why << s.nonfinite << " NaN/Inf outputs (unwritten or overflowed)";
    return {false, why.str()};
  }
  const double nw = normwise_error(s);
  if (!(nw <= tol.normwise)) {
    why << "normwise relative error " << nw << " > " << tol.normwise;
    return {false, why.str()};
  }
  const bool floored = s.max_abs_scale > s.max_abs_ref;
  const double max_allowed = tol.max_abs_rel * (floored ? s.max_abs_scale : s.max_abs_ref);
  if (!(s.max_abs_diff <= max_allowed)) {
    why << "max abs error " << s.max_abs_diff << " > " << tol.max_abs_rel
        << (floored ? " * max|ref| (each at least its cancellation floor) = " : " * max|ref| = ") << max_allowed;
    return {false, why.str()};
  }
  if (lse_nonfinite > 0) {
    why << lse_nonfinite << " NaN/Inf in lse";
    return {false, why.str()};
  }
  if (lse_max_abs >= 0 && !(lse_max_abs <= tol.lse_abs)) {
    why << "lse max abs error " << lse_max_abs << " > " << tol.lse_abs;
    return {false, why.str()};
  }
  return {true, ""};
}

Json stats_json(const CompareStats& s) {
  return {{"normwise_rel_error", normwise_error(s)},
          {"max_abs_error", s.max_abs_diff},
          {"max_abs_ref", s.max_abs_ref},
          {"nonfinite", s.nonfinite},
          {"compared_elements", s.compared}};
}

}  // namespace kport::harness
