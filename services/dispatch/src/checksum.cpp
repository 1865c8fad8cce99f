#include "checksum.h"

namespace kport::dispatch::detail {

std::uint64_t fnv1a64_masked(std::string_view text, std::size_t digits_at) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool masked = i >= digits_at && i < digits_at + k_checksum_zero.size();
    h ^= static_cast<unsigned char>(masked ? '0' : text[i]);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex16(std::uint64_t v) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = k_digits[v & 0xf];
  return out;
}

std::optional<std::size_t> find_checksum_digits(std::string_view text) noexcept {
  std::size_t at = text.find(k_checksum_marker);
  if (at == std::string_view::npos) return std::nullopt;
  // A JSON string cannot hold an unescaped quote, so the marker appears only as the key.
  if (text.find(k_checksum_marker, at + 1) != std::string_view::npos) return std::string_view::npos;
  std::size_t digits = at + k_checksum_marker.size();
  if (text.size() < digits + 17 || text[digits + 16] != '"') return std::string_view::npos;
  for (std::size_t i = digits; i < digits + 16; ++i) {
    char c = text[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::string_view::npos;
  }
  return digits;
}

}  // namespace kport::dispatch::detail
