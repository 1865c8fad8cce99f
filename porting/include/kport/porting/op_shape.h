// The op families a library declares (its manifest's `families`, docs/MANIFEST.md) as
// the services use them: which dimensions a family's shapes have, their ranges and the
// order the harness spells them in, the dtypes it runs, and how it counts its work. A
// shape the coordinator queues for measurement is one the family's harness accepts.
//
// No family is built in here: kport's own four (gemm, attention, rmsnorm, softmax) are
// declared by kernels/kport.json like any other library's, and the coordinator learns
// the rest from the builds that report them.
//
// Values and pure functions; thread-safe; the standard library only (kport::selection).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kport/common/result.h"
#include "kport/porting/shape.h"
#include "kport/porting/wave_model.h"
#include "kport/porting/work_expr.h"

namespace kport::porting {

inline constexpr std::int64_t k_max_dim = std::int64_t{1} << 30;  // the harness protocol's bound

// The dtypes a family may name, with the bytes of one element ("bf16" 2, "e4m3" 1).
struct DtypeSize {
  std::string_view name;
  int bytes = 0;
};
const std::vector<DtypeSize>& known_dtypes();
// The bytes of one element of `dtype`, 0 when it is not a known one ("fp8_e4m3", the
// harness's older spelling, is 1).
int dtype_bytes(std::string_view dtype);

// What limits a family's kernels: their figures are TFLOP/s (compute) or GB/s (memory).
enum class Bound { compute, memory };
const char* to_string(Bound b);
std::optional<Bound> parse_bound(std::string_view text);

struct OpDim {
  std::string name;
  std::optional<std::int64_t> default_value;  // an optional dimension (attention's causal)
  std::int64_t min = 1, max = k_max_dim;
  // How far apart two values of it are for the best-kernel query's nearest shape, or
  // that they must match exactly (the declaration's `exact`, `weight`, `align`).
  Shape::DimRule rule{};
  // The canonical text leaves the dimension out at its default (`omit_default`: a key added to
  // a family later, whose shapes written before it keep their text, as the grouped gemms'
  // `valid`). Needs a default.
  bool omit_default = false;
  // Another dimension whose value, given to this one, is the same case as the default, and
  // above which there is no case (`full_at`: the grouped gemms' `valid` rows of a group at
  // `m` are every row, the contiguous layout; more valid rows than rows is no layout). Needs
  // a default; empty: none.
  std::string full_at = {};
};

// What is wrong with a dimension's rule, if anything: `key` is the field within the
// dimension ("weight", "align[1].multiple") and `what` says why. An exact dimension with
// a weight or alignments, a weight outside (0, 100], more than 2 alignments (what
// kport-dispatch's lookup keeps per dimension), a multiple outside 2 .. 2^30 or given
// twice, a penalty outside 0 .. 100.
struct DimRuleProblem {
  std::string key, what;
};
std::optional<DimRuleProblem> dim_rule_problem(const Shape::DimRule& rule);

// A value a dimension must be a multiple of for any instance of the family to run a
// shape, part of the family's contract (gemm_fp8's K-contiguous fp8 rows, its 128-wide
// block scales): when every dimension of `when` has its value (always when empty). The
// declaration's `requires`.
struct ShapeRequirement {
  std::string dim;
  std::int64_t multiple = 0;
  std::vector<std::pair<std::string, std::int64_t>> when;
  std::string why;  // said with a refusal; may be empty
};

// What is wrong with a requirement, if anything: `key` is the field within it ("dim",
// "when.scale") and `what` says why. A dim the family lacks, a multiple outside
// 2 .. 2^30, a condition on a dim the family lacks or on the required dim itself, more
// than 4 conditions, a reason over 200 bytes.
struct RequirementProblem {
  std::string key, what;
};
std::optional<RequirementProblem> requirement_problem(const ShapeRequirement& r, std::span<const std::string> dims);

struct OpFamily {
  std::string name, description;
  std::vector<OpDim> dims;  // in the harness's order
  std::vector<std::string> dtypes;
  std::string flops, bytes;  // WorkExpr texts; empty: not stated
  std::optional<Bound> bound_hint;
  std::string example;                         // a shape to offer a user; empty: none stated
  GeometryKeys geometry;                       // which instance config keys tile which dims (wave_model.h); empty: none
  std::vector<ShapeRequirement> requirements;  // what a shape needs for any instance to run it
  std::string library, repo;                   // who declared it: the manifest's name, the repository ("" built in)

  // The hint, else memory when only `bytes` is stated, else compute.
  Bound bound() const;
  std::vector<std::string> dim_names() const;
  // The dims' rules by name, those that are not plain (Shape::distance's `rules`).
  ShapeRules shape_rules() const;
  // The family's work at `s` for `dtype`, from `flops` or `bytes` (a dimension `s` leaves
  // out at its default); nullopt when it is not stated or the shape lacks a name it uses that
  // has no default.
  std::optional<double> flops_at(const Shape& s, std::string_view dtype) const;
  std::optional<double> bytes_at(const Shape& s, std::string_view dtype) const;
};

// Whether `r` rules out a shape whose value of each dimension `value_of(name)` gives (-1
// when it has none: then nothing is ruled out by that dimension). The one rule, for
// unmet_requirement (which gives a dimension left out its default) and kport-dispatch's
// lookup, which reads its query's own values and allocates nothing.
template <typename ValueOf>
bool rules_out(const ShapeRequirement& r, ValueOf&& value_of) {
  const std::int64_t v = value_of(std::string_view(r.dim));
  if (v < 0 || v % r.multiple == 0) return false;
  for (const auto& [dim, value] : r.when)
    if (value_of(std::string_view(dim)) != value) return false;
  return true;
}

// The first of `f`'s requirements that the whole shape `s` (op_shape's) does not meet,
// said for a refusal ("k=100 is not a multiple of 128, which gemm_fp8 needs when scale=2:
// a block scale covers 128 K elements"); nullopt when no instance is ruled out by it.
std::optional<std::string> unmet_requirement(const OpFamily& f, const Shape& s);

// invalid_argument naming the field: a name that is not letters, digits and '_', no or
// repeated dims, a range that is empty or a default outside it, a dim's rule that does
// not hold (dim_rule_problem), an unknown or repeated
// dtype, an expression that does not parse, a geometry declaration that does not hold
// (wave_model.h geometry_problem), a requirement that does not hold (requirement_problem).
// What a manifest or a runner declares is
// checked with this before it is used.
Status check_family(const OpFamily& f);

// The families known at one time, in a stable order; a name once.
class FamilySet {
 public:
  FamilySet() = default;
  // Later entries of the same name replace earlier ones, keeping the first's place.
  explicit FamilySet(std::vector<OpFamily> families);

  const OpFamily* find(std::string_view name) const;
  const std::vector<OpFamily>& all() const { return m_families; }
  // "gemm, attention, rmsnorm, softmax"
  std::string names() const;
  // `name`'s family, else invalid_argument "op 'x' is not one of gemm, ..." (or "no op
  // family is known yet").
  Result<const OpFamily*> family(std::string_view name) const;

 private:
  std::vector<OpFamily> m_families;
};

struct OpShape {
  Shape shape;       // with defaults filled in (attention causal=0); canonical() sorts keys
  std::string text;  // the family's own order, as the harness prints it: "m=3000,n=3000,k=3000"
};

// Parses `text` as a shape of `family` and checks it against the family's dimensions.
// invalid_argument: the text is not key=value,... (Shape::parse) or a key is unknown,
// missing or out of range for the family; the message names the key and lists the
// family's keys.
Result<OpShape> op_shape(const OpFamily& family, std::string_view text);
// The same for the family named `family` in `known`; invalid_argument when it is none.
Result<OpShape> op_shape(const FamilySet& known, std::string_view family, std::string_view text);

}  // namespace kport::porting
