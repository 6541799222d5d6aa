#include "engine/checksums.hpp"

#include <filesystem>
#include <fstream>
#include <map>
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

// Every entry of `sums` (paths relative to its folder, '/'-separated and normalised): digest and
// line number.
std::map<std::string, std::pair<std::string, size_t>> read_sums(const fs::path& sums) {
  std::ifstream in(sums, std::ios::binary);
  MG_CHECK(in.good(), sums.string(), ": cannot open");
  std::map<std::string, std::pair<std::string, size_t>> entries;
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
    // The first line listing a path is the one that counts.
    entries.emplace(fs::path(path).lexically_normal().generic_string(),
                    std::pair{lower(digest), line});
  }
  MG_CHECK(!in.bad(), sums.string(), ": read error");
  return entries;
}

void check_digest(const std::string& file, const std::string& got, const ListedDigest& listed) {
  MG_CHECK(got == listed.digest, file, ": SHA-256 differs from ", listed.sums, ":", listed.line,
           " (expected ", listed.digest, ", got ", got,
           "): the file is corrupt, truncated or edited; restore it from its source");
}

}  // namespace

ListedDigest Sha256Sums::find(const std::string& file) {
  const fs::path f = fs::path(file).lexically_normal();
  fs::path root = fs::path(top_).lexically_normal();
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
    auto it = parsed_.find(sums.string());
    if (it == parsed_.end()) {
      std::error_code ec;
      if (!fs::is_regular_file(sums, ec)) continue;
      it = parsed_.emplace(sums.string(), read_sums(sums)).first;
    }
    fs::path entry;
    for (size_t i = k; i < parts.size(); ++i) entry /= parts[i];
    const std::string name = entry.generic_string();
    const auto listed = it->second.find(name);
    MG_CHECK(listed != it->second.end(), file, ": not listed in ", sums.string(), " (as ",
             quote(name), "; every file of a data folder with a SHA256SUMS.txt must be)");
    return {sums.string(), listed->second.first, listed->second.second};
  }
  return {};
}

void check_sha256(const std::string& file, std::string_view bytes, const ListedDigest& listed) {
  if (!listed.sums.empty()) check_digest(file, sha256_hex(bytes), listed);
}

std::string check_listed_sha256(const std::string& file, const std::string& top) {
  const ListedDigest listed = Sha256Sums(top).find(file);
  if (!listed.sums.empty()) check_digest(file, sha256_file_hex(file), listed);
  return listed.sums;
}

}  // namespace memgrad
