// Checking a data file against the SHA256SUMS.txt of its data folder. The folders under
// ../shared/data carry one in sha256sum's format: "<64 hex digits>  <path>" per line, the path
// relative to the folder ("./" allowed, "*" before it for sha256sum's binary mode). A loader
// checks each file it reads, so a corrupted, truncated or edited copy is named instead of trained
// on. Only the files actually read are hashed.
#pragma once
#include <string>

namespace memgrad {

// Looks for SHA256SUMS.txt in the folder of `file`, then in each folder above it up to and
// including `top` (only the file's own folder when it is not under `top`); the first one found
// must list the file with its SHA-256. Returns that SHA256SUMS.txt's path, or "" when there is
// none (nothing to check). Throws an Error naming the file and the SHA256SUMS.txt line when the
// digest differs, when the file is not listed, or when a line of SHA256SUMS.txt is malformed.
std::string check_listed_sha256(const std::string& file, const std::string& top);

}  // namespace memgrad
