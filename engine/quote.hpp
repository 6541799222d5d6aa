// Text from a file or a setting, fit to show in an error message. Every loader and parser quotes
// the values it echoes with quote(), so that a binary file cannot garble the terminal (escape
// sequences, NUL) and a 5 MB cell cannot flood it.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace memgrad {

// How much of a value a message shows, in characters of its escaped form.
constexpr size_t kQuoteChars = 60;

// `s` with bytes outside printable ASCII (control characters, DEL, bytes >= 0x80) written \xNN
// and a backslash written \\; cut before the piece that would pass `max_chars` characters, with
// "..." after the cut.
std::string escape(std::string_view s, size_t max_chars = kQuoteChars);

// escape(s) in single quotes; a cut value also gives its full length:
//   quote("ab\x1b[2J")   -> 'ab\x1b[2J'
//   quote(5 MB of "x")   -> 'xxx...xxx...' (5242880 bytes)
std::string quote(std::string_view s, size_t max_chars = kQuoteChars);

// `s` as it is when it is printable ASCII (no backslash) of at most max_chars, quote(s)
// otherwise: for values that messages show bare when they are ordinary (a dtype, a JSON value
// such as 3 or "adam"), and that must still not flood or garble the terminal when they are not.
std::string show(std::string_view s, size_t max_chars = kQuoteChars);

}  // namespace memgrad
