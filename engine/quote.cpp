#include "engine/quote.hpp"

namespace memgrad {
namespace {

// Appends the escaped form of s to out, stopping before the piece that would pass max_chars;
// returns whether it stopped early.
bool escape_into(std::string_view s, size_t max_chars, std::string& out) {
  static const char* const kHex = "0123456789abcdef";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    char piece[4];
    size_t n = 0;
    if (c == '\\') {
      piece[n++] = '\\';
      piece[n++] = '\\';
    } else if (c >= 0x20 && c < 0x7f) {
      piece[n++] = char(c);
    } else {
      piece[n++] = '\\';
      piece[n++] = 'x';
      piece[n++] = kHex[c >> 4];
      piece[n++] = kHex[c & 15];
    }
    if (out.size() + n > max_chars) return true;
    out.append(piece, n);
  }
  return false;
}

}  // namespace

std::string escape(std::string_view s, size_t max_chars) {
  std::string out;
  if (escape_into(s, max_chars, out)) out += "...";
  return out;
}

std::string quote(std::string_view s, size_t max_chars) {
  std::string out = "'";
  const bool cut = escape_into(s, max_chars + 1, out);  // +1: the opening quote
  if (!cut) return out + "'";
  return out + "...' (" + std::to_string(s.size()) + " bytes)";
}

std::string show(std::string_view s, size_t max_chars) {
  if (s.size() > max_chars) return quote(s, max_chars);
  for (const char c : s)
    if (c < 0x20 || c >= 0x7f || c == '\\') return quote(s, max_chars);
  return std::string(s);
}

}  // namespace memgrad
