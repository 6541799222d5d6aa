#include "engine/utf8.hpp"

#include <cstdio>

namespace memgrad {
namespace {

bool is_control(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

// Length of the valid UTF-8 sequence of 2 to 4 bytes starting at s[i] (a byte >= 0x80), 0 when
// it is not one. Table 3-7 of the Unicode standard: the second byte's range depends on the first.
size_t sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;  // overlong
    if (c == 0xed) hi = 0x9f;  // surrogates U+D800..U+DFFF
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;  // overlong
    if (c == 0xf4) hi = 0x8f;  // past U+10FFFF
  } else {
    return 0;  // a continuation byte alone, 0xc0, 0xc1 or 0xf5..0xff
  }
  if (i + n > s.size() || b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(k) < 0x80 || b(k) > 0xbf) return 0;
  return n;
}

}  // namespace

size_t first_non_text_byte(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (is_control(c)) return i;
      ++i;
      continue;
    }
    const size_t n = sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string describe_non_text_byte(std::string_view s, size_t at) {
  const auto c = static_cast<unsigned char>(s[at]);
  char text[96];
  std::snprintf(text, sizeof text, "column %zu: byte 0x%02x (%s)", at + 1, unsigned(c),
                c < 0x80 ? "a control character" : "not UTF-8; a Latin-1 or Windows-1252 file?");
  return text;
}

}  // namespace memgrad
