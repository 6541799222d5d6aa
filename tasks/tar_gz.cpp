// gzip (through zlib) and ustar reading (see tar_gz.hpp).
#include "tasks/tar_gz.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>

#include "engine/error.hpp"
#include "engine/quote.hpp"

namespace memgrad {
namespace {

constexpr size_t kBlock = 512;

std::string read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  MG_CHECK(in.good(), path, ": cannot open (missing or unreadable file)");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  MG_CHECK(!in.bad(), path, ": read error");
  return bytes;
}

// A NUL-terminated (or full-width) text field of a tar header.
std::string field_text(const char* p, size_t width) {
  size_t n = 0;
  while (n < width && p[n] != '\0') ++n;
  return std::string(p, n);
}

// An octal number field (spaces and NULs around the digits allowed); -1 when malformed.
int64_t field_octal(const char* p, size_t width) {
  size_t i = 0;
  while (i < width && (p[i] == ' ' || p[i] == '\0')) ++i;
  int64_t v = 0;
  size_t digits = 0;
  for (; i < width && p[i] >= '0' && p[i] <= '7'; ++i, ++digits) {
    if (v > (INT64_MAX >> 3)) return -1;
    v = v * 8 + (p[i] - '0');
  }
  for (; i < width; ++i)
    if (p[i] != ' ' && p[i] != '\0') return -1;
  return digits == 0 ? -1 : v;
}

bool all_zero(const char* p) {
  return std::all_of(p, p + kBlock, [](char c) { return c == '\0'; });
}

}  // namespace

std::string gunzip_file(const std::string& path) {
  const std::string in = read_binary(path);
  MG_CHECK(in.size() >= 2 && uint8_t(in[0]) == 0x1f && uint8_t(in[1]) == 0x8b, path,
           ": not a gzip file (it does not start with the gzip magic bytes 1f 8b)");
  z_stream zs{};
  // 16 + MAX_WBITS: a gzip stream (header and CRC-32 trailer), not raw deflate or zlib.
  MG_CHECK(inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK, path, ": zlib could not start inflating");
  std::string out;
  out.resize(std::max<size_t>(in.size() * 4, 1 << 16));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = uInt(in.size());
  size_t produced = 0;
  int rc = Z_OK;
  while (true) {
    if (produced == out.size()) out.resize(out.size() * 2);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = uInt(std::min<size_t>(out.size() - produced, UINT32_MAX));
    const uInt before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      // Another gzip member follows (concatenated .gz files are one stream).
      const size_t consumed = in.size() - zs.avail_in;
      if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      inflateEnd(&zs);
      fail(path, ": ", zs.avail_in, " bytes of trailing garbage after the gzip stream (at byte ",
           consumed, ")");
    }
    if (rc == Z_OK) continue;
    const std::string msg = zs.msg ? zs.msg : "error " + std::to_string(rc);
    const size_t at = in.size() - zs.avail_in;
    inflateEnd(&zs);
    if (rc == Z_BUF_ERROR && zs.avail_in == 0)
      fail(path, ": truncated gzip stream (the data ends at byte ", in.size(),
           " before the end of the compressed stream)");
    fail(path, ": corrupt gzip data near compressed byte ", at, " (zlib: ", msg, ")");
  }
  inflateEnd(&zs);
  out.resize(produced);
  return out;
}

TarArchive parse_tar(std::string bytes, const std::string& path) {
  TarArchive ar;
  ar.path = path;
  ar.bytes = std::move(bytes);
  const std::string& b = ar.bytes;
  std::string long_name;  // from a GNU 'L' entry, for the next entry
  size_t pos = 0;
  for (int64_t index = 0; pos + kBlock <= b.size(); ++index) {
    const char* h = b.data() + pos;
    if (all_zero(h)) break;  // end-of-archive marker
    std::string name = field_text(h + 0, 100);
    const std::string magic = field_text(h + 257, 6);
    if (magic.rfind("ustar", 0) == 0) {
      const std::string prefix = field_text(h + 345, 155);
      if (!prefix.empty() && magic == "ustar") name = prefix + "/" + name;
    }
    auto bad = [&](const auto&... parts) {
      fail(path, ": tar entry ", index, " (", quote(name), ") at byte ", pos, ": ", parts...);
    };
    // Checksum: the sum of the header's bytes (unsigned) with the checksum field read as spaces.
    const int64_t want = field_octal(h + 148, 8);
    int64_t sum = 0;
    for (size_t i = 0; i < kBlock; ++i)
      sum += (i >= 148 && i < 156) ? ' ' : int64_t(static_cast<unsigned char>(h[i]));
    if (want < 0 || want != sum)
      bad("header checksum mismatch (stored ", field_text(h + 148, 8), ", computed ", sum,
          "): not a tar archive, or a corrupt one");
    const int64_t size = field_octal(h + 124, 12);
    if (size < 0) bad("size field '", field_text(h + 124, 12), "' is not an octal number");
    const size_t data_at = pos + kBlock;
    if (uint64_t(size) > b.size() - data_at)
      bad("its ", size, " bytes of data run past the end of the archive (", b.size() - data_at,
          " bytes left): truncated");
    const char type = h[156];
    if (type == 'L') {
      long_name = field_text(b.data() + data_at, size_t(size));
    } else {
      if (!long_name.empty()) name = std::move(long_name);
      long_name.clear();
      if (type == '0' || type == '\0') ar.files.push_back({name, data_at, size_t(size)});
    }
    pos = data_at + (size_t(size) + kBlock - 1) / kBlock * kBlock;
  }
  return ar;
}

TarArchive read_tar_gz(const std::string& path) { return parse_tar(gunzip_file(path), path); }

}  // namespace memgrad
