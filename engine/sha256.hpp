// SHA-256 (FIPS 180-4), to check data files against the SHA256SUMS.txt of their folder
// (engine/checksums.hpp). Written here rather than taken from a library: it is 100 lines, and the
// data folders only need it to say which file differs.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace memgrad {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  // The digest of everything passed to update; the object must not be updated afterwards.
  std::array<uint8_t, 32> finish();

 private:
  void compress(const uint8_t* block);  // one 64-byte block into state_
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lower-case hex of a digest.
std::string to_hex(const std::array<uint8_t, 32>& digest);
// sha256 of a string, as hex.
std::string sha256_hex(std::string_view bytes);
// sha256 of a file's bytes, as hex, read in 1 MiB pieces; an Error naming the file when it cannot
// be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace memgrad
