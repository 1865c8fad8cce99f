// The snapshot's checksum: FNV-1a 64 over the document's bytes (trailing whitespace
// aside) with the 16 hex digits of its "checksum" value read as zeros. It catches truncation and edits (a figure
// changed by hand, a file mangled in transit); it is not a signature.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kport::dispatch::detail {

inline constexpr std::string_view k_checksum_marker = "\"checksum\":\"fnv1a64:";
inline constexpr std::string_view k_checksum_zero = "0000000000000000";

// Hash of `text` with the 16 bytes at digits_at read as '0'.
std::uint64_t fnv1a64_masked(std::string_view text, std::size_t digits_at) noexcept;
std::string hex16(std::uint64_t v);
// Where the checksum's 16 digits start: nullopt when the marker is absent; npos when it
// appears more than once or is not followed by 16 hex digits and a quote.
std::optional<std::size_t> find_checksum_digits(std::string_view text) noexcept;

}  // namespace kport::dispatch::detail
