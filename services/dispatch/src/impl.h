// What a loaded snapshot holds: per (op, dtype), shapes grouped by their key set
// ("layout"), timed shapes with their precomputed winner, and shapes measured without a
// ranking figure (the API's unranked answers). Flat arrays, so a lookup walks memory
// in order and allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kport/dispatch/dispatch.h"
#include "kport/porting/shape.h"

namespace kport::dispatch {

inline constexpr std::size_t k_max_dims = 16;
inline constexpr std::size_t k_max_alignments = 2;  // per dimension, as dim_rule gives them

struct Winner {
  std::string instance, variant;
  double median_us = 0, stddev_us = 0;
  bool tie = false, unstable = false;
  std::int64_t result_id = 0;
};

// Shapes of one key set; dims of shape j are values[j * keys.size() + i], keys sorted.
struct ShapeSet {
  std::vector<std::int64_t> values;
  std::vector<double> logs;  // ln(value), -inf for 0
  // Per value, bit k set when it is a multiple of its dimension's k-th alignment quantum
  // (porting::Shape::dim_rule); filled by finish_layout().
  std::vector<std::uint8_t> aligned;
  std::vector<std::string> canonical;
  std::size_t size() const { return canonical.size(); }
};

struct Layout {
  std::vector<std::string> keys;  // sorted, as porting::Shape keeps them
  std::vector<char> exact;        // porting::Shape::must_match_exactly(key)
  std::vector<porting::Shape::DimRule> rules;  // porting::Shape::dim_rule(key)
  // The same rules flattened for the fast pass: the weight on |ln a - ln b| and, indexed
  // by the XOR of two values' alignment bits, the penalty they add.
  std::vector<double> weight;
  std::vector<std::array<double, 4>> penalty;
  ShapeSet timed;                 // at least one ranking figure
  std::vector<Winner> winners;    // per timed shape
  ShapeSet untimed;               // figures, none ranking
};

// Alignment bits of `value` under `rule` (bit k: a multiple of its k-th quantum).
inline std::uint8_t alignment_bits(const porting::Shape::DimRule& rule, std::int64_t value) {
  std::uint8_t bits = 0;
  for (std::size_t k = 0; k < rule.alignments.size() && k < k_max_alignments; ++k)
    if (value % rule.alignments[k].quantum == 0) bits = static_cast<std::uint8_t>(bits | (1u << k));
  return bits;
}

class Snapshot::Table {
 public:
  std::string op, dtype;
  std::vector<Layout> layouts;
  TableInfo info;
};

struct Snapshot::Impl {
  std::string gpu_model, arch;
  std::int64_t generated_at_ms = 0;
  std::vector<std::string> commits, drivers;
  std::vector<std::unique_ptr<Snapshot::Table>> tables;
};

}  // namespace kport::dispatch
