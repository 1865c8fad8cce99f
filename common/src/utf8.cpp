#include "kport/common/utf8.h"

namespace kport::utf8 {

namespace {

// The length of the well-formed sequence starting at s[i], or 0 when the bytes there
// are not one. The ranges of the second byte follow Table 3-7 of the Unicode standard,
// which is what rules out overlong forms, surrogates and values above U+10FFFF.
std::size_t sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c == 0xE0) {
    n = 3;
    lo = 0xA0;
  } else if (c >= 0xE1 && c <= 0xEC)
    n = 3;
  else if (c == 0xED) {
    n = 3;
    hi = 0x9F;
  } else if (c >= 0xEE && c <= 0xEF)
    n = 3;
  else if (c == 0xF0) {
    n = 4;
    lo = 0x90;
  } else if (c >= 0xF1 && c <= 0xF3)
    n = 4;
  else if (c == 0xF4) {
    n = 4;
    hi = 0x8F;
  } else
    return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

// How many bytes after a bad lead byte still belong to its maximal invalid subpart:
// continuation bytes that a valid sequence could have had there.
std::size_t invalid_subpart(std::string_view s, std::size_t i) noexcept {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t want = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 1;
  std::size_t k = 1;
  for (; k < want && i + k < s.size(); ++k) {
    // The longest prefix that could still start a valid sequence: check it by trying
    // the bytes so far padded with a neutral continuation.
    std::string probe(s.substr(i, k + 1));
    while (probe.size() < want) probe.push_back(static_cast<char>(0x80));
    if (sequence_length(probe, 0) == 0) break;
  }
  return k;
}

}  // namespace

bool valid(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string_view truncate(std::string_view s, std::size_t max_bytes) noexcept {
  if (s.size() <= max_bytes) return s;
  std::size_t cut = max_bytes;
  // Step back over continuation bytes to the lead byte of the character at the cut; that
  // character does not fit whole, so the cut goes before it.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

std::string sanitize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = sequence_length(s, i);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      i += invalid_subpart(s, i);
    }
  }
  return out;
}

std::string clip(std::string_view s, std::size_t max_bytes) { return std::string(truncate(sanitize(s), max_bytes)); }

}  // namespace kport::utf8
