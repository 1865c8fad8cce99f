// Moving a measured time to a shape that was not measured, by what decides a kernel's
// time there: how many waves of thread blocks (CTAs) its tiles make over the GPU's SMs,
// and how many steps each block walks. A kernel whose tile leaves the last wave a third
// full, or needs a second wave where another tile needs one, loses exactly that, and
// the nearest measured shape cannot show it (on the H200, gemm at M = 96, N = 28672: the
// 128x128 tile needs 224 blocks, two waves over 132 SMs, and the 128x256 tile 112, one
// wave; at the nearest measured N = 14336 both fit in one wave and 128x128 was faster).
//
// An estimate is anchored on the instance's own figure at the nearest measured shape on
// the same GPU model and scaled by the ratio of its work there and at the asked shape:
//   work = ceil(blocks / SMs) * prod(ceil(stepped extent / step)),
//   blocks = prod(ceil(tiled extent / tile)) * prod(every other dimension that does not
//            have to match exactly: batch, heads).
// An instance whose geometry is not known scales by the problem's size alone (the
// product of those dimensions), the same for every instance, which ranks as the nearest
// shape's figures do.
//
// Pure functions; thread-safe; the standard library only (part of kport::selection).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kport/porting/shape.h"

namespace kport::porting {

struct Geometry {  // how an instance divides a problem among its thread blocks
  struct Split {
    std::string dim;        // a dimension of the family's shapes: "m"
    std::int64_t size = 0;  // the tile (or step) along it: 128
  };
  std::vector<Split> tiles;  // cut into one tile per block: gemm m, n; attention l (query rows)
  std::vector<Split> steps;  // walked by each block in steps: gemm k; attention l (key columns)
  // A range of bytes along a dimension, in the question's dtype: at least `min_bytes`, at
  // most `max_bytes`, a multiple of `align_bytes` (each 0: no such bound).
  struct PathBound {
    std::string dim;               // "cols"
    std::int64_t max_bytes = 0;    // 65536
    std::int64_t align_bytes = 0;  // 16
    std::int64_t min_bytes = 0;    // 32784
  };
  // Where the instance leaves its own code for a fallback: outside such a range it runs
  // another kernel (the row-wise vec16 instances: rows over 64 KB, or not a whole number
  // of 16-byte vectors, run simt). Figures on either side of a bound are of different code.
  std::vector<PathBound> paths = {};
  // Where the instance runs at all; outside, it is no candidate, whatever its figures
  // elsewhere say. `limits`: the largest extent along a dimension (gemm.gemv: m up to 8);
  // `byte_limits`: a range of bytes (the cluster row kernels: rows over 32 KB, up to what
  // 16 CTAs hold, in whole 16-byte vectors); `multiples`: an extent it runs only in whole
  // multiples of, counted in elements or rows (a grouped tile of 256 rows: each group's m a
  // multiple of 256; D stored by TMA: n a multiple of 8).
  std::vector<Split> limits = {};
  std::vector<PathBound> byte_limits = {};
  std::vector<Split> multiples = {};
  // Blocks per tile (split K): each of `split` blocks walks its 1/split share of the steps, so
  // a tile is `split` blocks of ceil(steps / split) steps. 1: one block walks them all.
  // 0: the kernel splits the steps over as many blocks as fill the GPU (gemm.gemv's K split
  // until a few blocks per SM are busy), so every SM walks an even share of all the tiles'
  // steps: the work is ceil(tiles x steps / SMs).
  std::int64_t split = 1;
};

struct InstanceGeometry {
  std::string instance;
  Geometry geometry;
};

// Whether the geometry knows the instance's tiles (what wave_work needs); a geometry
// of path bounds alone moves figures by problem size.
inline bool has_waves(const Geometry& g) { return !g.tiles.empty(); }

// The bytes of one element of `dtype` ("bf16" 2, "fp32" 4, "e4m3" 1), 0 when unknown:
// op_shape.h's dtype_bytes, the one table of dtype sizes.
int element_bytes(std::string_view dtype);

// Whether an extent of `extent` elements of `element_bytes` keeps within bound `b`; true
// when either is unknown (<= 0). own_path() and runs_within() are this over a shape's
// dimensions, so a caller that keeps its own dimensions (kport-dispatch's lookup) applies
// the same rule.
bool within(const Geometry::PathBound& b, std::int64_t extent, int element_bytes);

// Whether `extent` is within a limit of `max` (Geometry::limits); true when either is <= 0.
inline bool within_limit(std::int64_t extent, std::int64_t max) { return max <= 0 || extent <= 0 || extent <= max; }

// Whether `extent` is a whole multiple of `multiple` (Geometry::multiples); true when either
// is <= 0 (a dimension the shape lacks, no multiple).
inline bool within_multiple(std::int64_t extent, std::int64_t multiple) {
  return multiple <= 0 || extent <= 0 || extent % multiple == 0;
}

// Whether the instance runs `s` at all by its limits, byte limits and multiples, for elements of
// `element_bytes` (0: unknown, byte limits limit nothing); a dimension the shape lacks
// limits nothing.
bool runs_within(const Geometry& g, const Shape& s, int element_bytes);

// Why the instance does not run `s` at all (runs_within() false), or "": "runs m up to 8,
// not 12", "runs cols of 32784 to 524288 bytes in multiples of 16, not 4096 (8192 bytes)".
std::string limit_reason(const Geometry& g, const Shape& s, int element_bytes);

// Whether the instance runs its own code at `s` (every path bound holds), for elements
// of `element_bytes`; true when that is 0 (unknown) or the shape lacks the bound's dim.
bool own_path(const Geometry& g, const Shape& s, int element_bytes);

// Whether each instance of `all` that has path bounds runs its own code at `s`, in
// `all`'s order: a shape's place on the instances' paths, computed once per shape.
std::vector<char> own_paths(std::span<const InstanceGeometry> all, const Shape& s, int element_bytes);

// How many instances take their own path at one shape and the fallback at the other,
// from the shapes' own_paths() over the same instances: a measured shape where none does
// (0) stands in for the asked one as a figure of the same code; the nearest-shape
// searches prefer the fewest, then the nearest.
int path_changes(const std::vector<char>& a, const std::vector<char>& b);
inline int path_changes(std::span<const InstanceGeometry> all, const Shape& a, const Shape& b, int element_bytes) {
  return path_changes(own_paths(all, a, element_bytes), own_paths(all, b, element_bytes));
}

// Which of an instance's published config keys give its geometry along one dimension of
// its family: the family's `geometry` declaration (docs/MANIFEST.md, `families`). Each role
// lists config keys, alternatives read in order (gemm's tile along m: "bm", else
// "block_m"); an empty list is a role not declared.
struct DimKeys {
  std::string dim;                                  // a dimension of the family: "m"
  std::vector<std::string> tile;                    // Geometry::tiles: the extent cut into one tile per block
  std::vector<std::string> step;                    // Geometry::steps: the extent each block walks in steps
  std::vector<std::string> split;                   // Geometry::split: blocks sharing one tile's steps (split-K)
  std::vector<std::string> max_bytes, align_bytes;  // a Geometry::PathBound on the dim
  std::vector<std::string> max = {};                // Geometry::limits: the largest extent it runs
  // Geometry::byte_limits: the fewest and most bytes it runs, and their multiple.
  std::vector<std::string> run_min_bytes = {}, run_max_bytes = {}, run_align_bytes = {};
  std::vector<std::string> run_multiple = {};  // Geometry::multiples: the extent's multiple it runs
  bool operator==(const DimKeys&) const = default;
};

// A dimension's roles by their declared names, in their documented order: the one list
// the manifest, the check of a declaration and its messages read.
inline constexpr std::pair<std::string_view, std::vector<std::string> DimKeys::*> k_dim_roles[] = {
    {"tile", &DimKeys::tile},
    {"step", &DimKeys::step},
    {"split", &DimKeys::split},
    {"max_bytes", &DimKeys::max_bytes},
    {"align_bytes", &DimKeys::align_bytes},
    {"max", &DimKeys::max},
    {"run_min_bytes", &DimKeys::run_min_bytes},
    {"run_max_bytes", &DimKeys::run_max_bytes},
    {"run_align_bytes", &DimKeys::run_align_bytes},
    {"run_multiple", &DimKeys::run_multiple}};

// The roles' names joined for a message: "tile, step, split, ..., run_multiple".
std::string dim_role_names();
struct GeometryKeys {
  std::vector<DimKeys> dims;  // as declared; none: the family declares no geometry
  bool empty() const { return dims.empty(); }
  bool operator==(const GeometryKeys&) const = default;
};

// What is wrong with a declaration for a family of dimensions `dims`, if anything: `key`
// is the place within the declaration ("rowz", "k.split") and `what` says why, for the
// reader to prefix with where the declaration came from. A dimension the family lacks or
// named twice, a dimension declaring no role, a config key that is not letters, digits
// and '_' (1 to 64), more than 8 alternatives, a split without a step on its dimension,
// or splits on two dimensions.
struct GeometryProblem {
  std::string key, what;
};
std::optional<GeometryProblem> geometry_problem(const GeometryKeys& keys, const std::vector<std::string>& dims);

// An instance's geometry read from its published configuration by its family's declared
// `keys`: `config(key)` is the config's integer value of `key`, nullopt when absent or not
// an integer. The tiles and steps when every declared tile and step key has a value > 0
// (one missing: none of them, never a guess), with the split when its key is > 0 (0: the
// kernel fills the GPU, Geometry::split); the limits whose max key is > 0; the
// path bounds whose max_bytes or align_bytes key is > 0 and the byte limits whose run_*
// key is > 0. nullopt when that leaves no tiles, path bounds, limits or byte limits, and
// for a family that declares nothing: its instances move by
// problem size. A geometry that names a dimension a shape lacks gives no wave work there
// (wave_work() is 0).
std::optional<Geometry> geometry_from_config(
    const GeometryKeys& keys, const std::function<std::optional<std::int64_t>(std::string_view)>& config);

// The work above, in SM steps; 0 when the shape lacks a dimension the geometry names or
// a dimension is 0. `sm_count` > 0. A dimension neither tiled nor stepped multiplies the
// blocks unless the family's `rules` say it must match exactly (a mode, not an extent) or
// that it bounds another (ShapeRules::Cap: the masked layout's `valid` rows of a group);
// a bounded dimension counts at its bound (ShapeRules::extent: min(m, valid)).
double wave_work(const Geometry& g, const Shape& s, int sm_count, const ShapeRules& rules);

// The same arithmetic over plain values, for a caller that keeps its own dimensions
// (kport-dispatch's lookup tables): `tiled` and `stepped` as {extent, tile} in the
// geometry's order, `others` the extents that multiply the blocks in key order, `split`
// Geometry::split (0: fills the GPU). 0 when an extent is <= 0, `sm_count` <= 0 or `split` < 0.
// wave_work() is this over a
// Shape, so both give the very same double.
using Extent = std::array<std::int64_t, 2>;  // {extent, tile or step}
double wave_work(std::span<const Extent> tiled, std::span<const Extent> stepped, std::span<const std::int64_t> others,
                 int sm_count, std::int64_t split = 1);

// The product of the dimensions that need not match exactly under the family's `rules`,
// each at its bound and a bounding one left out, as wave_work() counts them (0 when one is 0).
double problem_size(const Shape& s, const ShapeRules& rules);

// `from_us`, measured at `from`, moved to `to`: scaled by the geometry's wave work when
// `g` is given with its tiles (has_waves) and `sm_count` > 0, else by problem_size(). Returns from_us when a work
// figure is 0 (nothing to scale by). The same as
// scale_by_work(from_us, estimate_work(g, .., from, ..), estimate_work(g, .., to, ..)).
double estimate_at(const Geometry* g, int sm_count, const Shape& from, double from_us, const Shape& to,
                   const ShapeRules& rules);
// What estimate_at() scales by at one shape: wave_work() when `g` has its tiles and
// `sm_count` > 0, else problem_size(). A caller that moves one figure to many shapes
// computes its work at the measured shape once.
double estimate_work(const Geometry* g, int sm_count, const Shape& s, const ShapeRules& rules);
// `from_us` scaled by to_work / from_work; from_us when either is 0 or less.
inline double scale_by_work(double from_us, double from_work, double to_work) {
  if (from_work <= 0 || to_work <= 0) return from_us;
  return from_us * (to_work / from_work);
}

// The geometry of `instance` in `all`, or nullptr.
const Geometry* find_geometry(std::span<const InstanceGeometry> all, std::string_view instance);

}  // namespace kport::porting
