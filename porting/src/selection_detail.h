// Private to kport::selection: the two halves of a measured answer, shared by
// select_best() and PreparedSelection so that both answer by the very same code.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kport/porting/prepared_selection.h"
#include "kport/porting/selection.h"

namespace kport::porting::detail {

// What moves a figure from another shape to the query (SelectionInputs::sm_count and
// ::geometry; wave_model.h), and the query dtype's element bytes, which place a shape
// on either side of the instances' path bounds (wave_model.h own_path).
// `rules`: the family's dimension rules (SelectionInputs::rules), by which shapes are
// near or incomparable and problem sizes counted; null: every dimension plain.
struct Waves {
  int sm_count = 0;
  std::span<const InstanceGeometry> geometry = {};
  int element_bytes = 0;
  const ShapeRules* rules = nullptr;
  const ShapeRules& shape_rules() const {
    static const ShapeRules plain;
    return rules ? *rules : plain;
  }
};

// The timed shapes other than the matched one that an answer from another shape may break
// a tie by (break_tie): the caller's shapes by index, each with its text, and an
// instance's ranking figure there.
class OtherShapes {
 public:
  struct Ref {
    // Null: not one to break a tie by (untimed, the matched shape, or one with more or
    // fewer path changes to the asked shape than the matched one).
    const Shape* shape = nullptr;
    std::string_view canonical;
  };
  virtual ~OtherShapes() = default;
  virtual std::size_t size() const = 0;
  virtual Ref shape(std::size_t i) const = 0;
  virtual const Measurement* figure(std::size_t i, std::string_view instance) const = 0;
};

// An instance among those tied with the best estimate, and the geometry that moves its
// figures (null: by problem size), as the ranking moved it.
struct Tied {
  std::string_view instance;
  const Geometry* geometry = nullptr;
};
struct TieBreak {
  std::size_t tied = 0;   // index into the tied instances: the one that ranks first
  std::size_t shape = 0;  // index into the other shapes: where they differed
};
// The tie-break of an answer from another shape (selection.h): the nearest of `others`
// (prefer_shape) within `reach` of `want` (k_tie_reach times the matched shape's distance)
// where every tied instance has a ranking figure and, moved to `want`, they do not all
// tie with the fastest of them (by estimate, then name): that one. nullopt when no shape
// that near tells them apart.
std::optional<TieBreak> break_tie(const Shape& want, std::span<const Tied> tied, const OtherShapes& others,
                                  const Waves& waves, double reach);

// The instances of a ranking tied with its fastest estimate (by cost, then name) when at
// least two are, else empty: what break_tie() takes. `S` holds Scored's members, its
// instance's geometry found by `geometry(s)`.
template <typename S, typename GeometryOf>
std::vector<Tied> tied_with_fastest(const std::vector<S>& scored, const GeometryOf& geometry) {
  std::vector<Tied> out;
  if (scored.size() < 2) return out;
  const S* fastest = &scored.front();
  for (const S& s : scored)
    if (s.cost < fastest->cost || (s.cost == fastest->cost && s.m->instance < fastest->m->instance)) fastest = &s;
  for (const S& s : scored)
    if (&s == fastest || costs_tie(fastest->cost, fastest->noise, s.cost, s.noise))
      out.push_back(Tied{s.m->instance, geometry(s)});
  if (out.size() < 2) out.clear();
  return out;
}

// What a ranking orders by, lower first, with its noise in the same unit: the median
// (measured), the median moved to the asked shape (estimated) or the time relative to the
// vendor baseline, 1 / ratio (provisional).
struct Scored {
  const Measurement* m;
  double cost;
  double noise;
};

// The ranking's order, in place: by cost (then instance name); `first`, when it names one
// of them (a broken tie, break_tie()), goes first, the rest keeping their order; when the
// best figure is then unstable, the first stable figure within noise of it goes first.
// What `S` holds is Scored's members (m, cost, noise). Returns which note the ranking
// carries: moved (then scored[1] is the unstable figure and scored[0] the stable one),
// kept (scored[0]), none.
template <typename S>
UnstableBest order_ranking(std::vector<S>& scored, std::string_view first = {}) {
  std::sort(scored.begin(), scored.end(),
            [](const S& a, const S& b) { return a.cost != b.cost ? a.cost < b.cost : a.m->instance < b.m->instance; });
  if (!first.empty()) {
    auto it = std::find_if(scored.begin(), scored.end(), [&](const S& s) { return s.m->instance == first; });
    if (it != scored.end()) std::rotate(scored.begin(), it, it + 1);
  }
  if (scored.empty() || !scored.front().m->unstable) return UnstableBest::none;
  const S& best = scored.front();
  auto stable = std::find_if(scored.begin() + 1, scored.end(), [&](const S& s) {
    return !s.m->unstable && costs_tie(best.cost, best.noise, s.cost, s.noise);
  });
  if (stable == scored.end()) return UnstableBest::kept;
  std::rotate(scored.begin(), stable, stable + 1);
  return UnstableBest::moved;
}

// The evidence's order over the ranked figures (i < n, best first): the position of the
// first figure of each commit, the best's first and the others newest first
// (Evidence::commits), and of the first figure of each driver (Evidence::drivers).
// `commit(i)` and `driver(i)` name figure i's commit and driver by any value that is equal
// exactly when they are (the text, or a number given to each), `commit_ms(i)` its commit's
// time. `commits` and `drivers` are cleared first; their capacity is kept.
template <typename Commit, typename Driver, typename CommitMs>
void evidence_order(std::size_t n, const Commit& commit, const Driver& driver, const CommitMs& commit_ms,
                    std::vector<std::uint32_t>& commits, std::vector<std::uint32_t>& drivers) {
  commits.clear();
  drivers.clear();
  for (std::size_t i = 0; i < n; ++i) {
    if (std::none_of(commits.begin(), commits.end(), [&](std::uint32_t c) { return commit(c) == commit(i); }))
      commits.push_back(static_cast<std::uint32_t>(i));
    if (std::none_of(drivers.begin(), drivers.end(), [&](std::uint32_t d) { return driver(d) == driver(i); }))
      drivers.push_back(static_cast<std::uint32_t>(i));
  }
  if (commits.size() > 2)
    std::stable_sort(commits.begin() + 1, commits.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return commit_ms(a) > commit_ms(b); });
}

// What select_best answers from the current figures at `shape` (current not empty),
// before anything that depends on the query's own shape: ranking, exclusions, evidence,
// notes on unstable figures, commits and drivers; kind measured, or unranked when
// nothing there ranks.
// With `want` another shape than `shape`, the ranking is of each figure moved to `want`
// (estimate_at() with `waves`), ranked_by estimate_us, and method says how.
// With `owner` (what keeps `current` alive), the ranking's evidence shares it instead of
// copying each figure.
// With `others`, an answer from another shape whose best estimates tie is broken by them
// (break_tie), with its note (tie_note).
Selection measured_at(const std::string& gpu_model, std::span<const DriverSeen> drivers,
                      const std::vector<Measurement>& current, const Shape& shape, const Shape* want = nullptr,
                      const Waves& waves = {}, const std::shared_ptr<const void>& owner = nullptr,
                      const OtherShapes* others = nullptr);

// The neighbour regret of a GPU model's answers and the note a measured answer from
// another shape carries with it (empty without a regret): the same for every question
// of one (GPU model, family, dtype), so PreparedSelection writes it once.
// (RegretNote is declared in prepared_selection.h, which holds one.)
RegretNote regret_note(const std::string& gpu_model, std::optional<NeighbourRegret> regret);

// Adds what depends on the query: exactness, distance, the note naming the stand-in
// shape and, for a measured answer from another shape, the neighbour regret (asked of
// `regret` only then) and its note.
void answer_query(Selection& sel, const Shape& want, double distance, const std::function<const RegretNote&()>& regret,
                  const Waves& waves = {});

// NeighbourRegret over the timed current figures (nullopt below two scored shapes).
// Each shape answered from its nearest other one by the same method (`waves`).
std::optional<NeighbourRegret> neighbour_regret(const std::vector<Measurement>& timed, const Waves& waves = {});

}  // namespace kport::porting::detail
