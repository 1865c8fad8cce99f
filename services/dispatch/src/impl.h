// What a loaded snapshot holds: per (op, dtype), shapes grouped by their key set
// ("layout"), timed shapes with their precomputed winner, and shapes measured without a
// ranking figure (the API's unranked answers). Flat arrays, so a lookup walks memory
// in order and allocates nothing.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kport/dispatch/dispatch.h"
#include "kport/porting/op_shape.h"
#include "kport/porting/shape.h"
#include "kport/porting/wave_model.h"

namespace kport::dispatch {

inline constexpr std::size_t k_max_dims = 16;
inline constexpr std::size_t k_max_alignments = 2;  // per dimension, as a family may declare them

struct Winner {
  std::string instance, variant;
  double median_us = 0, stddev_us = 0;
  bool tie = false, unstable = false;
  std::int64_t result_id = 0;
};

// One ranking figure at a timed shape, for answers from that shape to another: moved
// to the query by its instance's work (porting::estimate_at, wave_model.h).
struct Figure {
  std::uint32_t instance = 0;  // index into Snapshot::Table::instances, which is sorted by name
  double median_us = 0, stddev_us = 0;
  double work = 0;  // the instance's work at the figure's own shape (its WorkPlan)
  bool unstable = false;
  std::int64_t result_id = 0;
};

// porting::wave_work (or problem_size) over a layout's key indices, so a lookup sums
// the very same products from the query's values without building a Shape.
struct WorkPlan {
  bool waves = false;    // false: problem_size
  bool missing = false;  // the geometry names a dimension the layout lacks: work 0
  std::uint8_t n_tiles = 0, n_steps = 0, n_others = 0;
  std::int64_t split = 1;                                                 // porting::Geometry::split
  std::array<std::uint8_t, k_max_dims> tile_at{}, step_at{}, other_at{};  // key indices
  // Per tile, step and other, the key index of the dimension bounding it (Layout::bound_by),
  // k_unbounded when none: its extent counts as the smaller of the two (ShapeRules::extent).
  std::array<std::uint8_t, k_max_dims> tile_cap{}, step_cap{}, other_cap{};
  std::array<std::int64_t, k_max_dims> tile{}, step{};
  // porting::Geometry::limits, multiples and byte_limits over the layout's keys (those the
  // layout lacks limit nothing); byte_limit points into the instance's geometry.
  std::uint8_t n_limits = 0, n_multiples = 0, n_byte_limits = 0;
  std::array<std::uint8_t, k_max_dims> limit_at{}, multiple_at{}, byte_limit_at{};
  std::array<std::int64_t, k_max_dims> limit{}, multiple{};
  std::array<const porting::Geometry::PathBound*, k_max_dims> byte_limit{};
};

struct TableInstance {
  std::string name, variant;
  const porting::Geometry* geometry = nullptr;  // into Snapshot::Impl::geometry
};

// Shapes of one key set; dims of shape j are values[j * keys.size() + i], keys sorted.
struct ShapeSet {
  std::vector<std::int64_t> values;
  std::vector<double> logs;  // ln(value), -inf for 0
  // Per value, bit k set when it is a multiple of its dimension's k-th alignment quantum
  // (the table's rules); filled by finish_layout().
  std::vector<std::uint8_t> aligned;
  std::vector<std::string> canonical;
  // Per shape, bit k set when the layout's k-th bounded instance runs its own code there
  // (porting::own_path); filled by finish_layout(), empty when no instance is bounded.
  std::vector<std::uint64_t> own;
  // The fast pass's terms by value: per dimension its distinct values (dimension after
  // dimension, dim i's from distinct_first[i]), their logs and alignment bits, and per
  // value of `values` the index of its distinct value. A lookup computes each distinct
  // value's term once and sums a shape's terms by index; filled by finish_layout(), left
  // empty (the pass then takes each shape's terms one by one) above k_max_distinct.
  std::vector<std::int64_t> distinct;
  std::vector<double> distinct_logs;
  std::vector<std::uint8_t> distinct_aligned;
  std::vector<std::uint32_t> distinct_first;
  std::vector<std::uint16_t> slot;
  // The shapes grouped into runs by their value of dimension group_dim (the one with the
  // most distinct values): run r is order[run_first[r] .. run_first[r + 1]). A lookup
  // visits the runs nearest first and stops where no shape of a run can be near enough.
  std::uint8_t group_dim = 0;
  std::vector<std::uint32_t> order, run_first;
  std::size_t size() const { return canonical.size(); }
};
inline constexpr std::size_t k_max_distinct = 1024;  // distinct values of one shape set, all dimensions

// One path bound of an instance over a layout's keys (porting::Geometry::PathBound).
struct PathCheck {
  std::uint8_t slot = 0;  // the instance's bit in ShapeSet::own
  std::uint8_t key = 0;   // index into the layout's keys
  porting::Geometry::PathBound bound;
};
inline constexpr std::size_t k_max_bounded = 64;  // bounded instances of one table

inline constexpr std::uint8_t k_unbounded = 0xff;

struct Layout {
  std::vector<std::string> keys;  // sorted, as porting::Shape keeps them
  std::vector<char> exact;        // rules[i].exact
  // Per key, the index of the key that bounds its extent (porting::ShapeRules::Cap), or
  // k_unbounded; and whether it bounds another (then it multiplies no work).
  std::vector<std::uint8_t> bound_by;
  std::vector<char> bounds_another;
  std::vector<porting::Shape::DimRule> rules;  // the table's family's rule of each key
  // The same rules flattened for the fast pass: the weight on |ln a - ln b| and, indexed
  // by the XOR of two values' alignment bits, the penalty they add.
  std::vector<double> weight;
  std::vector<std::array<double, 4>> penalty;
  ShapeSet timed;               // at least one ranking figure
  std::vector<Winner> winners;  // per timed shape
  // Per timed shape j, its ranking figures are figures[first[j] .. first[j + 1]).
  std::vector<Figure> figures;
  std::vector<std::uint32_t> first;
  std::vector<WorkPlan> plans;   // per table instance
  ShapeSet untimed;              // figures, none ranking
  std::vector<PathCheck> paths;  // every bound instance's bounds on this layout's keys
  int element_bytes = 0;         // the table dtype's (porting::element_bytes)
};

// The bits of ShapeSet::own for a shape of `l` at `values` (the layout's key order):
// porting::within over each bound, as porting::own_path applies it.
inline std::uint64_t own_paths(const Layout& l, const std::int64_t* values) {
  std::uint64_t own = ~std::uint64_t{0};
  for (const auto& c : l.paths)
    if (!porting::within(c.bound, values[c.key], l.element_bytes)) own &= ~(std::uint64_t{1} << c.slot);
  return own;
}

inline constexpr std::size_t k_max_figures = 256;  // ranking figures at one timed shape

// A plan's work at `values` (the layout's key order): porting::wave_work itself (or
// porting::problem_size's product, in its order), so the doubles are the same.
// The value at key index `at` as a work estimate counts it: at most the value at `cap`.
inline std::int64_t bounded(const std::int64_t* values, std::uint8_t at, std::uint8_t cap) {
  return cap == k_unbounded ? values[at] : std::min(values[at], values[cap]);
}

inline double plan_work(const WorkPlan& p, const std::int64_t* values, int sm_count) {
  if (p.missing) return 0;
  if (!p.waves) {
    double size = 1;
    for (std::uint8_t i = 0; i < p.n_others; ++i)
      size *= static_cast<double>(bounded(values, p.other_at[i], p.other_cap[i]));
    return size;
  }
  // Only the first n_tiles, n_steps and n_others entries are read: not zeroed, since
  // this runs for every figure of an answer from another shape.
  std::array<porting::Extent, k_max_dims> tiled, stepped;
  std::array<std::int64_t, k_max_dims> others;
  for (std::uint8_t i = 0; i < p.n_tiles; ++i) tiled[i] = {bounded(values, p.tile_at[i], p.tile_cap[i]), p.tile[i]};
  for (std::uint8_t i = 0; i < p.n_steps; ++i) stepped[i] = {bounded(values, p.step_at[i], p.step_cap[i]), p.step[i]};
  for (std::uint8_t i = 0; i < p.n_others; ++i) others[i] = bounded(values, p.other_at[i], p.other_cap[i]);
  return porting::wave_work(std::span(tiled.data(), p.n_tiles), std::span(stepped.data(), p.n_steps),
                            std::span(others.data(), p.n_others), sm_count, p.split);
}

// Alignment bits of `value` under `rule` (bit k: a multiple of its k-th quantum).
// `value` is never negative (a shape's extents are not); a quantum that is a power of two
// (all of kport's own families' are) is tested by a mask rather than a division, once per query
// dimension and alignment.
inline std::uint8_t alignment_bits(const porting::Shape::DimRule& rule, std::int64_t value) {
  std::uint8_t bits = 0;
  for (std::size_t k = 0; k < rule.alignments.size() && k < k_max_alignments; ++k) {
    const std::int64_t q = rule.alignments[k].quantum;
    const bool multiple = q > 0 && (q & (q - 1)) == 0 ? (value & (q - 1)) == 0 : value % q == 0;
    if (multiple) bits = static_cast<std::uint8_t>(bits | (1u << k));
  }
  return bits;
}

// String equality without a library call: the names compared per lookup (ops, dtypes,
// shape keys) are a few bytes long.
inline bool same_text(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

class Snapshot::Table {
 public:
  std::string op, dtype;
  porting::ShapeRules rules;                            // the family's dimension rules (the table's `dims`)
  std::vector<porting::ShapeRequirement> requirements;  // the family's (the table's `requires`)
  std::vector<Layout> layouts;
  std::vector<TableInstance> instances;  // every instance with a ranking figure, by name
  TableInfo info;
};

struct Snapshot::Impl {
  std::string gpu_model, arch;
  int sm_count = 0;  // 0: unknown (answers from another shape move figures by problem size)
  std::vector<porting::InstanceGeometry> geometry;
  std::int64_t generated_at_ms = 0;
  std::vector<std::string> commits, drivers;
  std::vector<std::unique_ptr<Snapshot::Table>> tables;
};

}  // namespace kport::dispatch
