// SHA-256 against the FIPS 180-4 examples and lengths around the padding boundary, and the check
// of data files against a folder's SHA256SUMS.txt.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "engine/checksums.hpp"
#include "engine/error.hpp"
#include "engine/sha256.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using memgrad::test::error_of;
using memgrad::test::TempDir;

TEST_CASE("sha256: known vectors") {
  // FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf").
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqkl"
            "mnopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths where the padding needs one or two blocks (from coreutils sha256sum).
  const std::pair<size_t, const char*> lengths[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"}};
  for (const auto& [n, digest] : lengths) {
    INFO(n, " bytes");
    CHECK(sha256_hex(std::string(n, 'a')) == digest);
  }
}

TEST_CASE("sha256: any split of the input into updates gives the same digest") {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += char(i * 7 + 3);
  const std::string whole = sha256_hex(text);
  for (size_t piece : {1, 3, 63, 64, 65, 200}) {
    Sha256 h;
    for (size_t at = 0; at < text.size(); at += piece)
      h.update(text.data() + at, std::min(piece, text.size() - at));
    CHECK(to_hex(h.finish()) == whole);
  }
  TempDir dir;
  CHECK(sha256_file_hex(dir.write("t.bin", text)) == whole);
  CHECK_THROWS_AS(sha256_file_hex((dir.path / "absent").string()), Error);
}

TEST_CASE("checksums: a data file must match its line of the folder's SHA256SUMS.txt") {
  TempDir dir;
  const std::string a = dir.write("data/sub/a.txt", "abc");
  const std::string b = dir.write("data/sub/b.txt", "abcd");
  const std::string top = (dir.path / "data").string();
  // No SHA256SUMS.txt anywhere: nothing to check.
  CHECK(check_listed_sha256(a, top) == "");
  const std::string sums =
      dir.write("data/SHA256SUMS.txt",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  ./sub/a.txt\n"
                "0000000000000000000000000000000000000000000000000000000000000000 *sub/b.txt\n");
  CHECK(check_listed_sha256(a, top) == sums);
  CHECK(check_listed_sha256(a, top + "/") == sums);
  const std::string e = error_of([&] { check_listed_sha256(b, top); });
  CHECK(e.find(b + ": SHA-256 differs from " + sums + ":2 (expected 0000") == 0);
  CHECK(e.find("got 88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589") !=
        std::string::npos);
  const std::string c = dir.write("data/sub/c.txt", "new");
  CHECK(error_of([&] { check_listed_sha256(c, top); }) ==
        c + ": not listed in " + sums +
            " (as 'sub/c.txt'; every file of a data folder with a SHA256SUMS.txt must be)");
  // The nearest SHA256SUMS.txt wins; folders above `top` are not searched.
  dir.write("data/sub/SHA256SUMS.txt",
            "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD  a.txt\n");
  CHECK(check_listed_sha256(a, top) == (dir.path / "data/sub/SHA256SUMS.txt").string());
  CHECK(check_listed_sha256(a, (dir.path / "data/sub").string()) ==
        (dir.path / "data/sub/SHA256SUMS.txt").string());
  const std::string outside = dir.write("elsewhere/a.txt", "abc");
  CHECK(check_listed_sha256(outside, top) == "");
  // A malformed line names itself.
  dir.write("data/sub/SHA256SUMS.txt", "abc a.txt\n");
  CHECK(error_of([&] { check_listed_sha256(a, top); }) ==
        (dir.path / "data/sub/SHA256SUMS.txt").string() +
            ":1: not a sha256sum line ('<64 hex digits>  <path>'): 'abc a.txt'");
}
