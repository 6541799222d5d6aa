// The shared quoting of file text in error messages (engine/quote.hpp).
#include <doctest/doctest.h>

#include <string>

#include "engine/quote.hpp"

using namespace memgrad;

TEST_CASE("quote: printable ASCII as is, everything else escaped") {
  CHECK(quote("kitchen") == "'kitchen'");
  CHECK(quote("") == "''");
  CHECK(quote(std::string("a\0b", 3)) == "'a\\x00b'");
  CHECK(quote("\x1b[2J\x7f") == "'\\x1b[2J\\x7f'");             // terminal escape, DEL
  CHECK(quote("caf\xc3\xa9 \xe9") == "'caf\\xc3\\xa9 \\xe9'");  // UTF-8 and Latin-1 alike
  CHECK(quote("a\\x41") == "'a\\\\x41'");  // a backslash is doubled: \x41 in the file stays visible
  CHECK(escape("tab\there") == "tab\\x09here");
}

TEST_CASE("quote: long values are cut at 60 characters and say their length") {
  const std::string big(5 * 1024 * 1024, 'x');
  const std::string q = quote(big);
  CHECK(q == "'" + std::string(60, 'x') + "...' (5242880 bytes)");
  CHECK(quote(std::string(60, 'y')) == "'" + std::string(60, 'y') + "'");  // exactly fits: not cut
  CHECK(quote(std::string(61, 'y')) == "'" + std::string(60, 'y') + "...' (61 bytes)");
  // An escape is never split: 15 of \x01 fill 60 characters, the 16th does not fit.
  std::string ones = "'";
  for (int i = 0; i < 15; ++i) ones += "\\x01";
  ones += "...' (16 bytes)";
  CHECK(quote(std::string(16, '\x01')) == ones);
  CHECK(escape(big, 10) == "xxxxxxxxxx...");
  CHECK(quote("abcdef", 3) == "'abc...' (6 bytes)");
}

TEST_CASE("show: ordinary values bare, anything else quoted") {
  CHECK(show("I64") == "I64");
  CHECK(show("\"adam\"") == "\"adam\"");
  CHECK(show("a b") == "a b");
  CHECK(show("I6\x1b") == "'I6\\x1b'");
  CHECK(show("a\\b") == "'a\\\\b'");
  CHECK(show(std::string(61, 'z')) == "'" + std::string(60, 'z') + "...' (61 bytes)");
}
