// Problem shapes as kport names them: "m=4096,n=4096,k=4096" for gemm,
// "b=4,h=16,l=4096,d=128,causal=1" for attention, "rows=32768,cols=4096" for the
// row-wise families. A Shape keeps its dimensions sorted by key, so two spellings of
// one shape compare equal and print the same canonical string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kport/common/result.h"

namespace kport::porting {

class ShapeRules;

class Shape {
 public:
  using Dim = std::pair<std::string, std::int64_t>;

  // Parses "key=value,..." with non-negative integer values and unique lowercase keys.
  // Errors (invalid_argument) name the offending part.
  static Result<Shape> parse(std::string_view text);

  const std::vector<Dim>& dims() const { return m_dims; }
  // The value of `key`, or -1 when the shape has no such dimension.
  std::int64_t get(std::string_view key) const;
  std::string canonical() const;

  // The rule of one dimension's term in distance(): its weight on |ln(a/b)|, the
  // alignments across which the term adds a penalty, or that it must match exactly (a
  // value that changes which code runs, attention's head dim: a measurement at another
  // value never stands in). A family declares them per dimension (docs/MANIFEST.md,
  // `dims`); a dimension it declares nothing for is plain: weight 1, no alignments.
  struct Alignment {
    std::int64_t quantum;
    double penalty;  // added when exactly one of the two values is a multiple of quantum
    bool operator==(const Alignment&) const = default;
  };
  struct DimRule {
    double weight = 1.0;
    std::vector<Alignment> alignments = {};
    bool exact = false;
    bool operator==(const DimRule&) const = default;
  };

  // Distance between two shapes of one family under its dimensions' `rules`
  // (ShapeRules, below): the sum over dimensions of weight * |ln(a/b)|, so 4096 vs 8192
  // counts as much as 512 vs 1024, plus each alignment's penalty where one value is a
  // multiple of its quantum and the other is not (kport's gemm: 1 across 128, the tiles'
  // edge paths, and 2 across 8 elements, below which 16-byte kernels refuse). Shapes that
  // differ in their keys, or in a dimension that must match exactly, are incomparable: the
  // distance is infinity.
  double distance(const Shape& other, const ShapeRules& rules) const;

  // One dimension's term of distance(): 0 when a == b; weight * |ln(a/b)| plus the
  // alignment penalties otherwise, or infinity when the rule is exact or either value is
  // 0. distance() is the sum of these over the (sorted) keys, in key order, so a caller
  // that keeps its own dimensions (kport-dispatch's lookup tables) sums the very same terms.
  static double dim_distance(const DimRule& rule, std::int64_t a, std::int64_t b);

  friend bool operator==(const Shape& a, const Shape& b) { return a.m_dims == b.m_dims; }

 private:
  std::vector<Dim> m_dims;
};

// A family's dimension rules by name (OpFamily::shape_rules()); a name it holds no rule
// for is plain. Immutable once made; rule() never allocates.
class ShapeRules {
 public:
  // A dimension that bounds another's extent: the family's `full_at` (op_shape.h OpDim),
  // the grouped gemms' `valid` rows of a group at most its `m`. A work estimate takes the
  // bounded dimension at the smaller of the two and the bounding one multiplies nothing;
  // distance() treats the bounding one by its own rule.
  struct Cap {
    std::string dim, bounds;
    bool operator==(const Cap&) const = default;
  };

  ShapeRules() = default;
  explicit ShapeRules(std::vector<std::pair<std::string, Shape::DimRule>> dims, std::vector<Cap> caps = {});

  const Shape::DimRule& rule(std::string_view key) const;
  bool exact(std::string_view key) const { return rule(key).exact; }
  double dim_distance(std::string_view key, std::int64_t a, std::int64_t b) const {
    return Shape::dim_distance(rule(key), a, b);
  }
  const std::vector<std::pair<std::string, Shape::DimRule>>& dims() const { return m_dims; }
  const std::vector<Cap>& caps() const { return m_caps; }
  // Whether `key` bounds another dimension (a Cap's `dim`).
  bool bounds_another(std::string_view key) const;
  // `s`'s value of `key` as a work estimate counts it: the smaller of it and each value of
  // `s` that bounds it; -1 when `s` lacks `key`.
  std::int64_t extent(const Shape& s, std::string_view key) const;
  bool operator==(const ShapeRules&) const = default;

 private:
  std::vector<std::pair<std::string, Shape::DimRule>> m_dims;  // only the declared ones
  std::vector<Cap> m_caps;
};

}  // namespace kport::porting
