// How an op family counts its work, as its manifest states it (docs/MANIFEST.md,
// `families[].flops` and `.bytes`): a small arithmetic expression over the family's
// dimensions, such as "2*m*n*k" or "2*rows*cols*bytes_per_elem".
//
//   expr   := term (('+' | '-') term)*
//   term   := factor (('*' | '/') factor)*
//   factor := integer | name | ('min' | 'max') '(' expr ',' expr ')' | '(' expr ')'
//
// A name is one of the family's dimensions or `bytes_per_elem` (the bytes of one element
// of the dtype asked: 2 for bf16, 1 for e4m3); `min` and `max` followed by '(' are the
// smaller and the larger of two values (a grouped gemm's `min(m,valid)` rows per group).
// Spaces are ignored. Evaluation is in double precision; a missing name, a division by zero
// or a result that is not finite has no value.
//
// Values; thread-safe; the standard library only (part of kport::selection).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/result.h"

namespace kport::porting {

inline constexpr std::string_view k_bytes_per_elem = "bytes_per_elem";

class WorkExpr {
 public:
  // invalid_argument naming the column and what was expected ("at column 4: unknown
  // name 'q' (the names are m, n, k, bytes_per_elem)"); `names` are the dimensions.
  static Result<WorkExpr> parse(std::string_view text, const std::vector<std::string>& names);

  // The value with each name's value from `value` (nullopt: the name has none).
  std::optional<double> eval(const std::function<std::optional<double>(std::string_view)>& value) const;
  const std::string& text() const { return m_text; }

 private:
  struct Op {
    enum class Kind { number, name, add, sub, mul, div, min, max } kind = Kind::number;
    double number = 0;
    std::string name;
  };
  std::string m_text;
  std::vector<Op> m_program;  // postfix
  friend class WorkExprParser;
};

}  // namespace kport::porting
