// Best-kernel selection: for (GPU model, op family, dtype, shape), which instance to
// use, how sure we are, and the evidence.
//
// Rules (docs/DESIGN.md, "Best kernel per GPU"):
//  - Current evidence only. Per (GPU model, instance, shape) the figure that counts is
//    the latest result of the newest commit measured there (current_figures()): a
//    re-measure replaces the first figure, and an instance whose current result did
//    not pass (failed, crashed, timeout, unsupported, or passed but was not timed) is
//    out of the ranking, listed under `excluded` with the reason.
//  - Among the rest, the fastest by median. Instances within measured noise of the best
//    tie (is_tie()). A figure flagged unstable never wins a tie: when it is within noise
//    of a stable figure, the stable one ranks first, and a note says so.
//  - The query shape maps to the nearest measured shape (Shape::distance); the answer
//    says whether the match was exact. From another shape, each instance's figure there
//    is moved to the asked shape (estimate_at(), wave_model.h: its waves of tiles over
//    the GPU's SMs when its geometry and the SM count are known) and the estimates rank.
//    When estimates tie with the best, the nearest other timed shape on the same code
//    paths, at most k_tie_reach times as far from the asked shape as the matched one,
//    where the tied instances were all timed and do not all tie (their figures there
//    moved to the asked shape) decides which of them ranks first, and a note says so: a
//    tie at the nearest shape is no evidence for either, and the next shape often is
//    (leaving each of the H200's measured shapes out in turn and answering it from the
//    others, 25 of 371 answers were over 5 % slower than the fastest, 31 without the
//    tie-break). A shape farther off says less than the tie: fp32 gemm at 3000^3, matched
//    to 5000^3, where the two simt tiles tied, was broken by 1000^3 towards the tile
//    6.8 % slower.
//  - With no comparable measurement on that GPU model the answer is *provisional*: the
//    caller's candidates (provisional_candidates(): instances that build for the GPU's
//    target and run the dtype) ranked by their ratio to the vendor baseline on the
//    nearest measured arch, never by raw time, since another GPU's microseconds say
//    nothing about this one's. With no such evidence at all the answer is *unranked*:
//    the candidates, and no best.
//  - Every answer carries its evidence: result ids, commits, drivers (and the drivers of
//    other results present there), sample counts, dates.
// Pure functions over the rows given: no I/O, thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/result.h"
#include "kport/porting/shape.h"
#include "kport/porting/wave_model.h"

namespace kport::porting {

struct Measurement {  // one result of an instance on a GPU model, any status
  std::int64_t result_id = 0;
  std::string instance;   // "gemm.wgmma_tma.128x256x64_s4"
  std::string variant;    // "wgmma_tma"
  std::string target;     // "sm_90a"
  std::string gpu_model;  // "NVIDIA H200"
  std::string arch;       // "9.0"
  std::string driver;     // "580.65.06"
  std::string commit;
  // Orders commits: the commit's time where known, else the result's arrival.
  std::int64_t commit_ms = 0;
  std::string status = "passed";  // passed, failed, crashed, timeout, unsupported
  Shape shape;
  double median_us = 0;  // 0: not timed
  double stddev_us = 0;
  std::int64_t samples = 0;
  std::optional<double> ratio;  // vendor baseline median / median: > 1 is faster than the baseline
  bool unstable = false;        // its bench rounds disagreed beyond the measured noise
  std::int64_t runs = 1;        // results of its commit behind it (> 1: re-measured)
  std::int64_t measured_at_ms = 0;
  std::string gpu_uuid;     // the GPU that measured it ("" when unknown)
  double sm_clock_mhz = 0;  // the SM clock it was timed at (0: unknown)

  bool ranks() const { return status == "passed" && median_us > 0; }
};

struct BuildCandidate {  // an instance that may be recommended for the query's target
  std::string instance;
  std::string variant;
};

struct SelectionQuery {
  std::string gpu_model;  // may be a model never seen (then only provisional answers)
  std::string arch;       // "10.0"; needed for provisional ranking
  std::string target;     // "sm_100a"
  Shape shape;
  std::string dtype;  // for the words of the answer
};

struct DriverSeen {  // a driver that results of (GPU model, family, dtype) came from
  std::string gpu_model;
  std::string driver;
};

struct SelectionInputs {
  // Results on query.gpu_model for the family and dtype, any status; several per
  // instance and shape are reduced by current_figures().
  std::span<const Measurement> on_gpu = {};
  // The same from other GPU models (used only for provisional answers).
  std::span<const Measurement> elsewhere = {};
  // Provisional candidates and where they come from ("build for sm_90a"); see
  // provisional_candidates(). Unused when the GPU model has comparable measurements.
  std::span<const BuildCandidate> candidates = {};
  std::string candidates_basis = {};
  std::span<const std::string> candidates_missing = {};  // Candidates::without_instances
  // Drivers present per GPU model, so the answer can name those it did not use.
  std::span<const DriverSeen> drivers = {};
  // The GPU model's SM count (0: unknown) and the instances' geometries: with both, an
  // answer from another shape ranks each instance by its figure moved to the asked shape
  // by its waves of tiles (wave_model.h); without, by problem size, as measured there.
  int sm_count = 0;
  std::span<const InstanceGeometry> geometry = {};
  // The family's dimension rules (OpFamily::shape_rules()): which dimensions must match
  // exactly and how far apart two shapes are. Not owned; null: every dimension plain.
  const ShapeRules* rules = nullptr;
};

struct Ranked {
  std::string instance;
  std::string variant;
  // Absent (null) for a candidate never measured. Shared, never copied, where the
  // inputs are held by a shared owner (PreparedSelection): an answer from another shape
  // is ranked per request.
  std::shared_ptr<const Measurement> evidence;
  bool tie_with_best = false;
  // Measured: median / best median. Provisional: best ratio / ratio (how much further
  // from the vendor baseline). 1.0 for the best and for unmeasured candidates.
  double slowdown = 1.0;
  bool ranked = false;  // placed by evidence (false: listed after the ranked ones)
  // A measured answer from another shape: the evidence's median moved to the asked shape
  // (estimate_at()), what the ranking ordered by.
  std::optional<double> estimate_us = std::nullopt;
};

struct Excluded {  // an instance whose current result rules it out
  std::string instance;
  std::string variant;
  Measurement evidence;
  std::string reason;  // "failed numerics on commit 1a2b3c4 (result 17)"
};

struct Evidence {                          // where the ranked figures come from
  std::vector<std::string> commits;        // newest first; the first is the best's commit
  std::vector<std::string> drivers;        // drivers of the ranked figures, the best's first
  std::vector<std::string> other_drivers;  // drivers of other results on that GPU model
  std::vector<std::int64_t> result_ids;
  std::int64_t samples = 0;  // over the ranked figures
  std::int64_t newest_ms = 0, oldest_ms = 0;
};

// How well answers from another shape have done on this GPU model: every measured
// shape of the family and dtype with at least two timed instances is answered from its
// nearest *other* measured shape, by the same method as the answer (the best estimate
// moved from there), and that instance's time at the shape itself is compared with the
// shape's fastest. The regret t(answer)/t(fastest)
// - 1 over those shapes says how far a nearest-shape answer has been off, calibrated on
// this GPU's own measurements.
struct NeighbourRegret {
  int shapes = 0;  // shapes scored (their neighbour's winner was timed there too)
  double median = 0, p90 = 0, max = 0;
  // Where the worst one was: the measured shape and the nearest other it was answered from
  // (canonical texts), so a reader sees which part of the grid the method serves worst.
  std::string worst_shape = {}, worst_from = {};
};

struct Selection {
  enum class Kind { measured, provisional, unranked };
  Kind kind = Kind::unranked;
  std::string reason;              // why provisional or unranked; empty for a plain measured answer
  std::vector<std::string> notes;  // unstable figures, other drivers, mixed commits
  std::string ranked_by;  // "median_us", "estimate_us" (from another shape), "ratio_to_baseline" or "" (unranked)
  std::string candidates_basis;  // provisional and unranked: where the candidates came from
  std::optional<Shape> matched_shape;
  bool exact_shape = false;
  double shape_distance = 0;  // Shape::distance of the query to matched_shape
  // How a measured answer ranked: "measured_shape" (figures at the asked shape),
  // "wave_model" (figures at matched_shape moved by the instances' waves of tiles) or
  // "problem_size" (moved by the problem's size: as ranked at matched_shape). Empty for
  // provisional and unranked answers.
  std::string method;
  // A measured answer from another shape: how nearest-shape answers fared on this GPU
  // model (nullopt when fewer than two shapes could be scored).
  std::optional<NeighbourRegret> nearest_shape_regret;
  std::string evidence_gpu_model;  // whose measurements ranked the answer
  std::string evidence_arch;
  Evidence evidence;
  std::vector<Ranked> ranking;  // best first
  std::vector<Excluded> excluded;

  // The recommended instance: the first ranked entry; none for an unranked answer.
  const Ranked* best() const;
};

const char* kind_name(Selection::Kind k);

// Two medians tie when they differ by no more than the larger of 1% of the faster
// one and twice their combined standard deviation: run-to-run noise on a GPU is a
// percent or so even when one run's spread is tighter.
bool is_tie(const Measurement& best, const Measurement& other);
// How far a tie-break may look (above): shapes at most this many times the matched
// shape's distance from the asked one. On the H200's figures (2026-12-03), answering each
// measured shape from the others, a reach of 2 left as few answers over 5 % regret as an
// unbounded one (25 of 371 against 31 without a tie-break), and on 79 seeded shapes
// outside the grids it kept the worst at 2.1 % where the unbounded one named the 6.8 %.
inline constexpr double k_tie_reach = 2.0;
// The same test on any cost with its noise in the same unit (an estimate and its
// spread): what ranks ties, for a caller that ranks without Measurements (kport-dispatch).
bool costs_tie(double a, double a_noise, double b, double b_noise);

// The figure that counts per (GPU model, instance, shape): the row with the largest
// (commit_ms, result_id), i.e. the latest result of the newest commit. The store's
// best_candidates summary keeps the same rule incrementally (migration 0008).
std::vector<Measurement> current_figures(std::span<const Measurement> rows);

Selection select_best(const SelectionQuery& query, const SelectionInputs& inputs);

// The nearest-shape rule select_best applies to the shapes it may answer from: a shape
// at distance `d` (Shape::distance to the query) with canonical text `canonical` is
// preferred to the one chosen so far (at `best_d`, `best_canonical`; none yet: infinity
// and empty) when it is nearer, or as near and the larger problem (greater canonical
// text), the one the GPU is full on. An infinite distance is never preferred.
bool prefer_shape(double d, std::string_view canonical, double best_d, std::string_view best_canonical);

// The same rule with the instances' code paths first (wave_model.h path_changes): a
// shape where fewer instances run other code than at the query is preferred however far
// it is, so a figure of an instance's fallback never stands in for its own kernel while
// a shape on the same paths was measured; among equals, prefer_shape.
bool prefer_match(int changes, double d, std::string_view canonical, int best_changes, double best_d,
                  std::string_view best_canonical);

// ---- the words of a measured answer ---------------------------------------------------
// One home each: select_best writes its notes and reason by these, and so does a writer
// that keeps the rest of an answer serialized (PreparedSelection::moved()).

// What the ranking did with an unstable best figure (a note either way): `moved` the
// first stable figure within noise of it ahead of it, or `kept` it first (faster than
// every stable figure beyond the noise).
enum class UnstableBest { none, moved, kept };
// The note: `unstable` the unstable best's instance, `stable` the one moved ahead (moved only).
std::string unstable_note(UnstableBest how, std::string_view unstable, std::string_view stable);
// The note on ranked figures from `commits` (> 1) commits, the best's first.
std::string commits_note(std::string_view gpu_model, std::size_t commits, std::string_view best_commit);
// The note on drivers: `used`, the ranked figures' (the best's first), and `other`, those of
// other results on the GPU model; empty when there is nothing to say (one driver, no other).
std::string drivers_note(std::string_view gpu_model, std::span<const std::string_view> used,
                         std::span<const std::string_view> other);
// The note on ranked figures measured on more than one GPU of the model (by their
// gpu_uuid; those without one are not counted): each GPU with its figures and the SM
// clocks they were timed at, since two GPUs of one model can differ beyond a figure's
// noise. Empty for one GPU. The GPUs in the order of their UUIDs, so the note is the
// same set's whatever the ranking's order.
std::string gpus_note(std::string_view gpu_model, std::span<const Measurement* const> ranked);
// The note on a tie broken by another measured shape: the best estimates tied within noise,
// and `first`, the fastest of them at `shape`, ranks first.
std::string tie_note(std::string_view first, std::string_view shape);
// The reason of a measured answer from another shape: before + the asked shape's
// canonical text + after (how its figures were moved: Selection::method, over `sm_count` SMs).
struct StandInNote {
  std::string before, after;
};
StandInNote stand_in_note(std::string_view matched, std::string_view method, int sm_count);

// ---- provisional candidates ----------------------------------------------------------

struct InstanceInfo {  // a published kernel instance
  std::string name, family, variant;
  std::vector<std::string> features;               // the features its variant needs
  std::optional<std::vector<std::string>> dtypes;  // nullopt: not reported
};

struct VariantFeatures {
  std::string variant;
  std::vector<std::string> features;
};

struct CandidateQuery {
  std::string family, dtype;
  std::string target;                        // "sm_100a"
  std::vector<std::string> target_features;  // the catalog's features of target
  // Whether the target has any build record of the family; if so the candidates are
  // the instances of `built_variants` (latest build record ok), else of the variants
  // the planner says apply to the target.
  bool has_build = false;
  std::vector<std::string> built_variants = {};
  // Instances with a passing result of `dtype` on some GPU: they run it even when their
  // publisher did not list dtypes.
  std::vector<std::string> ran_dtype = {};
  // Variants of the family known with their features, whether or not any of their
  // instances is known (a harness lists the variants it left out, without instances).
  std::vector<VariantFeatures> variants = {};
};

struct Candidates {
  std::vector<BuildCandidate> list;  // by instance name
  std::string basis;                 // "build for sm_90a", "apply to sm_100a by its features"
  // Variants that apply to the target but have no known instance yet (their instances
  // are published by the first build that lists them): they cannot be recommended by
  // name, and the answer says so.
  std::vector<std::string> without_instances;
};

// The instances a provisional answer may rank: those that build for the target (or,
// before its first build, whose variant the planner says applies to it) AND run the
// dtype. Errors: not_found when no instance of the family is known; unprocessable when
// no instance of the family runs the dtype (the message lists those it runs) or none of
// the target's candidates does.
Result<Candidates> provisional_candidates(const CandidateQuery& query, std::span<const InstanceInfo> instances);

}  // namespace kport::porting
