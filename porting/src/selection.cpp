#include "kport/porting/selection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace kport::porting {
namespace {

// "9.0" -> 90, "10.3" -> 103; -1 when unparsable.
int arch_number(const std::string& arch) {
  int major = 0, minor = 0;
  if (std::sscanf(arch.c_str(), "%d.%d", &major, &minor) < 1) return -1;
  return major * 10 + minor;
}

struct ShapeMatch {
  std::optional<Shape> shape;
  double distance = std::numeric_limits<double>::infinity();
};

ShapeMatch nearest_shape(const Shape& want, std::span<const Measurement> rows) {
  ShapeMatch best;
  for (const auto& m : rows) {
    double d = want.distance(m.shape);
    // On equal distance prefer the larger problem: it is the one the GPU is full on.
    bool better = d < best.distance ||
                  (d == best.distance && best.shape && m.shape.canonical() > best.shape->canonical());
    if (better) { best.distance = d; best.shape = m.shape; }
  }
  return best;
}

// The latest measurement per instance at `shape`, fastest first.
std::vector<Measurement> latest_per_instance(std::span<const Measurement> rows, const Shape& shape) {
  std::map<std::string, const Measurement*> latest;
  for (const auto& m : rows) {
    if (!(m.shape == shape)) continue;
    auto& slot = latest[m.instance];
    if (!slot || m.measured_at_ms > slot->measured_at_ms ||
        (m.measured_at_ms == slot->measured_at_ms && m.result_id > slot->result_id))
      slot = &m;
  }
  std::vector<Measurement> out;
  for (auto& [_, m] : latest) out.push_back(*m);
  std::sort(out.begin(), out.end(), [](const Measurement& a, const Measurement& b) {
    return a.median_us != b.median_us ? a.median_us < b.median_us : a.instance < b.instance;
  });
  return out;
}

std::vector<Ranked> rank(const std::vector<Measurement>& sorted) {
  std::vector<Ranked> out;
  for (const auto& m : sorted) {
    Ranked r{m.instance, m.variant, m, false, 1.0};
    if (!out.empty()) {
      const auto& best = *out.front().evidence;
      r.tie_with_best = is_tie(best, m);
      r.slowdown = best.median_us > 0 ? m.median_us / best.median_us : 1.0;
    }
    out.push_back(std::move(r));
  }
  if (out.size() > 1 && out[1].tie_with_best) out.front().tie_with_best = true;
  return out;
}

std::string fmt_distance_note(const Shape& want, const ShapeMatch& match) {
  if (match.distance == 0) return {};
  return "nearest measured shape " + match.shape->canonical() + " stands in for " + want.canonical();
}

Selection provisional(const SelectionQuery& q, std::span<const Measurement> elsewhere,
                      std::span<const BuildCandidate> builds, std::string why) {
  Selection sel;
  sel.kind = Selection::Kind::provisional;
  int want_arch = arch_number(q.arch);
  // Pick the measured arch nearest the query's; among equals, the newer arch, whose
  // features are closer to what a new target adds.
  std::map<std::string, std::vector<Measurement>> by_gpu;
  for (const auto& m : elsewhere) by_gpu[m.gpu_model].push_back(m);
  const std::vector<Measurement>* chosen = nullptr;
  int chosen_gap = std::numeric_limits<int>::max(), chosen_arch = -1;
  ShapeMatch chosen_match;
  for (auto& [gpu, rows] : by_gpu) {
    ShapeMatch match = nearest_shape(q.shape, rows);
    if (!match.shape) continue;
    int a = arch_number(rows.front().arch);
    int gap = (want_arch < 0 || a < 0) ? 1000 : std::abs(a - want_arch);
    if (gap < chosen_gap || (gap == chosen_gap && a > chosen_arch)) {
      chosen = &rows; chosen_gap = gap; chosen_arch = a; chosen_match = match;
    }
  }
  std::vector<Measurement> measured;
  if (chosen) {
    auto all = latest_per_instance(*chosen, *chosen_match.shape);
    // Only instances that build for the query's target can be recommended for it.
    for (auto& m : all) {
      bool builds_here = builds.empty() || std::any_of(builds.begin(), builds.end(),
          [&](const BuildCandidate& b) { return b.instance == m.instance; });
      if (builds_here) measured.push_back(std::move(m));
    }
  }
  sel.ranking = rank(measured);
  for (const auto& b : builds) {
    bool ranked = std::any_of(sel.ranking.begin(), sel.ranking.end(),
                              [&](const Ranked& r) { return r.instance == b.instance; });
    if (!ranked) sel.ranking.push_back(Ranked{b.instance, b.variant, std::nullopt, false, 1.0});
  }
  if (sel.ranking.empty()) {
    sel.kind = Selection::Kind::none;
    sel.reason = why + "; no instance is known to build for " +
                 (q.target.empty() ? std::string("its target") : q.target) +
                 " and nothing comparable was measured elsewhere";
    return sel;
  }
  if (!measured.empty()) {
    sel.evidence_gpu_model = chosen->front().gpu_model;
    sel.evidence_arch = chosen->front().arch;
    sel.matched_shape = chosen_match.shape;
    sel.exact_shape = chosen_match.distance == 0;
    sel.reason = why + "; ranked by measurements on " + sel.evidence_gpu_model + " (arch " +
                 sel.evidence_arch + ")";
    if (!builds.empty()) sel.reason += " among instances that build for " + q.target;
    auto note = fmt_distance_note(q.shape, chosen_match);
    if (!note.empty()) sel.reason += "; " + note;
  } else {
    sel.reason = why + "; instances that build for " + q.target +
                 " are listed unranked: none was measured on a comparable shape";
  }
  return sel;
}

}  // namespace

const char* kind_name(Selection::Kind k) {
  switch (k) {
    case Selection::Kind::measured: return "measured";
    case Selection::Kind::provisional: return "provisional";
    case Selection::Kind::none: return "none";
  }
  return "none";
}

bool is_tie(const Measurement& best, const Measurement& other) {
  double diff = std::abs(other.median_us - best.median_us);
  double floor = 0.01 * std::min(best.median_us, other.median_us);
  double spread = 2.0 * std::sqrt(best.stddev_us * best.stddev_us + other.stddev_us * other.stddev_us);
  return diff <= std::max(floor, spread);
}

Selection select_best(const SelectionQuery& q, std::span<const Measurement> on_gpu,
                      std::span<const Measurement> elsewhere,
                      std::span<const BuildCandidate> builds) {
  if (on_gpu.empty())
    return provisional(q, elsewhere, builds, "no passing measurement on " + q.gpu_model + " yet");
  ShapeMatch match = nearest_shape(q.shape, on_gpu);
  if (!match.shape)
    return provisional(q, elsewhere, builds,
                       "nothing comparable to " + q.shape.canonical() + " was measured on " + q.gpu_model);
  Selection sel;
  sel.kind = Selection::Kind::measured;
  sel.matched_shape = match.shape;
  sel.exact_shape = match.distance == 0;
  sel.evidence_gpu_model = q.gpu_model;
  sel.evidence_arch = on_gpu.front().arch;
  sel.reason = fmt_distance_note(q.shape, match);
  sel.ranking = rank(latest_per_instance(on_gpu, *match.shape));
  return sel;
}

}  // namespace kport::porting
