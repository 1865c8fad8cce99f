#include "kport/porting/prepared_selection.h"

#include <cmath>
#include <limits>

#include "selection_detail.h"

namespace kport::porting {
namespace {

std::size_t heap(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

std::size_t heap(const Shape& s) {
  std::size_t n = s.dims().capacity() * sizeof(Shape::Dim);
  for (const auto& d : s.dims()) n += heap(d.first);
  return n;
}

std::size_t heap(const Measurement& m) {
  return heap(m.instance) + heap(m.variant) + heap(m.target) + heap(m.gpu_model) + heap(m.arch) + heap(m.driver) +
         heap(m.commit) + heap(m.status) + heap(m.shape);
}

std::size_t heap(const std::vector<std::string>& v) {
  std::size_t n = v.capacity() * sizeof(std::string);
  for (const auto& s : v) n += heap(s);
  return n;
}

std::size_t heap(const Selection& s) {
  std::size_t n = heap(s.reason) + heap(s.notes) + heap(s.ranked_by) + heap(s.candidates_basis) +
                  heap(s.evidence_gpu_model) + heap(s.evidence_arch) + heap(s.evidence.commits) +
                  heap(s.evidence.drivers) + heap(s.evidence.other_drivers) +
                  s.evidence.result_ids.capacity() * sizeof(std::int64_t);
  if (s.matched_shape) n += heap(*s.matched_shape);
  n += s.ranking.capacity() * sizeof(Ranked) + s.excluded.capacity() * sizeof(Excluded);
  // A ranked figure's evidence is shared with the current figures, counted there.
  for (const auto& r : s.ranking) n += heap(r.instance) + heap(r.variant);
  for (const auto& x : s.excluded) n += heap(x.instance) + heap(x.variant) + heap(x.reason) + heap(x.evidence);
  return n;
}

// The prepared shapes for detail::break_tie: the timed ones other than the matched one,
// on as many path changes from the asked shape as the matched one.
class PreparedShapes final : public detail::OtherShapes {
 public:
  PreparedShapes(const std::vector<Shape>& shapes, const std::vector<std::string>& canonical,
                 const std::vector<char>& timed, const std::vector<std::vector<char>>& own,
                 const std::vector<std::vector<Measurement>>& current_at, std::size_t matched,
                 const std::vector<char>& want_own)
      : m_shapes(shapes),
        m_canonical(canonical),
        m_timed(timed),
        m_own(own),
        m_current_at(current_at),
        m_matched(matched),
        m_want_own(want_own),
        m_changes(path_changes(want_own, own[matched])) {}
  std::size_t size() const override { return m_shapes.size(); }
  Ref shape(std::size_t i) const override {
    const bool usable = i != m_matched && m_timed[i] && path_changes(m_want_own, m_own[i]) == m_changes;
    return Ref{usable ? &m_shapes[i] : nullptr, m_canonical[i]};
  }
  const Measurement* figure(std::size_t i, std::string_view instance) const override {
    for (const auto& m : m_current_at[i])
      if (m.ranks() && m.instance == instance) return &m;
    return nullptr;
  }

 private:
  const std::vector<Shape>& m_shapes;
  const std::vector<std::string>& m_canonical;
  const std::vector<char>& m_timed;
  const std::vector<std::vector<char>>& m_own;
  const std::vector<std::vector<Measurement>>& m_current_at;
  std::size_t m_matched;
  const std::vector<char>& m_want_own;
  int m_changes;
};

}  // namespace

PreparedSelection::PreparedSelection(std::string gpu_model, std::vector<Measurement> on_gpu,
                                     std::vector<DriverSeen> drivers, int sm_count,
                                     std::vector<InstanceGeometry> geometry, int element_bytes, ShapeRules rules)
    : m_gpu_model(std::move(gpu_model)),
      m_rows(on_gpu.size()),
      m_drivers(std::move(drivers)),
      m_sm_count(sm_count),
      m_geometry(std::move(geometry)),
      m_element_bytes(element_bytes),
      m_rules(std::move(rules)) {
  if (!on_gpu.empty()) m_first_arch = on_gpu.front().arch;
  auto current = current_figures(on_gpu);
  if (current.empty()) return;
  std::vector<Measurement> timed;
  for (const auto& m : current) {
    if (m.ranks()) timed.push_back(m);
    std::string c = m.shape.canonical();
    std::size_t i = 0;
    while (i < m_canonical.size() && m_canonical[i] != c) ++i;
    if (i == m_canonical.size()) {
      m_shapes.push_back(m.shape);
      m_canonical.push_back(std::move(c));
      m_timed.push_back(0);
    }
    if (m.ranks()) m_timed[i] = 1;
  }
  for (const auto& shape : m_shapes) m_own.push_back(own_paths(m_geometry, shape, m_element_bytes));
  m_at.reserve(m_shapes.size());
  auto current_at = std::make_shared<std::vector<std::vector<Measurement>>>(m_shapes.size());
  for (const auto& m : current)
    for (std::size_t i = 0; i < m_shapes.size(); ++i)
      if (m.shape == m_shapes[i]) (*current_at)[i].push_back(m);
  m_current_at = current_at;
  for (std::size_t i = 0; i < m_shapes.size(); ++i)
    m_at.push_back(
        detail::measured_at(m_gpu_model, m_drivers, (*m_current_at)[i], m_shapes[i], nullptr, {}, m_current_at));
  m_regret = detail::regret_note(m_gpu_model, detail::neighbour_regret(timed, waves()));
  // What measured_at() computes per figure at the shape it moves from, once.
  m_work.resize(m_shapes.size());
  m_by_waves.assign(m_shapes.size(), 0);
  for (std::size_t i = 0; i < m_shapes.size(); ++i) {
    const auto& here = (*m_current_at)[i];
    std::vector<const std::string*> commits, used;
    auto number = [](std::vector<const std::string*>& seen, const std::string& s) {
      std::size_t k = 0;
      while (k < seen.size() && *seen[k] != s) ++k;
      if (k == seen.size()) seen.push_back(&s);
      return static_cast<std::uint32_t>(k);
    };
    for (std::size_t f = 0; f < here.size(); ++f) {
      const Measurement& m = here[f];
      if (!m.ranks()) continue;
      // find_geometry()'s: the first of the instance's name. It moves the figure by waves
      // when it has tiles and the SM count is known, and rules shapes out by its limits.
      int own = -1;
      for (std::size_t k = 0; k < m_geometry.size() && own < 0; ++k)
        if (m_geometry[k].instance == m.instance) own = static_cast<int>(k);
      const Geometry* og = own >= 0 ? &m_geometry[static_cast<std::size_t>(own)].geometry : nullptr;
      const int g = og && m_sm_count > 0 && has_waves(*og) ? own : -1;
      const int lim = og && !(og->limits.empty() && og->byte_limits.empty() && og->multiples.empty()) ? own : -1;
      if (g >= 0) m_by_waves[i] = 1;
      m_work[i].push_back(Work{static_cast<std::uint32_t>(f), g, lim,
                               estimate_work(g >= 0 ? &m_geometry[static_cast<std::size_t>(g)].geometry : nullptr,
                                             m_sm_count, m_shapes[i], m_rules),
                               number(commits, m.commit), number(used, m.driver)});
    }
  }
}

bool PreparedSelection::moved(const Shape& want, const Match& m, Moved& out) const {
  // measured_at()'s estimated branch and rank(), over the figures' work computed once:
  // the same doubles in the same order (prepared_selection_test holds them to answer()).
  if (m.distance == 0 || m.shape >= m_shapes.size() || m_work[m.shape].empty() || want == m_shapes[m.shape])
    return false;
  const auto& here = (*m_current_at)[m.shape];
  // An instance the question is beyond the limits of is left out with its reason, which
  // answer() writes: those answers take that path.
  for (const Work& w : m_work[m.shape])
    if (w.limits >= 0 && !runs_within(m_geometry[static_cast<std::size_t>(w.limits)].geometry, want, m_element_bytes))
      return false;
  out.places.clear();
  double want_size = -1;  // problem_size(want), when some figure moves by it
  for (std::size_t k = 0; k < m_work[m.shape].size(); ++k) {
    const Work& w = m_work[m.shape][k];
    const Measurement& fig = here[w.figure];
    double to = 0;
    if (w.geometry >= 0) {
      to = estimate_work(&m_geometry[static_cast<std::size_t>(w.geometry)].geometry, m_sm_count, want, m_rules);
    } else {
      if (want_size < 0) want_size = estimate_work(nullptr, m_sm_count, want, m_rules);
      to = want_size;
    }
    const double cost = scale_by_work(fig.median_us, w.at_shape, to);
    out.places.push_back(Moved::Place{&fig, w.figure, static_cast<std::uint32_t>(k), cost,
                                      fig.stddev_us * cost / fig.median_us, 1.0, false});
  }
  // A tie among the best estimates, broken by the nearest other shape that tells them apart.
  out.tie_first = {};
  out.tie_shape = m_shapes.size();
  const auto& work = m_work[m.shape];
  const auto tied = detail::tied_with_fastest(out.places, [&](const Moved::Place& p) -> const Geometry* {
    const int g = work[p.work].geometry;
    return g >= 0 ? &m_geometry[static_cast<std::size_t>(g)].geometry : nullptr;
  });
  if (!tied.empty()) {
    const auto want_own = own_paths(m_geometry, want, m_element_bytes);
    const PreparedShapes others(m_shapes, m_canonical, m_timed, m_own, *m_current_at, m.shape, want_own);
    if (auto tb = detail::break_tie(want, tied, others, waves(), k_tie_reach * m.distance)) {
      out.tie_first = tied[tb->tied].instance;
      out.tie_shape = tb->shape;
    }
  }
  out.unstable = detail::order_ranking(out.places, out.tie_first);
  const Moved::Place& best = out.places.front();
  for (std::size_t i = 1; i < out.places.size(); ++i) {
    Moved::Place& p = out.places[i];
    p.tie_with_best = costs_tie(best.cost, best.noise, p.cost, p.noise);
    p.slowdown = best.cost > 0 ? p.cost / best.cost : 1.0;
  }
  if (out.places.size() > 1 && out.places[1].tie_with_best) out.places.front().tie_with_best = true;
  detail::evidence_order(
      out.places.size(), [&](std::size_t i) { return work[out.places[i].work].commit; },
      [&](std::size_t i) { return work[out.places[i].work].driver; },
      [&](std::size_t i) { return out.places[i].m->commit_ms; }, out.commits, out.drivers);
  out.method = moved_method(m.shape);
  return true;
}

detail::Waves PreparedSelection::waves() const {
  return detail::Waves{m_sm_count, m_geometry, m_element_bytes, &m_rules};
}

std::optional<PreparedSelection::Match> PreparedSelection::match(const Shape& want) const {
  // select_best's order: the nearest timed shape; only when none is comparable, the
  // nearest shape measured at all.
  const auto want_own = own_paths(m_geometry, want, m_element_bytes);
  for (int pass = 0; pass < 2; ++pass) {
    double best_d = std::numeric_limits<double>::infinity();
    int best_changes = 0;
    std::size_t best = m_shapes.size();
    for (std::size_t i = 0; i < m_shapes.size(); ++i) {
      if (pass == 0 && !m_timed[i]) continue;
      const double d = want.distance(m_shapes[i], m_rules);
      if (!std::isfinite(d)) continue;
      const int changes = path_changes(want_own, m_own[i]);
      if (prefer_match(changes, d, m_canonical[i], best_changes, best_d,
                       best < m_shapes.size() ? std::string_view(m_canonical[best]) : std::string_view()))
        best_d = d, best_changes = changes, best = i;
    }
    if (best < m_shapes.size()) return Match{best, best_d};
  }
  return std::nullopt;
}

Selection PreparedSelection::answer(const Shape& want, const Match& m) const {
  // From another shape the figures are moved to the question's and ranked there, a tie
  // broken by the other shapes.
  Selection sel;
  if (m.distance == 0) {
    sel = m_at[m.shape];
  } else {
    const auto want_own = own_paths(m_geometry, want, m_element_bytes);
    const PreparedShapes others(m_shapes, m_canonical, m_timed, m_own, *m_current_at, m.shape, want_own);
    sel = detail::measured_at(m_gpu_model, m_drivers, (*m_current_at)[m.shape], m_shapes[m.shape], &want, waves(),
                              m_current_at, &others);
  }
  detail::answer_query(
      sel, want, m.distance, [this]() -> const detail::RegretNote& { return m_regret; }, waves());
  return sel;
}

Selection PreparedSelection::answer_query_part(const Shape& want, const Match& m) const {
  const Selection& at = m_at[m.shape];
  Selection sel;
  sel.kind = at.kind;
  sel.reason = at.reason;
  sel.notes = at.notes;
  sel.matched_shape = at.matched_shape;
  sel.method = at.method;
  detail::answer_query(
      sel, want, m.distance, [this]() -> const detail::RegretNote& { return m_regret; }, waves());
  return sel;
}

std::optional<Selection> PreparedSelection::answer(const Shape& want) const {
  auto m = match(want);
  if (!m) return std::nullopt;
  return answer(want, *m);
}

std::size_t PreparedSelection::bytes() const {
  std::size_t n = sizeof(*this) + heap(m_gpu_model) + heap(m_first_arch) + heap(m_canonical) + heap(m_regret.note) +
                  m_shapes.capacity() * sizeof(Shape) + m_timed.capacity() + m_at.capacity() * sizeof(Selection);
  for (const auto& s : m_shapes) n += heap(s);
  for (const auto& s : m_at) n += heap(s);
  if (m_current_at) n += m_current_at->capacity() * sizeof(std::vector<Measurement>);
  n += m_drivers.capacity() * sizeof(DriverSeen) + m_geometry.capacity() * sizeof(InstanceGeometry);
  n += m_own.capacity() * sizeof(std::vector<char>) + m_work.capacity() * sizeof(std::vector<Work>) +
       m_by_waves.capacity();
  for (const auto& w : m_work) n += w.capacity() * sizeof(Work);
  for (const auto& own : m_own) n += own.capacity();
  if (m_current_at)
    for (const auto& at : *m_current_at) {
      n += at.capacity() * sizeof(Measurement);
      for (const auto& m : at) n += heap(m);
    }
  for (const auto& g : m_geometry)
    n += heap(g.instance) + (g.geometry.tiles.capacity() + g.geometry.steps.capacity()) * sizeof(Geometry::Split) +
         g.geometry.paths.capacity() * sizeof(Geometry::PathBound);
  return n;
}

}  // namespace kport::porting
