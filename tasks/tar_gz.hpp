// Reading a gzip-compressed ustar archive (a .tar.gz) into memory, so that a data set distributed
// as one (PhysioNet 2012's set-b.tar.gz) is read as it is, without an unpacking step.
//
// gzip: zlib's inflate in gzip mode (RFC 1952; its CRC-32 and length trailer are checked by zlib);
// several concatenated members (as `cat a.gz b.gz` makes) are read one after the other.
// tar: POSIX ustar and the GNU tar format (512-byte headers; name = prefix "/" name; size in octal;
// header checksum checked). Regular files ('0' or NUL type) are kept; directories, links and pax
// headers are skipped; a GNU long name ('L') names the entry after it. The archive ends at the
// first all-zero header block or at the end of the data.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace memgrad {

struct TarArchive {
  struct File {
    std::string name;  // path inside the archive, e.g. "set-b/142675.txt"
    size_t offset = 0, size = 0;
  };
  std::string path;         // the archive file, for messages
  std::string bytes;        // the whole uncompressed tar stream
  std::vector<File> files;  // regular files, in archive order
  std::string_view data(const File& f) const { return {bytes.data() + f.offset, f.size}; }
};

// The uncompressed contents of a gzip file. Throws memgrad::Error "path: ..." for a missing or
// unreadable file, a file that does not start with the gzip magic bytes, corrupt compressed data
// (zlib's message and the compressed byte offset), and a stream that ends early.
std::string gunzip_file(const std::string& path);

// The tar archive in `bytes` (already uncompressed). Throws memgrad::Error "path: tar entry N
// ('name'): ..." for a header whose checksum does not match, a size field that is not octal, and
// an entry whose data runs past the end of the stream.
TarArchive parse_tar(std::string bytes, const std::string& path);

// gunzip_file + parse_tar.
TarArchive read_tar_gz(const std::string& path);

}  // namespace memgrad
