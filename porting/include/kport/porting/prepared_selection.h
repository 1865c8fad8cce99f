// select_best() for one GPU model, family and dtype, prepared once for many shapes.
//
// The rows of a (GPU model, family, dtype) change only when results arrive, but every
// /api/v1/best question asks about a shape of its own. Everything select_best derives
// from the rows alone is computed here once: the current figures, the distinct shapes
// (timed or not), each shape's ranking with its exclusions, evidence and notes, and the
// neighbour regret. A question then costs the nearest-shape search and the few fields
// that depend on its shape (exactness, distance, the stand-in note, the regret note),
// by the same code select_best runs (answer(shape) == select_best(query, inputs) for
// every shape with a comparable row).
//
// Thread-safety: immutable after construction; any number of threads may ask at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/porting/selection.h"

namespace kport::porting {
namespace detail {
struct Waves;
struct RegretNote {
  std::optional<NeighbourRegret> regret;
  std::string note;
};
}  // namespace detail

class PreparedSelection {
 public:
  // `on_gpu`: the GPU model's rows of one family and dtype, any status, as select_best's
  // SelectionInputs::on_gpu; `drivers`: SelectionInputs::drivers.
  // `sm_count` and `geometry`: SelectionInputs' (what moves figures from another shape);
  // `element_bytes`: the dtype's (wave_model.h element_bytes; 0 unknown), which places
  // shapes on either side of the instances' path bounds as select_best does.
  // `rules`: the family's dimension rules (SelectionInputs::rules), kept by value.
  PreparedSelection(std::string gpu_model, std::vector<Measurement> on_gpu, std::vector<DriverSeen> drivers,
                    int sm_count = 0, std::vector<InstanceGeometry> geometry = {}, int element_bytes = 0,
                    ShapeRules rules = {});

  struct Match {
    std::size_t shape = 0;  // index into shapes()
    double distance = 0;    // Shape::distance of the query to it
  };
  // The shape select_best answers `want` from: the nearest timed shape (prefer_shape),
  // else the nearest shape measured at all; nullopt when no row is comparable (then
  // select_best's answer is provisional or unranked from other inputs: not prepared here).
  std::optional<Match> match(const Shape& want) const;
  // select_best({gpu_model, ..., want, ...}, {on_gpu, ..., drivers}) for a match of want.
  Selection answer(const Shape& want, const Match& m) const;
  std::optional<Selection> answer(const Shape& want) const;
  // For an exact match (m.distance == 0) only: answer(want, m) with only the fields that
  // depend on the question filled in: kind, reason, notes, matched_shape, exact_shape,
  // shape_distance (ranking, exclusions and evidence left empty: at(m.shape)'s are the
  // answer's). For callers that hold the rest already serialized; it copies no ranking.
  // From another shape the ranking itself depends on the question (the figures moved to
  // it): ask answer().
  Selection answer_query_part(const Shape& want, const Match& m) const;

  // An answer from a timed shape to another one, ranked but not written: answer(want, m)'s
  // ranking as places among figures(m.shape), and which of them name its evidence's
  // commits and drivers, in the answer's order. The rest of that answer is at(m.shape)'s
  // (kind, exclusions, the evidence's totals and other drivers), the question's words
  // (stand_in_note with `method`, regret_note()) and these, so a writer that holds each
  // figure's text serialized (the coordinator's) writes it without building a Selection.
  // `out`'s vectors are reused: a caller that keeps one per thread allocates nothing.
  struct Moved {
    struct Place {
      const Measurement* m = nullptr;  // the figure, in figures(m.shape)
      std::uint32_t figure = 0;        // its index there
      std::uint32_t work = 0;          // its index among the shape's timed figures
      double cost = 0;                 // Ranked::estimate_us
      double noise = 0;                // its spread, moved with it
      double slowdown = 1.0;           // Ranked::slowdown
      bool tie_with_best = false;      // Ranked::tie_with_best
    };
    std::vector<Place> places;                   // best first
    UnstableBest unstable = UnstableBest::none;  // its note: places[1] moved below places[0], or places[0] kept
    // A tie among the best estimates broken by another shape (selection.h): the instance
    // that ranks first and that shape's index in shapes() (tie_note); tie_shape is
    // shapes().size() when no tie was broken.
    std::string_view tie_first;
    std::size_t tie_shape = 0;
    std::vector<std::uint32_t> commits, drivers;  // positions in places (Evidence::commits, ::drivers)
    std::string_view method;                      // Selection::method: "wave_model" or "problem_size"
  };
  // False (out unspecified) when answer(want, m) is no such answer: nothing was timed at
  // m.shape (an unranked answer), or m.distance is 0 (the figures are not moved).
  bool moved(const Shape& want, const Match& m, Moved& out) const;
  // The current figures at a shape (the rows answer() ranks there, any status).
  const std::vector<Measurement>& figures(std::size_t shape) const { return (*m_current_at)[shape]; }
  // The neighbour regret and its note (empty without one), the same for every answer
  // from another shape.
  const std::optional<NeighbourRegret>& regret() const { return m_regret.regret; }
  const std::string& regret_note() const { return m_regret.note; }
  int sm_count() const { return m_sm_count; }
  // Moved::method of every answer from `shape` to another: "wave_model" when some timed
  // figure there moves by its waves of tiles, else "problem_size".
  std::string_view moved_method(std::size_t shape) const { return m_by_waves[shape] ? "wave_model" : "problem_size"; }

  // The distinct shapes of the current figures, and what a question at exactly that
  // shape's rows is answered with before the query's own fields (answer() adds them).
  const std::vector<Shape>& shapes() const { return m_shapes; }
  const std::vector<std::string>& canonical() const { return m_canonical; }
  const Selection& at(std::size_t shape) const { return m_at[shape]; }
  const std::string& gpu_model() const { return m_gpu_model; }
  // The first row's arch as given (what /api/v1/best echoes as the query's arch).
  const std::string& first_arch() const { return m_first_arch; }
  std::size_t rows() const { return m_rows; }
  // An estimate of the heap and inline bytes held, for the coordinator's memory report.
  std::size_t bytes() const;

 private:
  detail::Waves waves() const;
  std::string m_gpu_model, m_first_arch;
  std::size_t m_rows = 0;
  std::vector<Shape> m_shapes;
  std::vector<std::string> m_canonical;
  std::vector<char> m_timed;             // per shape: some figure there ranks
  std::vector<std::vector<char>> m_own;  // per shape: own_paths() of the instances' geometries
  std::vector<Selection> m_at;           // per shape: detail::measured_at
  // Per shape: its current figures; shared with the answers' rankings (Ranked::evidence).
  std::shared_ptr<const std::vector<std::vector<Measurement>>> m_current_at;
  std::vector<DriverSeen> m_drivers;
  int m_sm_count = 0;
  std::vector<InstanceGeometry> m_geometry;
  int m_element_bytes = 0;
  ShapeRules m_rules;
  detail::RegretNote m_regret;  // and its note, written once
  // Per shape, its timed figures' work there (estimate_work): what moved() scales each by.
  struct Work {
    std::uint32_t figure;
    int geometry;  // index in m_geometry, with its tiles and an SM count known; -1: by problem size
    int limits;    // index in m_geometry of the instance's, when it has limits (runs_within); -1: none
    double at_shape;
    // Its commit and driver numbered per shape (equal exactly when the texts are).
    std::uint32_t commit, driver;
  };
  std::vector<std::vector<Work>> m_work;
  std::vector<char> m_by_waves;  // per shape: some timed figure moves by waves
};

}  // namespace kport::porting
