// Whether bytes read from a text file are text: valid UTF-8 (plain ASCII included) without
// control characters. Loaders of text formats refuse anything else with the file, line and column,
// rather than turning NUL or Latin-1 bytes into tokens.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace memgrad {

// The offset of the first byte of `s` that is not text, or npos: a control character other than
// tab (NUL, ESC, CR, DEL, ...), or a byte that is not part of a valid UTF-8 sequence (a Latin-1
// 'é' is the lone byte 0xE9; overlong forms, surrogates and code points past U+10FFFF are refused
// too, as RFC 3629 says).
size_t first_non_text_byte(std::string_view s);

// What is wrong with the byte at `at` of s, for an error message:
//   "column 3: byte 0x00 (a control character)"
//   "column 7: byte 0xe9 (not UTF-8; a Latin-1 or Windows-1252 file?)"
// Columns count bytes from 1.
std::string describe_non_text_byte(std::string_view s, size_t at);

}  // namespace memgrad
