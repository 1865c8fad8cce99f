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

  // Distance between two shapes of one family: the sum over dimensions of
  // weight * |ln(a/b)|, so 4096 vs 8192 counts as much as 512 vs 1024, plus a penalty for
  // each extent that is aligned on one side only: 1 for a whole number of tiles (m, n, k:
  // 128; l: 64), where kernels' edge paths change which is fastest, and 2 for a multiple
  // of 8 elements (m, n, k, cols), below which 16-byte kernels refuse. Weights: row length
  // `cols` 2, batch and heads 0.5, the rest 1. Shapes that differ in their keys, or in a
  // dimension that must match exactly (head dim `d`, `causal`), are incomparable: the
  // distance is infinity.
  double distance(const Shape& other) const;

  // One dimension's term of distance(): 0 when a == b; weight * |ln(a/b)| plus the
  // alignment penalties otherwise, or infinity when `key` must match exactly or either
  // value is 0. distance() is the sum of these
  // over the (sorted) keys, in key order, so a caller that keeps its own dimensions
  // (kport-dispatch's lookup tables) sums the very same terms.
  static double dim_distance(std::string_view key, std::int64_t a, std::int64_t b);
  // Whether a dimension changes which code runs (head dim `d`, `causal`): measurements at
  // another value of it never stand in.
  static bool must_match_exactly(std::string_view key);
  // The rule of one dimension's term: its weight on |ln(a/b)| and the alignments across
  // which the term adds a penalty. dim_distance() applies it; kport-dispatch keeps it per
  // table so that its fast pass sums the same terms.
  struct Alignment {
    std::int64_t quantum;
    double penalty;  // added when exactly one of the two values is a multiple of quantum
  };
  struct DimRule {
    double weight = 1.0;
    std::vector<Alignment> alignments;
  };
  static const DimRule& dim_rule(std::string_view key);  // static storage: never allocates

  friend bool operator==(const Shape& a, const Shape& b) { return a.m_dims == b.m_dims; }

 private:
  std::vector<Dim> m_dims;
};

}  // namespace kport::porting
