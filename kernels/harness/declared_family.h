// The harness's side of the families a library declares (kport/kernels/family_def.h): their
// shapes, element counts, effective grids and tolerances (with the library's overrides), and
// the check of every registered def, override and instance before a command runs. Host-only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json_out.h"
#include "kport/kernels/family_def.h"

namespace kport::harness {

struct Shape;

// Index of the dim named `name` in def.dims, or -1.
int dim_index(const kport::kernels::FamilyDef& def, std::string_view name);
// Elements of tensor `i` (the product of its extent's dims) for the shape's dims.
double tensor_elements(const kport::kernels::FamilyDef& def, std::size_t i, const std::vector<long long>& dims);
// The dtype tensor `i` holds in a case of `dtype`.
kport::kernels::DType tensor_dtype(const kport::kernels::FamilyDef& def, std::size_t i, kport::kernels::DType dtype);

// Parses "rows=4096,cols=8192" for the declared family: every dim once (one with a default
// may be left out), integers within the dim's range, and every tensor at most 4e10
// elements. Errors are `bad_shape`, as for kport's families.
std::optional<HarnessError> parse_declared_shape(const kport::kernels::FamilyDef& def, const std::string& text,
                                                 Shape& out);

// The override registered for the family named `family`, or nullptr.
const kport::kernels::FamilyOverride* find_override(std::string_view family);

// Checks every registered FamilyDef and FamilyOverride, and each instance of `instances`
// whose family is declared: names, dims, tensors, grids that parse, instance dtypes among the
// family's. nullopt when all are sound; otherwise error `bad_family` (exit 4: the harness was
// built wrong, no argument can fix it) naming the family and what to change.
std::optional<HarnessError> check_declared_families(const std::vector<const kport::kernels::Instance*>& instances);

// A declared family as `list` prints it: name, description, dims, dtypes, tensors, whether
// FLOPs are counted, the tolerances and both grids in effect.
Json family_json(const kport::kernels::FamilyDef& def);

}  // namespace kport::harness
