#include "kport/porting/selection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "kport/porting/planner.h"
#include "selection_detail.h"

namespace kport::porting {
namespace {

// "9.0" -> 90, "10.3" -> 103; -1 when unparsable.
int arch_number(const std::string& arch) {
  int major = 0, minor = 0;
  if (std::sscanf(arch.c_str(), "%d.%d", &major, &minor) < 1) return -1;
  return major * 10 + minor;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * x);
  return buf;
}

std::string short_sha(const std::string& sha) { return sha.size() > 12 ? sha.substr(0, 12) : sha; }

struct ShapeMatch {
  std::optional<Shape> shape;
  double distance = std::numeric_limits<double>::infinity();
};

ShapeMatch nearest_shape(const Shape& want, const std::vector<Measurement>& rows, const detail::Waves& waves) {
  ShapeMatch best;
  int best_changes = 0;
  std::string best_canonical;
  const auto want_own = own_paths(waves.geometry, want, waves.element_bytes);
  for (const auto& m : rows) {
    double d = want.distance(m.shape, waves.shape_rules());
    if (!std::isfinite(d)) continue;
    const int changes = path_changes(want_own, own_paths(waves.geometry, m.shape, waves.element_bytes));
    // A farther shape on no fewer paths is never preferred; skipping it spares its text.
    if (best.shape && (changes > best_changes || (changes == best_changes && d > best.distance))) continue;
    std::string canonical = m.shape.canonical();
    if (prefer_match(changes, d, canonical, best_changes, best.distance, best_canonical)) {
      best.distance = d;
      best.shape = m.shape;
      best_changes = changes;
      best_canonical = std::move(canonical);
    }
  }
  return best;
}

using detail::Scored;

// The timed figures by shape, for break_tie: each shape once, usable when it is neither the
// matched shape nor on other paths to the asked shape than the matched one is.
class FlatShapes final : public detail::OtherShapes {
 public:
  FlatShapes(const std::vector<Measurement>& timed, const Shape& matched, const Shape& want,
             const detail::Waves& waves) {
    const auto want_own = own_paths(waves.geometry, want, waves.element_bytes);
    const int changes = path_changes(want_own, own_paths(waves.geometry, matched, waves.element_bytes));
    const std::string matched_canonical = matched.canonical();
    std::map<std::string, std::size_t> index;
    for (const auto& m : timed) {
      auto [it, added] = index.try_emplace(m.shape.canonical(), m_shapes.size());
      if (added) {
        const bool usable = it->first != matched_canonical &&
                            path_changes(want_own, own_paths(waves.geometry, m.shape, waves.element_bytes)) == changes;
        m_shapes.push_back(At{usable ? &m.shape : nullptr, it->first, {}});
      }
      m_shapes[it->second].figures.push_back(&m);
    }
  }
  std::size_t size() const override { return m_shapes.size(); }
  Ref shape(std::size_t i) const override { return Ref{m_shapes[i].shape, m_shapes[i].canonical}; }
  const Measurement* figure(std::size_t i, std::string_view instance) const override {
    for (const auto* m : m_shapes[i].figures)
      if (m->instance == instance) return m;
    return nullptr;
  }

 private:
  struct At {
    const Shape* shape;
    std::string canonical;
    std::vector<const Measurement*> figures;
  };
  std::vector<At> m_shapes;
};

bool cost_tie(const Scored& a, const Scored& b) { return costs_tie(a.cost, a.noise, b.cost, b.noise); }

// Sorts by cost, lets a stable figure within noise of an unstable best go first, and
// marks ties and slowdowns against the (possibly new) best.
// `owner`, when given, holds every figure scored: the ranking's evidence shares it.
// `first`: a broken tie's instance (detail::order_ranking).
std::vector<Ranked> rank(std::vector<Scored> scored, std::vector<std::string>& notes, bool estimated = false,
                         const std::shared_ptr<const void>& owner = nullptr, std::string_view first = {}) {
  switch (detail::order_ranking(scored, first)) {
    case UnstableBest::moved:
      notes.push_back(unstable_note(UnstableBest::moved, scored[1].m->instance, scored[0].m->instance));
      break;
    case UnstableBest::kept: notes.push_back(unstable_note(UnstableBest::kept, scored[0].m->instance, {})); break;
    case UnstableBest::none: break;
  }
  std::vector<Ranked> out;
  out.reserve(scored.size());
  for (const auto& s : scored) {
    Ranked r{s.m->instance,
             s.m->variant,
             owner ? std::shared_ptr<const Measurement>(owner, s.m) : std::make_shared<const Measurement>(*s.m),
             false,
             1.0,
             true};
    if (estimated) r.estimate_us = s.cost;
    if (!out.empty()) {
      r.tie_with_best = cost_tie(scored.front(), s);
      r.slowdown = scored.front().cost > 0 ? s.cost / scored.front().cost : 1.0;
    }
    out.push_back(std::move(r));
  }
  if (out.size() > 1 && out[1].tie_with_best) out.front().tie_with_best = true;
  return out;
}

std::string exclusion_reason(const Measurement& m) {
  std::string where =
      " on " + m.gpu_model + " at commit " + short_sha(m.commit) + " (result " + std::to_string(m.result_id) + ")";
  if (m.status == "failed") return "failed numerics" + where;
  if (m.status == "crashed") return "crashed" + where;
  if (m.status == "timeout") return "timed out" + where;
  if (m.status == "unsupported") return "does not support this case" + where;
  return "passed numerics but was not timed" + where;
}

std::vector<Excluded> exclusions(const std::vector<const Measurement*>& current) {
  std::vector<Excluded> out;
  for (const auto* m : current)
    if (!m->ranks()) out.push_back(Excluded{m->instance, m->variant, *m, exclusion_reason(*m)});
  return out;
}

// The current figures at `shape`, in place (the answer copies only those it names).
std::vector<const Measurement*> at_shape(const std::vector<Measurement>& current, const Shape& shape) {
  std::vector<const Measurement*> out;
  for (const auto& m : current)
    if (m.shape == shape) out.push_back(&m);
  return out;
}

// Commits, drivers, ids, samples and dates of the ranked figures, and notes on mixed
// commits and drivers the answer did not use.
void summarize(Selection& sel, std::span<const DriverSeen> drivers) {
  Evidence& e = sel.evidence;
  std::vector<const Measurement*> figures;
  for (const auto& r : sel.ranking)
    if (r.ranked && r.evidence) figures.push_back(r.evidence.get());
  if (figures.empty()) return;
  for (const auto* m : figures) {
    e.result_ids.push_back(m->result_id);
    e.samples += m->samples;
    e.newest_ms = std::max(e.newest_ms, m->measured_at_ms);
    e.oldest_ms = e.oldest_ms == 0 ? m->measured_at_ms : std::min(e.oldest_ms, m->measured_at_ms);
  }
  std::vector<std::uint32_t> commits, used;
  detail::evidence_order(
      figures.size(), [&](std::size_t i) -> const std::string& { return figures[i]->commit; },
      [&](std::size_t i) -> const std::string& { return figures[i]->driver; },
      [&](std::size_t i) { return figures[i]->commit_ms; }, commits, used);
  for (auto c : commits) e.commits.push_back(figures[c]->commit);
  for (auto d : used) e.drivers.push_back(figures[d]->driver);
  for (const auto& d : drivers)
    if (d.gpu_model == sel.evidence_gpu_model &&
        std::find(e.drivers.begin(), e.drivers.end(), d.driver) == e.drivers.end() &&
        std::find(e.other_drivers.begin(), e.other_drivers.end(), d.driver) == e.other_drivers.end())
      e.other_drivers.push_back(d.driver);
  if (e.commits.size() > 1)
    sel.notes.push_back(commits_note(sel.evidence_gpu_model, e.commits.size(), e.commits.front()));
  const std::vector<std::string_view> used_text(e.drivers.begin(), e.drivers.end());
  const std::vector<std::string_view> other_text(e.other_drivers.begin(), e.other_drivers.end());
  if (auto note = drivers_note(sel.evidence_gpu_model, used_text, other_text); !note.empty())
    sel.notes.push_back(std::move(note));
  if (auto note = gpus_note(sel.evidence_gpu_model, figures); !note.empty()) sel.notes.push_back(std::move(note));
}

}  // namespace

namespace detail {

std::optional<TieBreak> break_tie(const Shape& want, std::span<const Tied> tied, const OtherShapes& others,
                                  const Waves& waves, double reach) {
  std::vector<char> tried(others.size(), 0);
  std::vector<double> cost(tied.size()), noise(tied.size());
  for (;;) {
    std::size_t at = others.size();
    double at_d = std::numeric_limits<double>::infinity();
    std::string_view at_canonical;
    for (std::size_t i = 0; i < others.size(); ++i) {
      if (tried[i]) continue;
      const OtherShapes::Ref ref = others.shape(i);
      if (!ref.shape) continue;
      const double d = want.distance(*ref.shape, waves.shape_rules());
      if (d > reach) continue;
      if (prefer_shape(d, ref.canonical, at_d, at_canonical)) at = i, at_d = d, at_canonical = ref.canonical;
    }
    if (at == others.size()) return std::nullopt;
    tried[at] = 1;
    bool all = true;
    for (std::size_t k = 0; k < tied.size() && all; ++k) {
      const Measurement* m = others.figure(at, tied[k].instance);
      all = m != nullptr;
      if (!all) break;
      cost[k] = estimate_at(tied[k].geometry, waves.sm_count, m->shape, m->median_us, want, waves.shape_rules());
      noise[k] = m->stddev_us * cost[k] / m->median_us;
    }
    if (!all) continue;
    std::size_t fastest = 0;
    for (std::size_t k = 1; k < tied.size(); ++k)
      if (cost[k] < cost[fastest] || (cost[k] == cost[fastest] && tied[k].instance < tied[fastest].instance))
        fastest = k;
    for (std::size_t k = 0; k < tied.size(); ++k)
      if (k != fastest && !costs_tie(cost[fastest], noise[fastest], cost[k], noise[k])) return TieBreak{fastest, at};
  }
}

Selection measured_at(const std::string& gpu_model, std::span<const DriverSeen> drivers,
                      const std::vector<Measurement>& current, const Shape& shape, const Shape* want,
                      const Waves& waves, const std::shared_ptr<const void>& owner, const OtherShapes* others) {
  Selection sel;
  sel.matched_shape = shape;
  sel.evidence_gpu_model = gpu_model;
  sel.evidence_arch = current.front().arch;
  auto here = at_shape(current, shape);
  sel.excluded = exclusions(here);
  // From another shape, each figure is moved to the asked one and its noise with it.
  const bool estimated = want && !(*want == shape);
  bool by_waves = false;
  int limited = 0;  // timed figures whose instance runs nothing at `want`
  std::vector<Scored> scored;
  for (const auto* figure : here) {
    const Measurement& m = *figure;
    if (!m.ranks()) continue;
    if (!estimated) {
      scored.push_back(Scored{&m, m.median_us, m.stddev_us});
      continue;
    }
    const Geometry* own = find_geometry(waves.geometry, m.instance);
    if (own)
      if (auto why = limit_reason(*own, *want, waves.element_bytes); !why.empty()) {
        sel.excluded.push_back(Excluded{m.instance, m.variant, m, why});
        ++limited;
        continue;
      }
    const Geometry* g = waves.sm_count > 0 ? own : nullptr;
    by_waves = by_waves || (g && has_waves(*g));
    double cost = estimate_at(g, waves.sm_count, m.shape, m.median_us, *want, waves.shape_rules());
    scored.push_back(Scored{&m, cost, m.stddev_us * cost / m.median_us});
  }
  std::string_view first;
  if (estimated && others) {
    const auto tied = tied_with_fastest(scored, [&](const Scored& s) {
      return waves.sm_count > 0 ? find_geometry(waves.geometry, s.m->instance) : nullptr;
    });
    if (!tied.empty())
      if (auto tb = break_tie(*want, tied, *others, waves, k_tie_reach * want->distance(shape, waves.shape_rules()))) {
        first = tied[tb->tied].instance;
        sel.notes.push_back(tie_note(first, others->shape(tb->shape).canonical));
      }
  }
  sel.ranking = rank(std::move(scored), sel.notes, estimated, owner, first);
  sel.method = !estimated ? "measured_shape" : by_waves ? "wave_model" : "problem_size";
  if (sel.ranking.empty() && limited > 0) {
    sel.kind = Selection::Kind::unranked;
    sel.reason = "no instance timed on " + gpu_model + " at " + shape.canonical() + " runs " + want->canonical() +
                 ": those timed there are outside what they run at all (see excluded); none can be recommended, ask "
                 "for a measurement (POST /api/v1/best/requests)";
  } else if (sel.ranking.empty()) {
    sel.kind = Selection::Kind::unranked;
    sel.reason = "every instance measured on " + gpu_model + " at " + shape.canonical() +
                 " failed or was not timed on its newest commit; none can be recommended";
  } else {
    sel.kind = Selection::Kind::measured;
    sel.ranked_by = estimated ? "estimate_us" : "median_us";
  }
  summarize(sel, drivers);
  return sel;
}

RegretNote regret_note(const std::string& gpu_model, std::optional<NeighbourRegret> regret) {
  RegretNote out{std::move(regret), {}};
  if (const auto& r = out.regret)
    out.note = "how sure: on " + gpu_model + ", answering each of " + std::to_string(r->shapes) +
               " measured shapes from its nearest other measured shape by the same method picked an instance " +
               percent(r->median) + " slower than the fastest there at the median, " + percent(r->p90) + " at p90, " +
               percent(r->max) + " at worst (" + r->worst_shape + " answered from " + r->worst_from +
               "); ask for a measurement (POST /api/v1/best/requests) to be sure";
  return out;
}

void answer_query(Selection& sel, const Shape& want, double distance, const std::function<const RegretNote&()>& regret,
                  const Waves& waves) {
  sel.exact_shape = distance == 0;
  sel.shape_distance = distance;
  if (distance != 0) {
    const auto parts = stand_in_note(sel.matched_shape->canonical(), sel.method, waves.sm_count);
    // How figures are moved is said only where some were ranked.
    std::string note = parts.before + want.canonical() + (sel.kind == Selection::Kind::measured ? parts.after : "");
    sel.reason = sel.reason.empty() ? std::move(note) : sel.reason + "; " + note;
  }
  if (sel.kind == Selection::Kind::measured && !sel.exact_shape) {
    const RegretNote& r = regret();
    sel.nearest_shape_regret = r.regret;
    if (r.regret) sel.notes.push_back(r.note);
  }
}

}  // namespace detail

namespace {

Selection provisional(const SelectionQuery& q, const SelectionInputs& in, const std::string& why) {
  Selection sel;
  sel.candidates_basis = in.candidates_basis;
  if (!in.candidates_missing.empty())
    sel.notes.push_back(join(std::vector<std::string>(in.candidates_missing.begin(), in.candidates_missing.end())) +
                        (in.candidates_missing.size() == 1 ? " applies" : " apply") + " to " + q.target +
                        " but no instance of it is known yet (a build for " + q.target +
                        " publishes them), so it cannot be ranked or recommended by name");
  std::set<std::string> wanted;
  for (const auto& c : in.candidates) wanted.insert(c.instance);
  // Only the candidates' current figures count as evidence, and only those with a ratio
  // to the baseline can be compared across GPUs.
  std::vector<Measurement> rows;
  for (const auto& m : in.elsewhere)
    if (m.gpu_model != q.gpu_model && wanted.count(m.instance)) rows.push_back(m);
  auto current = current_figures(rows);
  std::map<std::string, std::vector<Measurement>> by_gpu;
  for (auto& m : current) by_gpu[m.gpu_model].push_back(m);
  // The measured arch nearest the query's; among equals, the newer arch, whose features
  // are closer to what a new target adds.
  int want_arch = arch_number(q.arch);
  const std::vector<Measurement>* chosen = nullptr;
  int chosen_gap = std::numeric_limits<int>::max(), chosen_arch = -1;
  ShapeMatch chosen_match;
  for (auto& [gpu, figures] : by_gpu) {
    std::vector<Measurement> usable;
    for (const auto& m : figures)
      if (m.ranks() && m.ratio && *m.ratio > 0) usable.push_back(m);
    ShapeMatch match = nearest_shape(q.shape, usable, detail::Waves{0, in.geometry, element_bytes(q.dtype), in.rules});
    if (!match.shape) continue;
    int a = arch_number(figures.front().arch);
    int gap = (want_arch < 0 || a < 0) ? 1000 : std::abs(a - want_arch);
    if (gap < chosen_gap || (gap == chosen_gap && a > chosen_arch)) {
      chosen = &figures;
      chosen_gap = gap;
      chosen_arch = a;
      chosen_match = match;
    }
  }
  std::string what = "instances that " + in.candidates_basis + " and run " + (q.dtype.empty() ? "the dtype" : q.dtype);
  if (chosen) {
    auto here = at_shape(*chosen, *chosen_match.shape);
    sel.excluded = exclusions(here);
    std::vector<Scored> scored;
    for (const auto* m : here)
      if (m->ranks() && m->ratio && *m->ratio > 0) {
        double cost = 1.0 / *m->ratio;
        scored.push_back(Scored{m, cost, cost * m->stddev_us / m->median_us});
      }
    sel.ranking = rank(std::move(scored), sel.notes);
    sel.evidence_gpu_model = chosen->front().gpu_model;
    sel.evidence_arch = chosen->front().arch;
    sel.matched_shape = chosen_match.shape;
    sel.exact_shape = chosen_match.distance == 0;
  }
  // Candidates without comparable evidence are listed after the ranked ones.
  for (const auto& c : in.candidates) {
    bool listed = std::any_of(sel.ranking.begin(), sel.ranking.end(),
                              [&](const Ranked& r) { return r.instance == c.instance; }) ||
                  std::any_of(sel.excluded.begin(), sel.excluded.end(),
                              [&](const Excluded& x) { return x.instance == c.instance; });
    if (!listed) sel.ranking.push_back(Ranked{c.instance, c.variant, nullptr, false, 1.0, false});
  }
  if (chosen && !sel.ranking.empty() && sel.ranking.front().ranked) {
    sel.kind = Selection::Kind::provisional;
    sel.ranked_by = "ratio_to_baseline";
    sel.reason = why + "; provisional: " + what + ", ranked by their speed relative to the vendor baseline on " +
                 sel.evidence_gpu_model + " (arch " + sel.evidence_arch +
                 "), the nearest measured arch, not by their raw times";
    if (chosen_match.distance != 0)
      sel.reason +=
          "; nearest measured shape " + chosen_match.shape->canonical() + " stands in for " + q.shape.canonical();
  } else {
    sel.kind = Selection::Kind::unranked;
    sel.matched_shape.reset();
    sel.exact_shape = false;
    sel.reason = why + "; unranked: " +
                 (in.candidates.empty()
                      ? "no instances that " + in.candidates_basis + " are known yet, so there is no best"
                      : what +
                            ", but none has a comparable measurement with a vendor baseline on any GPU, so there "
                            "is no best");
  }
  summarize(sel, in.drivers);
  return sel;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

std::string unstable_note(UnstableBest how, std::string_view unstable, std::string_view stable) {
  std::string out;
  if (how == UnstableBest::moved) {
    out.append(unstable).append("'s figure is unstable (its bench rounds disagreed) and within noise of ");
    out.append(stable).append("'s stable figure, so ").append(stable).append(" ranks first");
  } else if (how == UnstableBest::kept) {
    out.append("the best figure (").append(unstable);
    out.append(
        ") is unstable: its bench rounds disagreed beyond the measured noise, though it is faster beyond "
        "that noise than every stable figure");
  }
  return out;
}

std::string commits_note(std::string_view gpu_model, std::size_t commits, std::string_view best_commit) {
  std::string out = "each instance's figure is its newest on ";
  out.append(gpu_model).append("; they come from ").append(std::to_string(commits)).append(" commits (the best's is ");
  out.append(best_commit.substr(0, 12)).append(")");
  return out;
}

std::string drivers_note(std::string_view gpu_model, std::span<const std::string_view> used,
                         std::span<const std::string_view> other) {
  auto join = [](std::string& out, std::span<const std::string_view> v) {
    for (std::size_t i = 0; i < v.size(); ++i) out.append(i ? ", " : "").append(v[i]);
  };
  std::string out;
  if (!other.empty()) {
    out = "results from driver ";
    join(out, other);
    out.append(" also exist on ").append(gpu_model).append("; this answer uses driver ");
    join(out, used);
    out.append(", that of the newest commit's measurements");
  } else if (used.size() > 1) {
    out = "the ranked figures were measured under drivers ";
    join(out, used);
  }
  return out;
}

std::string gpus_note(std::string_view gpu_model, std::span<const Measurement* const> ranked) {
  struct Seen {
    int figures = 0;
    double low = 0, high = 0;  // SM clocks, MHz (0: none known)
  };
  std::map<std::string_view, Seen> gpus;
  for (const Measurement* m : ranked) {
    if (m->gpu_uuid.empty()) continue;
    Seen& g = gpus[m->gpu_uuid];
    ++g.figures;
    if (m->sm_clock_mhz > 0) {
      g.low = g.low > 0 ? std::min(g.low, m->sm_clock_mhz) : m->sm_clock_mhz;
      g.high = std::max(g.high, m->sm_clock_mhz);
    }
  }
  if (gpus.size() < 2) return "";
  auto mhz = [](double v) { return std::to_string(static_cast<long long>(std::lround(v))); };
  std::string out = "the ranked figures were measured on " + std::to_string(gpus.size()) + " GPUs of ";
  out.append(gpu_model).append(":");
  bool first = true;
  for (const auto& [uuid, g] : gpus) {
    out.append(first ? " " : ", ").append(uuid).append(" (").append(std::to_string(g.figures));
    out.append(g.figures == 1 ? " figure" : " figures");
    if (g.high > 0) {
      out.append(", SM clock ").append(mhz(g.low));
      if (mhz(g.high) != mhz(g.low)) out.append("-").append(mhz(g.high));
      out.append(" MHz");
    }
    out.append(")");
    first = false;
  }
  out.append(
      "; GPUs of one model can differ beyond a figure's noise, so instances timed on different GPUs compare less "
      "surely than on one (GET /api/v1/gpus/agreement, kport gpus --gpu MODEL: whether they agree)");
  return out;
}

std::string tie_note(std::string_view first, std::string_view shape) {
  std::string out = "the best estimates tie within noise; at ";
  out.append(shape).append(", the nearest other measured shape where they differ, ").append(first);
  out.append(" is the fastest of them, so it ranks first");
  return out;
}

StandInNote stand_in_note(std::string_view matched, std::string_view method, int sm_count) {
  StandInNote out;
  out.before.append("nearest measured shape ").append(matched).append(" stands in for ");
  if (method == "wave_model")
    out.after = "; each instance's figure there is moved to the asked shape by its waves of tiles over " +
                std::to_string(sm_count) +
                " SMs and the steps each tile takes (wave model), and ranked by that estimate";
  else if (method == "problem_size")
    out.after =
        "; each figure there is scaled to the asked shape by the problem's size (no instance geometry or SM count "
        "known to move them by waves of tiles): the order is the one measured there, the times a rough guess, "
        "worst for small memory-bound problems, where launch and latency do not shrink with the size";
  return out;
}

const char* kind_name(Selection::Kind k) {
  switch (k) {
    case Selection::Kind::measured: return "measured";
    case Selection::Kind::provisional: return "provisional";
    case Selection::Kind::unranked: return "unranked";
  }
  return "unranked";
}

const Ranked* Selection::best() const {
  if (kind == Kind::unranked || ranking.empty() || !ranking.front().ranked) return nullptr;
  return &ranking.front();
}

bool prefer_shape(double d, std::string_view canonical, double best_d, std::string_view best_canonical) {
  if (!std::isfinite(d)) return false;
  return d < best_d || (d == best_d && canonical > best_canonical);
}

bool prefer_match(int changes, double d, std::string_view canonical, int best_changes, double best_d,
                  std::string_view best_canonical) {
  if (!std::isfinite(d)) return false;
  if (!std::isfinite(best_d) || changes != best_changes) return !std::isfinite(best_d) || changes < best_changes;
  return prefer_shape(d, canonical, best_d, best_canonical);
}

bool costs_tie(double a, double a_noise, double b, double b_noise) {
  double diff = std::abs(a - b);
  double floor = 0.01 * std::min(a, b);
  double spread = 2.0 * std::sqrt(a_noise * a_noise + b_noise * b_noise);
  return diff <= std::max(floor, spread);
}

bool is_tie(const Measurement& best, const Measurement& other) {
  return cost_tie(Scored{&best, best.median_us, best.stddev_us}, Scored{&other, other.median_us, other.stddev_us});
}

std::vector<Measurement> current_figures(std::span<const Measurement> rows) {
  using Key = std::tuple<std::string, std::string, std::string>;  // gpu model, instance, shape
  std::map<Key, const Measurement*> latest;
  for (const auto& m : rows) {
    auto& slot = latest[Key{m.gpu_model, m.instance, m.shape.canonical()}];
    if (!slot || std::tie(m.commit_ms, m.result_id) > std::tie(slot->commit_ms, slot->result_id)) slot = &m;
  }
  std::vector<Measurement> out;
  out.reserve(latest.size());
  for (auto& [_, m] : latest) out.push_back(*m);
  return out;
}

namespace detail {

std::optional<NeighbourRegret> neighbour_regret(const std::vector<Measurement>& timed, const Waves& waves) {
  struct AtShape {
    const Shape* shape = nullptr;
    std::string canonical;
    std::map<std::string, const Measurement*, std::less<>> figure;  // instance -> its figure
    std::string fastest;
    std::vector<char> own;  // own_paths() at the shape
  };
  std::map<std::string, AtShape> shapes;
  for (const auto& m : timed) {
    auto& a = shapes[m.shape.canonical()];
    if (!a.shape) a.own = own_paths(waves.geometry, m.shape, waves.element_bytes);
    a.shape = &m.shape;
    a.canonical = m.shape.canonical();
    a.figure[m.instance] = &m;
    if (a.fastest.empty() || m.median_us < a.figure[a.fastest]->median_us) a.fastest = m.instance;
  }
  std::vector<const AtShape*> list;
  for (const auto& [key, a] : shapes) list.push_back(&a);
  // The shapes a tie at `from` may be broken by when `to` is answered from it: the others
  // on as many paths changes from `to` as `from` (`to` itself is left out, as the asked
  // shape of an answer is unmeasured).
  class Others final : public OtherShapes {
   public:
    Others(const std::vector<const AtShape*>& list, const AtShape& from, const AtShape& to)
        : m_list(list), m_from(from), m_to(to), m_changes(path_changes(to.own, from.own)) {}
    std::size_t size() const override { return m_list.size(); }
    Ref shape(std::size_t i) const override {
      const AtShape& a = *m_list[i];
      if (&a == &m_from || &a == &m_to || path_changes(m_to.own, a.own) != m_changes) return Ref{nullptr, a.canonical};
      return Ref{a.shape, a.canonical};
    }
    const Measurement* figure(std::size_t i, std::string_view instance) const override {
      auto it = m_list[i]->figure.find(instance);
      return it == m_list[i]->figure.end() ? nullptr : it->second;
    }

   private:
    const std::vector<const AtShape*>& m_list;
    const AtShape& m_from;
    const AtShape& m_to;
    int m_changes;
  };
  // The instance an answer at `to` from the figures at `from` would name, as measured_at()
  // ranks: the best estimate (ties by name), a tie broken by the other shapes, an unstable
  // best giving way to a stable figure within noise of it.
  auto answer_from = [&](const AtShape& from, const AtShape& to) {
    std::vector<Scored> scored;
    for (const auto& [instance, m] : from.figure) {
      const Geometry* own = find_geometry(waves.geometry, instance);
      if (own && !runs_within(*own, *to.shape, waves.element_bytes)) continue;
      const Geometry* g = waves.sm_count > 0 ? own : nullptr;
      double cost = estimate_at(g, waves.sm_count, *from.shape, m->median_us, *to.shape, waves.shape_rules());
      scored.push_back(Scored{m, cost, m->stddev_us * cost / m->median_us});
    }
    if (scored.empty()) return std::string();
    std::string_view first;
    const auto tied = tied_with_fastest(scored, [&](const Scored& s) {
      return waves.sm_count > 0 ? find_geometry(waves.geometry, s.m->instance) : nullptr;
    });
    if (!tied.empty())
      if (auto tb = break_tie(*to.shape, tied, Others(list, from, to), waves,
                              k_tie_reach * to.shape->distance(*from.shape, waves.shape_rules())))
        first = tied[tb->tied].instance;
    order_ranking(scored, first);
    return scored.front().m->instance;
  };
  std::vector<double> regrets;
  const AtShape *worst = nullptr, *worst_from = nullptr;
  double worst_regret = -1;
  for (const auto& [key, a] : shapes) {
    if (a.figure.size() < 2) continue;
    const AtShape* nearest = nullptr;
    double best_d = std::numeric_limits<double>::infinity();
    int best_changes = 0;
    for (const auto& [other_key, b] : shapes) {
      if (other_key == key) continue;
      const double d = a.shape->distance(*b.shape, waves.shape_rules());
      const int changes = path_changes(a.own, b.own);
      if (prefer_match(changes, d, b.canonical, best_changes, best_d,
                       nearest ? std::string_view(nearest->canonical) : std::string_view())) {
        best_d = d;
        best_changes = changes;
        nearest = &b;
      }
    }
    if (!nearest) continue;
    auto it = a.figure.find(answer_from(*nearest, a));
    if (it == a.figure.end()) continue;
    regrets.push_back(it->second->median_us / a.figure.at(a.fastest)->median_us - 1.0);
    if (regrets.back() > worst_regret) {  // the first of equal ones, in canonical order
      worst_regret = regrets.back();
      worst = &a;
      worst_from = nearest;
    }
  }
  if (regrets.size() < 2) return std::nullopt;
  std::sort(regrets.begin(), regrets.end());
  const auto at = [&](double q) {
    return regrets[static_cast<std::size_t>(std::lround(q * double(regrets.size() - 1)))];
  };
  NeighbourRegret r;
  r.shapes = static_cast<int>(regrets.size());
  r.median = at(0.5);
  r.p90 = at(0.9);
  r.max = regrets.back();
  r.worst_shape = worst->canonical;
  r.worst_from = worst_from->canonical;
  return r;
}

}  // namespace detail

Selection select_best(const SelectionQuery& q, const SelectionInputs& in) {
  auto current = current_figures(in.on_gpu);
  if (current.empty()) return provisional(q, in, "no measurement on " + q.gpu_model + " yet");
  // The nearest shape that was timed: most shapes are checked for numerics only, and a
  // shape where no instance has a figure can rank nothing. Only where nothing comparable
  // was timed does the nearest checked shape answer (unranked, with its exclusions).
  std::vector<Measurement> timed;
  for (const auto& m : current)
    if (m.ranks()) timed.push_back(m);
  const detail::Waves waves{in.sm_count, in.geometry, element_bytes(q.dtype), in.rules};
  ShapeMatch match = nearest_shape(q.shape, timed, waves);
  if (!match.shape) match = nearest_shape(q.shape, current, waves);
  if (!match.shape)
    return provisional(q, in, "nothing comparable to " + q.shape.canonical() + " was measured on " + q.gpu_model);
  const FlatShapes others(timed, *match.shape, q.shape, waves);
  Selection sel =
      detail::measured_at(q.gpu_model, in.drivers, current, *match.shape, &q.shape, waves, nullptr, &others);
  std::optional<detail::RegretNote> regret;
  detail::answer_query(
      sel, q.shape, match.distance,
      [&]() -> const detail::RegretNote& {
        if (!regret) regret = detail::regret_note(q.gpu_model, detail::neighbour_regret(timed, waves));
        return *regret;
      },
      waves);
  return sel;
}

Result<Candidates> provisional_candidates(const CandidateQuery& q, std::span<const InstanceInfo> instances) {
  std::vector<const InstanceInfo*> family;
  for (const auto& i : instances)
    if (i.family == q.family) family.push_back(&i);
  if (family.empty())
    return make_error(Errc::not_found, "no " + q.family +
                                           " kernel instance is known yet; a build job publishes them "
                                           "(PUT /api/v1/kernels) when it lists its harness");
  const std::set<std::string> ran(q.ran_dtype.begin(), q.ran_dtype.end());
  auto runs = [&](const InstanceInfo& i) {
    if (i.dtypes) return std::find(i.dtypes->begin(), i.dtypes->end(), q.dtype) != i.dtypes->end();
    return ran.count(i.name) > 0;
  };
  std::vector<std::string> family_dtypes;
  for (const auto* i : family)
    if (i->dtypes) family_dtypes.insert(family_dtypes.end(), i->dtypes->begin(), i->dtypes->end());
  if (std::none_of(family.begin(), family.end(), [&](const InstanceInfo* i) { return runs(*i); })) {
    auto known = sorted(family_dtypes);
    return make_error(Errc::unprocessable, "no " + q.family + " instance runs dtype '" + q.dtype + "'" +
                                               (known.empty() ? std::string(" (none lists its dtypes)")
                                                              : "; " + q.family + " runs " + join(known)));
  }

  // The variants that may run on the target: what built there, else what the planner
  // says applies by the target's features.
  std::set<std::string> variants;
  Candidates out;
  if (q.has_build) {
    variants.insert(q.built_variants.begin(), q.built_variants.end());
    out.basis = "build for " + q.target;
  } else {
    TargetEntry target;
    target.name = q.target;
    target.features = sorted(q.target_features);
    std::map<std::string, VariantSpec> specs;
    for (const auto& v : q.variants) {
      auto& spec = specs[v.variant];
      spec.family = q.family;
      spec.variant = v.variant;
      spec.features = v.features;
    }
    for (const auto* i : family) {
      auto& spec = specs[i->variant];
      spec.family = i->family;
      spec.variant = i->variant;
      if (spec.features.empty()) spec.features = i->features;
    }
    std::vector<VariantSpec> list;
    for (auto& [_, s] : specs) list.push_back(s);
    for (const auto& v : make_plan(target, list).applicable) variants.insert(v.variant);
    out.basis = "apply to " + q.target + " by its features (no build for it yet)";
  }
  bool any_on_target = false;
  std::set<std::string> with_instances;
  for (const auto* i : family) {
    if (!variants.count(i->variant)) continue;
    any_on_target = true;
    with_instances.insert(i->variant);
    if (runs(*i)) out.list.push_back(BuildCandidate{i->name, i->variant});
  }
  for (const auto& v : variants)
    if (!with_instances.count(v)) out.without_instances.push_back(q.family + "." + v);
  // Variants apply (a Blackwell target before its first build: gemm_fp8.tcgen05) but none has
  // a known instance, nor does any other: no candidate to name, which the unranked answer
  // says with the variants that apply (Selection's note), rather than that none applies.
  if (out.list.empty() && !any_on_target && !out.without_instances.empty()) return out;
  if (out.list.empty()) {
    if (!any_on_target)
      return make_error(Errc::unprocessable,
                        q.has_build
                            ? "no " + q.family + " variant builds for " + q.target + " yet; its builds failed"
                            : "no " + q.family + " variant applies to " + q.target + " by its catalog features");
    return make_error(Errc::unprocessable,
                      "no " + q.family + " instance that " + out.basis + " runs dtype '" + q.dtype + "'");
  }
  std::sort(out.list.begin(), out.list.end(),
            [](const BuildCandidate& a, const BuildCandidate& b) { return a.instance < b.instance; });
  return out;
}

}  // namespace kport::porting
