// The text check of loaders (engine/utf8.hpp): what a text file may hold.
#include <doctest/doctest.h>

#include <string>

#include "engine/utf8.hpp"

using namespace memgrad;

TEST_CASE("utf8: text is valid UTF-8 without control characters other than tab") {
  const auto npos = std::string_view::npos;
  CHECK(first_non_text_byte("1 Mary went to the kitchen.\tkitchen\t1") == npos);
  CHECK(first_non_text_byte("") == npos);
  CHECK(first_non_text_byte("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == npos);  // é € 😀
  CHECK(first_non_text_byte(std::string("ab\0c", 4)) == 2);                         // NUL
  CHECK(first_non_text_byte("ab\rc") == 2);                                         // bare CR
  CHECK(first_non_text_byte("a\x1b[2J") == 1);
  CHECK(first_non_text_byte("a\x7f") == 1);                // DEL
  CHECK(first_non_text_byte("caf\xe9") == 3);              // Latin-1 é
  CHECK(first_non_text_byte("\x80") == 0);                 // a continuation byte alone
  CHECK(first_non_text_byte("\xc3") == 0);                 // a sequence cut by the end
  CHECK(first_non_text_byte("\xc3x") == 0);                // ... or by an ASCII byte
  CHECK(first_non_text_byte("\xc0\xaf") == 0);             // overlong '/'
  CHECK(first_non_text_byte("\xe0\x80\xaf") == 0);         // overlong, 3 bytes
  CHECK(first_non_text_byte("\xed\xa0\x80") == 0);         // surrogate U+D800
  CHECK(first_non_text_byte("\xf4\x90\x80\x80") == 0);     // past U+10FFFF
  CHECK(first_non_text_byte("\xf4\x8f\xbf\xbf") == npos);  // U+10FFFF itself
  CHECK(first_non_text_byte("\xef\xbb\xbf") == npos);      // a byte order mark is text
  CHECK(describe_non_text_byte(std::string("ab\0", 3), 2) ==
        "column 3: byte 0x00 (a control character)");
  CHECK(describe_non_text_byte("caf\xe9", 3) ==
        "column 4: byte 0xe9 (not UTF-8; a Latin-1 or Windows-1252 file?)");
}
