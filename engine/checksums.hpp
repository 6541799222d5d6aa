// Checking a data file against the SHA256SUMS.txt of its data folder. The folders under
// ../shared/data carry one in sha256sum's format: "<64 hex digits>  <path>" per line, the path
// relative to the folder ("./" allowed, "*" before it for sha256sum's binary mode). A loader
// checks each file it reads, so a corrupted, truncated or edited copy is named instead of trained
// on. Only the files actually read are hashed.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace memgrad {

// Where a file's digest is listed: the SHA256SUMS.txt (empty when none governs the file), the
// lowercase hex digest and its line.
struct ListedDigest {
  std::string sums, digest;
  size_t line = 0;
};

// The SHA256SUMS.txt files of one data folder, each read once: for loaders that check thousands
// of files (PhysioNet 2012's set-a holds 4,000 records). find() is check_listed_sha256's search
// and listing check without the hashing; check_sha256() compares bytes already read.
class Sha256Sums {
 public:
  explicit Sha256Sums(std::string top) : top_(std::move(top)) {}
  // The SHA256SUMS.txt governing `file` and its line for it; sums "" when there is none. Throws an
  // Error when the file is not listed or a line of SHA256SUMS.txt is malformed.
  ListedDigest find(const std::string& file);

 private:
  std::string top_;
  // Each SHA256SUMS.txt read so far: its entries (normalised relative path -> digest, line).
  std::map<std::string, std::map<std::string, std::pair<std::string, size_t>>> parsed_;
};

// Throws an Error naming `file` and the SHA256SUMS.txt line unless sha256(bytes) is the listed
// digest (nothing to check when listed.sums is empty).
void check_sha256(const std::string& file, std::string_view bytes, const ListedDigest& listed);

// Looks for SHA256SUMS.txt in the folder of `file`, then in each folder above it up to and
// including `top` (only the file's own folder when it is not under `top`); the first one found
// must list the file with its SHA-256. Returns that SHA256SUMS.txt's path, or "" when there is
// none (nothing to check). Throws an Error naming the file and the SHA256SUMS.txt line when the
// digest differs, when the file is not listed, or when a line of SHA256SUMS.txt is malformed.
std::string check_listed_sha256(const std::string& file, const std::string& top);

}  // namespace memgrad
