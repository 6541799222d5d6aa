// libFuzzer target: the .tar.gz reader of data sets distributed as archives (tasks/tar_gz.hpp,
// PhysioNet 2012's set-b.tar.gz). Each input is read as a gzip file (gunzip_file, then parse_tar
// of what it inflates to) and as an uncompressed tar stream (parse_tar), so that the tar parser
// is reached without valid gzip. Bad input must be a memgrad::Error.
#include "engine/error.hpp"
#include "tasks/tar_gz.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace memgrad;

namespace {

void read_every_file(const TarArchive& tar) {
  size_t bytes = 0;
  for (const TarArchive::File& f : tar.files) {
    const std::string_view d = tar.data(f);
    for (const char c : d) bytes += static_cast<unsigned char>(c);  // reads each byte (ASan)
  }
  if (bytes == size_t(-1)) std::abort();  // keeps the loop
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = fuzz::as_text(data, size);
  try {
    read_every_file(read_tar_gz(fuzz::write_file("set-b.tar.gz", bytes)));
  } catch (const Error&) {
  }
  try {
    read_every_file(parse_tar(std::string(bytes), "set-b.tar"));
  } catch (const Error&) {
  }
  return 0;
}
