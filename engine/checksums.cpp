#include "engine/checksums.hpp"

#include <filesystem>
#include <fstream>
#include <vector>

#include "engine/error.hpp"
#include "engine/quote.hpp"
#include "engine/sha256.hpp"

namespace memgrad {
namespace {

namespace fs = std::filesystem;
constexpr const char* kSumsName = "SHA256SUMS.txt";

bool is_hex_digest(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'F') c = char(c - 'A' + 'a');
  return s;
}

// The line of `sums` that lists `entry` (a path relative to the sums file's folder, '/'-separated):
// its digest and line number; line 0 when it is not listed.
std::pair<std::string, size_t> find_entry(const fs::path& sums, const std::string& entry) {
  std::ifstream in(sums, std::ios::binary);
  MG_CHECK(in.good(), sums.string(), ": cannot open");
  std::string text;
  for (size_t line = 1; std::getline(in, text); ++line) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) continue;
    // "<digest>  <path>" (text mode) or "<digest> *<path>" (binary mode).
    const std::string digest = text.substr(0, 64);
    MG_CHECK(is_hex_digest(digest) && text.size() > 66 && text[64] == ' ' &&
                 (text[65] == ' ' || text[65] == '*'),
             sums.string(), ":", line,
             ": not a sha256sum line ('<64 hex digits>  <path>'): ", quote(text));
    std::string path = text.substr(66);
    while (path.starts_with("./")) path.erase(0, 2);
    if (fs::path(path).lexically_normal().generic_string() == entry) return {lower(digest), line};
  }
  MG_CHECK(!in.bad(), sums.string(), ": read error");
  return {"", 0};
}

}  // namespace

std::string check_listed_sha256(const std::string& file, const std::string& top) {
  const fs::path f = fs::path(file).lexically_normal();
  fs::path root = fs::path(top).lexically_normal();
  if (!root.has_filename()) root = root.parent_path();  // "dir/" -> "dir"
  fs::path rel = f.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") {
    root = f.parent_path();
    rel = f.filename();
  }
  const std::vector<fs::path> parts(rel.begin(), rel.end());
  // Deepest folder first: parts[0..k) below root hold the file as parts[k..].
  for (size_t k = parts.size(); k-- > 0;) {
    fs::path folder = root;
    for (size_t i = 0; i < k; ++i) folder /= parts[i];
    const fs::path sums = folder / kSumsName;
    std::error_code ec;
    if (!fs::is_regular_file(sums, ec)) continue;
    fs::path entry;
    for (size_t i = k; i < parts.size(); ++i) entry /= parts[i];
    const std::string name = entry.generic_string();
    const auto [expected, line] = find_entry(sums, name);
    MG_CHECK(line > 0, file, ": not listed in ", sums.string(), " (as ", quote(name),
             "; every file of a data folder with a SHA256SUMS.txt must be)");
    const std::string got = sha256_file_hex(file);
    MG_CHECK(got == expected, file, ": SHA-256 differs from ", sums.string(), ":", line,
             " (expected ", expected, ", got ", got,
             "): the file is corrupt, truncated or edited; restore it from its source");
    return sums.string();
  }
  return "";
}

}  // namespace memgrad
