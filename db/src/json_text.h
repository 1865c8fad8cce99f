// Validation of the JSON text and shape strings the store accepts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kport/common/result.h"

namespace kport::db::detail {

// Returns text unchanged when it is one JSON document, `empty_as` when it is empty;
// invalid_argument naming `field` otherwise.
Result<std::string> json_text(std::string_view field, std::string_view text, std::string_view empty_as = "{}");

using Dims = std::vector<std::pair<std::string, std::int64_t>>;

// Parses a canonical shape "m=4096,n=4096,k=4096": non-empty names, non-negative
// integer values, names unique. invalid_argument otherwise.
Result<Dims> parse_shape(std::string_view shape);
std::string dims_to_json(const Dims& dims);
Dims dims_from_json(std::string_view json);

// JSON array of strings <-> vector (runner targets, drivers).
std::string strings_to_json(const std::vector<std::string>& items);
// The strings of a JSON array; non-string items and text that is not an array give {}.
std::vector<std::string> strings_from_json(std::string_view json);

}  // namespace kport::db::detail
